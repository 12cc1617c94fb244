package diagnose

import (
	"fmt"
	"math"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
)

// progressState is where a controller says its workload stands, in the terms of
// sigs.k8s.io/cli-utils/pkg/kstatus/status: done (Current), still converging (InProgress), or
// given up (Failed).
type progressState int

const (
	progressCurrent progressState = iota
	progressInProgress
	progressFailed
)

// controllerProgress is one reading of a workload's status by the rules kstatus applies
// (pkg/kstatus/status/core.go and generic.go at cli-utils v0.37.2), on the typed object, so
// that a verdict from the controller's word alone agrees with the library Flux, kpt and
// cli-utils use. TestControllerVerdictsAgreeWithKstatus holds the two together and lists where
// the engine says more.
type controllerProgress struct {
	state progressState
	// reason is kstatus's reason (LessReady, LatestGenerationNotObserved, ...), message the
	// counts behind it.
	reason, message string
	// unobserved: the controller has not yet written status for the current generation, so
	// its counts and conditions describe an older spec, or none.
	unobserved bool
}

func inProgress(reason, format string, args ...any) controllerProgress {
	return controllerProgress{state: progressInProgress, reason: reason, message: fmt.Sprintf(format, args...)}
}

// readControllerProgress reads the workload's status as kstatus does. The typed status cannot
// tell a field left out from one written as 0; the API server omits only the omitempty ones,
// so a 0 reads as kstatus reads the absent field wherever the two differ (observedGeneration,
// generation).
func readControllerProgress(w *workload) controllerProgress {
	k := kinds.Of(w.Object)
	if k == nil {
		return controllerProgress{}
	}
	generation, observed, ok := k.Generation(w.Object)
	if !ok {
		return controllerProgress{}
	}
	if generation != 0 && observed != 0 && generation != observed {
		p := inProgress("LatestGenerationNotObserved", "generation %d not yet observed (observedGeneration %d)", generation, observed)
		p.unobserved = true
		return p
	}
	switch o := w.Object.(type) {
	case *appsv1.Deployment:
		return deploymentProgress(o, w.controller(), w.cls.rollout)
	case *appsv1.StatefulSet:
		return statefulSetProgress(o)
	case *appsv1.DaemonSet:
		return daemonSetProgress(o)
	case *appsv1.ReplicaSet:
		return replicaSetProgress(o, w.controller())
	}
	return controllerProgress{}
}

// deploymentProgress is kstatus's deploymentConditions. One addition: a Progressing condition
// that still says the rollout moves, last written longer than the deadline before the
// reference time, is Failed too (readRollout): the controller that would have written
// ProgressDeadlineExceeded stopped writing. ctl is o's controller record.
func deploymentProgress(o *appsv1.Deployment, ctl *facts.Controller, r rollout) controllerProgress {
	st := &o.Status
	// Without a deadline the controller writes no Progressing verdict to wait for
	// (pkg/controller/deployment/util HasProgressDeadline).
	complete := o.Spec.ProgressDeadlineSeconds == nil || *o.Spec.ProgressDeadlineSeconds == math.MaxInt32
	available := false
	for ix := range ctl.Conditions {
		c := &ctl.Conditions[ix]
		switch appsv1.DeploymentConditionType(c.Type) {
		case appsv1.DeploymentProgressing:
			if c.Reason == reasonTimedOut {
				return controllerProgress{state: progressFailed, reason: c.Reason, message: c.Message}
			}
			if c.Status == string(corev1.ConditionTrue) && c.Reason == reasonNewRSAvailable {
				complete = true
			}
		case appsv1.DeploymentAvailable:
			available = available || c.Status == string(corev1.ConditionTrue)
		}
	}
	if r.TimedOut {
		return controllerProgress{state: progressFailed, reason: r.Reason, message: r.Message}
	}
	spec := replicasOrOne(o.Spec.Replicas)
	switch {
	case spec > st.Replicas:
		return inProgress("LessReplicas", "%d of %d copies exist", st.Replicas, spec)
	case spec > st.UpdatedReplicas:
		return inProgress("LessUpdated", "%d of %d copies updated", st.UpdatedReplicas, spec)
	case st.Replicas > spec:
		return inProgress("ExtraPods", "%d copies beyond the %d declared await termination", st.Replicas-spec, spec)
	case st.UpdatedReplicas > st.AvailableReplicas:
		return inProgress("LessAvailable", "%d of %d updated copies available", st.AvailableReplicas, st.UpdatedReplicas)
	case spec > st.ReadyReplicas:
		return inProgress("LessReady", "%d of %d copies Ready", st.ReadyReplicas, spec)
	case !complete:
		return inProgress("ReplicaSetNotAvailable", "the controller has not yet written Progressing=True NewReplicaSetAvailable")
	case !available:
		return inProgress("DeploymentNotAvailable", "the controller has not yet written Available=True")
	}
	return controllerProgress{state: progressCurrent}
}

// statefulSetProgress is kstatus's stsConditions, but for OnDelete: kstatus calls every
// OnDelete StatefulSet Current, the engine still counts its copies (the revision checks stay
// skipped: under OnDelete old copies wait for someone to delete them).
func statefulSetProgress(o *appsv1.StatefulSet) controllerProgress {
	st := &o.Status
	spec := replicasOrOne(o.Spec.Replicas)
	switch {
	case spec > st.Replicas:
		return inProgress("LessReplicas", "%d of %d copies exist", st.Replicas, spec)
	case spec > st.ReadyReplicas:
		return inProgress("LessReady", "%d of %d copies Ready", st.ReadyReplicas, spec)
	case st.Replicas > spec:
		return inProgress("ExtraPods", "%d copies beyond the %d declared await termination", st.Replicas-spec, spec)
	case o.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType:
		return controllerProgress{state: progressCurrent}
	}
	if ru := o.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		if want := spec - *ru.Partition; st.UpdatedReplicas < want {
			return inProgress("PartitionRollout", "%d of the %d copies above the partition updated", st.UpdatedReplicas, want)
		}
		return controllerProgress{state: progressCurrent}
	}
	switch {
	case spec > st.CurrentReplicas:
		return inProgress("LessCurrent", "%d of %d copies at the current revision", st.CurrentReplicas, spec)
	case st.CurrentRevision != st.UpdateRevision:
		return inProgress("RevisionMismatch", "currentRevision %s is not yet updateRevision %s", st.CurrentRevision, st.UpdateRevision)
	}
	return controllerProgress{state: progressCurrent}
}

// daemonSetProgress is kstatus's daemonsetConditions: a DaemonSet whose controller has not
// written status (no generation or observedGeneration) is in progress, whatever its counts.
func daemonSetProgress(o *appsv1.DaemonSet) controllerProgress {
	st := &o.Status
	if o.Generation == 0 || st.ObservedGeneration == 0 {
		return controllerProgress{
			state: progressInProgress, reason: "NoObservedGeneration",
			message: "the DaemonSet controller has not written status yet", unobserved: true,
		}
	}
	want := st.DesiredNumberScheduled
	switch {
	case want > st.CurrentNumberScheduled:
		return inProgress("LessCurrent", "%d of %d nodes run a copy", st.CurrentNumberScheduled, want)
	case want > st.UpdatedNumberScheduled:
		return inProgress("LessUpdated", "%d of %d nodes run the current template", st.UpdatedNumberScheduled, want)
	case want > st.NumberAvailable:
		return inProgress("LessAvailable", "%d of %d copies available", st.NumberAvailable, want)
	case want > st.NumberReady:
		return inProgress("LessReady", "%d of %d copies Ready", st.NumberReady, want)
	}
	return controllerProgress{state: progressCurrent}
}

// replicaSetProgress is kstatus's replicasetConditions. kstatus reads ReplicaFailure as in
// progress; classifyByController calls it a failure when copies are missing. ctl is o's
// controller record.
func replicaSetProgress(o *appsv1.ReplicaSet, ctl *facts.Controller) controllerProgress {
	st := &o.Status
	for ix := range ctl.Conditions {
		c := &ctl.Conditions[ix]
		if c.Type == string(appsv1.ReplicaSetReplicaFailure) && c.Status == string(corev1.ConditionTrue) {
			msg := joinReason(c.Reason, c.Message)
			if msg == "" {
				msg = "no reason given"
			}
			return inProgress("ReplicaFailure", "%s", msg)
		}
	}
	spec := replicasOrOne(o.Spec.Replicas)
	switch {
	case spec > st.FullyLabeledReplicas:
		return inProgress("LessLabelled", "%d of %d copies carry every template label", st.FullyLabeledReplicas, spec)
	case spec > st.AvailableReplicas:
		return inProgress("LessAvailable", "%d of %d copies available", st.AvailableReplicas, spec)
	case spec > st.ReadyReplicas:
		return inProgress("LessReady", "%d of %d copies Ready", st.ReadyReplicas, spec)
	case st.Replicas > spec:
		return inProgress("ExtraPods", "%d copies beyond the %d declared await termination", st.Replicas-spec, spec)
	}
	return controllerProgress{state: progressCurrent}
}

package rollout

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Target names the workload a gate follows. Kind is canonical: Deployment, StatefulSet or
// DaemonSet.
type Target struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Ref is the workload as kubectl names it, e.g. deployment/api.
func (t Target) Ref() string { return lowerKind(t.Kind) + "/" + t.Name }

func lowerKind(k string) string {
	switch k {
	case "Deployment":
		return "deployment"
	case "StatefulSet":
		return "statefulset"
	case "DaemonSet":
		return "daemonset"
	}
	return k
}

// Status is the controller's account of the rollout, read as kubectl's rollout status reads it
// (k8s.io/kubectl pkg/polymorphichelpers/rollout_status.go).
type Status struct {
	// UID is the object's: a workload deleted and created again under the same name is another
	// object, whose rollout is not the one followed.
	UID                types.UID `json:"-"`
	Generation         int64     `json:"generation"`
	ObservedGeneration int64     `json:"observedGeneration"`
	// Declared is spec.replicas (a DaemonSet's desiredNumberScheduled); Replicas counts copies of
	// every revision, Updated those of the new one, Available those available.
	Declared  int32 `json:"declared"`
	Replicas  int32 `json:"replicas"`
	Updated   int32 `json:"updated"`
	Available int32 `json:"available"`
	// Done: the controller has observed the spec and every declared copy is updated and
	// available, with no old copy left.
	Done bool `json:"done"`
	// DeadlineExceeded: the Deployment controller gave up (ProgressDeadlineExceeded).
	DeadlineExceeded bool `json:"deadlineExceeded"`
	// Message says what the rollout waits for, in kubectl's words.
	Message string `json:"message"`
	// MinReadySeconds and Template are the spec's, for the default settle period.
	MinReadySeconds int32                   `json:"-"`
	Template        *corev1.PodTemplateSpec `json:"-"`
}

// timedOutReason is the Deployment controller's Progressing reason once the deadline passed
// (pkg/controller/deployment/util TimedOutReason).
const timedOutReason = "ProgressDeadlineExceeded"

// ReadStatus finds the target in the snapshot and reads its controller status; found is false
// when the snapshot holds no such workload.
func ReadStatus(s *snapshot.Snapshot, t Target) (st Status, found bool, err error) {
	switch t.Kind {
	case "Deployment":
		for _, d := range s.Deployments {
			if d.Namespace == t.Namespace && d.Name == t.Name {
				return deploymentStatus(d), true, nil
			}
		}
	case "StatefulSet":
		for _, o := range s.StatefulSets {
			if o.Namespace == t.Namespace && o.Name == t.Name {
				st, err := statefulSetStatus(o)
				return st, true, err
			}
		}
	case "DaemonSet":
		for _, o := range s.DaemonSets {
			if o.Namespace == t.Namespace && o.Name == t.Name {
				st, err := daemonSetStatus(o)
				return st, true, err
			}
		}
	default:
		return Status{}, false, fmt.Errorf("a %s has no rollout to follow; use a deployment, statefulset or daemonset", t.Kind)
	}
	return Status{}, false, nil
}

func deploymentStatus(d *appsv1.Deployment) Status {
	st := Status{
		UID: d.UID, Generation: d.Generation, ObservedGeneration: d.Status.ObservedGeneration, Declared: 1,
		Replicas: d.Status.Replicas, Updated: d.Status.UpdatedReplicas, Available: d.Status.AvailableReplicas,
		MinReadySeconds: d.Spec.MinReadySeconds, Template: &d.Spec.Template,
	}
	if d.Spec.Replicas != nil {
		st.Declared = *d.Spec.Replicas
	}
	if d.Generation > d.Status.ObservedGeneration {
		st.Message = "waiting for the deployment spec update to be observed"
		return st
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == timedOutReason {
			st.DeadlineExceeded = true
			st.Message = fmt.Sprintf("deployment %q exceeded its progress deadline", d.Name)
			return st
		}
	}
	switch {
	case st.Updated < st.Declared:
		st.Message = fmt.Sprintf("%d of %d new replicas updated", st.Updated, st.Declared)
	case st.Replicas > st.Updated:
		st.Message = fmt.Sprintf("%d old replicas pending termination", st.Replicas-st.Updated)
	case st.Available < st.Updated:
		st.Message = fmt.Sprintf("%d of %d updated replicas available", st.Available, st.Updated)
	default:
		st.Done = true
		st.Message = fmt.Sprintf("%d of %d updated replicas available", st.Available, st.Updated)
	}
	return st
}

func statefulSetStatus(o *appsv1.StatefulSet) (Status, error) {
	st := Status{
		UID: o.UID, Generation: o.Generation, ObservedGeneration: o.Status.ObservedGeneration, Declared: 1,
		Replicas: o.Status.Replicas, Updated: o.Status.UpdatedReplicas, Available: o.Status.AvailableReplicas,
		MinReadySeconds: o.Spec.MinReadySeconds, Template: &o.Spec.Template,
	}
	if o.Spec.Replicas != nil {
		st.Declared = *o.Spec.Replicas
	}
	if o.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return st, fmt.Errorf("statefulset %q updates OnDelete: nothing rolls until pods are deleted; follow only %s", o.Name, appsv1.RollingUpdateStatefulSetStrategyType)
	}
	if o.Status.ObservedGeneration == 0 || o.Generation > o.Status.ObservedGeneration {
		st.Message = "waiting for the statefulset spec update to be observed"
		return st, nil
	}
	want := st.Declared
	if ru := o.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		want = max(0, st.Declared-*ru.Partition)
	}
	switch {
	case o.Status.ReadyReplicas < st.Declared:
		st.Message = fmt.Sprintf("%d of %d replicas ready", o.Status.ReadyReplicas, st.Declared)
	case st.Updated < want:
		st.Message = fmt.Sprintf("%d of %d new replicas updated", st.Updated, want)
	case want == st.Declared && o.Status.UpdateRevision != o.Status.CurrentRevision:
		st.Message = fmt.Sprintf("%d replicas at revision %s, the update is not complete", st.Updated, o.Status.UpdateRevision)
	case st.Available < st.Declared:
		st.Message = fmt.Sprintf("%d of %d replicas available", st.Available, st.Declared)
	default:
		st.Done = true
		st.Message = fmt.Sprintf("%d of %d updated replicas available", st.Updated, st.Declared)
	}
	return st, nil
}

func daemonSetStatus(o *appsv1.DaemonSet) (Status, error) {
	st := Status{
		UID: o.UID, Generation: o.Generation, ObservedGeneration: o.Status.ObservedGeneration,
		Declared: o.Status.DesiredNumberScheduled, Replicas: o.Status.CurrentNumberScheduled,
		Updated: o.Status.UpdatedNumberScheduled, Available: o.Status.NumberAvailable,
		MinReadySeconds: o.Spec.MinReadySeconds, Template: &o.Spec.Template,
	}
	if o.Spec.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType {
		return st, fmt.Errorf("daemonset %q updates OnDelete: nothing rolls until pods are deleted; follow only %s", o.Name, appsv1.RollingUpdateDaemonSetStrategyType)
	}
	if o.Generation > o.Status.ObservedGeneration {
		st.Message = "waiting for the daemonset spec update to be observed"
		return st, nil
	}
	switch {
	case st.Updated < st.Declared:
		st.Message = fmt.Sprintf("%d of %d new pods updated", st.Updated, st.Declared)
	case st.Available < st.Declared:
		st.Message = fmt.Sprintf("%d of %d updated pods available", st.Available, st.Declared)
	default:
		st.Done = true
		st.Message = fmt.Sprintf("%d of %d updated pods available", st.Available, st.Declared)
	}
	return st, nil
}

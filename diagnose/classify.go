package diagnose

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// classState is the classifier's working state for one workload.
type classState struct {
	history
	serviceKnown bool
	// unexposedService names a Service whose endpoints are on ports no container exposes.
	unexposedService string
	copies           []*copyFacts
	rollout          rollout
	// failedCreate is the controller's report that it could not create copies (ReplicaFailure or
	// a FailedCreate event), with its message.
	failedCreate string
	// why is the one-line reason for the shape, used by the headline.
	why string
	// starting says what the current revision's copies still on their way up are doing (an
	// image pull under way), when some are.
	starting string
	// failingWhileProgressing is a failure signal on copies of a rollout still called
	// progressing (some new copy is Ready, or none has yet run past its probes): the suspects
	// are listed, at low confidence, so the row says where to look if the deadline passes.
	failingWhileProgressing string
	// ctrl is the controller's own report of its copies; sight how much of them the snapshot
	// shows.
	ctrl  controllerStatus
	sight podSight
	// blind: the verdict rests on a controller's counts of copies that exist and are not
	// Ready, which cannot tell a copy that never started from one that runs unready.
	blind bool
	// nowhere says why a DaemonSet may run on no node; empty when it may run somewhere.
	nowhere string
	// batch is what a Job or CronJob showed; nil for the other kinds.
	batch *batchFacts
}

// rollout is what the controller says about an update under way.
type rollout struct {
	// InProgress: a rollout is under way and inside its deadline.
	InProgress bool
	// TimedOut: ProgressDeadlineExceeded, or no progress for longer than the deadline.
	TimedOut bool
	// Reason and Message of the Progressing condition, when there is one, and when it was last
	// written.
	Reason, Message string
	Since           time.Time
}

// Reasons of the Deployment Progressing condition (pkg/controller/deployment/util).
const (
	reasonReplicaSetUpdated    = "ReplicaSetUpdated"
	reasonNewReplicaSetCreated = "NewReplicaSetCreated"
	reasonFoundNewReplicaSet   = "FoundNewReplicaSet"
	reasonNewRSAvailable       = "NewReplicaSetAvailable"
	reasonTimedOut             = "ProgressDeadlineExceeded"
	reasonResumed              = "DeploymentResumed"
)

func readRollout(w *workload, ref time.Time) rollout {
	var r rollout
	switch o := w.Object.(type) {
	case *appsv1.Deployment:
		if o.Generation > o.Status.ObservedGeneration {
			r.InProgress = true
			r.Reason, r.Message = "ObservedGenerationBehind", fmt.Sprintf("generation %d not yet observed (observedGeneration %d)", o.Generation, o.Status.ObservedGeneration)
		}
		for ix := range o.Status.Conditions {
			c := &o.Status.Conditions[ix]
			if c.Type != appsv1.DeploymentProgressing {
				continue
			}
			r.Reason, r.Message = c.Reason, c.Message
			r.Since = c.LastUpdateTime.Time
			switch c.Reason {
			case reasonTimedOut:
				r.TimedOut, r.InProgress = true, false
			case reasonReplicaSetUpdated, reasonNewReplicaSetCreated, reasonFoundNewReplicaSet, reasonResumed:
				// A controller that stopped writing cannot time the rollout out; the dump can.
				// A condition written without a time (by hand, by another writer) cannot be timed.
				if !c.LastUpdateTime.IsZero() && ref.Sub(c.LastUpdateTime.Time) > progressDeadline(o) && o.Spec.ProgressDeadlineSeconds != nil {
					r.TimedOut = true
				} else {
					r.InProgress = c.Status == corev1.ConditionTrue
				}
			}
		}
	case *appsv1.StatefulSet:
		// Under OnDelete the controller waits for someone to delete pods: nothing is rolling.
		rolling := o.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType
		if o.Generation > o.Status.ObservedGeneration ||
			rolling && o.Status.UpdateRevision != "" && o.Status.CurrentRevision != o.Status.UpdateRevision {
			r.InProgress = true
			r.Reason = "RollingUpdate"
			r.Message = fmt.Sprintf("%d of %d copies updated to %s", o.Status.UpdatedReplicas, w.Declared, o.Status.UpdateRevision)
		}
	case *appsv1.DaemonSet:
		rolling := o.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType
		if o.Generation > o.Status.ObservedGeneration || rolling && o.Status.UpdatedNumberScheduled < o.Status.DesiredNumberScheduled {
			r.InProgress = true
			r.Reason = "RollingUpdate"
			r.Message = fmt.Sprintf("%d of %d nodes run the current template", o.Status.UpdatedNumberScheduled, o.Status.DesiredNumberScheduled)
		}
	}
	if r.InProgress && w.Kind != "Deployment" {
		// No deadline on these kinds: a rollout whose newest copy is older than the Deployment
		// default has stopped progressing.
		for _, f := range w.cls.copies {
			if f.Current && f.Active && f.Age > defaultProgressDeadline && !f.Ready {
				r.InProgress, r.TimedOut = false, true
			}
		}
	}
	return r
}

// readFailedCreate finds the controller saying it cannot create copies: the ReplicaFailure
// condition (Deployment, ReplicaSet) first, a FailedCreate event as support.
func readFailedCreate(w *workload) string {
	obs := w.observe()
	var cur string
	if w.cls.Current != nil && w.cls.Current.ReplicaSet != nil {
		cur = w.cls.Current.ReplicaSet.Name
	}
	// The workload's own conditions come first in the list, then its ReplicaSets'.
	for k := obs.ctrl.from; k < obs.ctrl.to; k++ {
		c := &obs.list[k]
		if c.Status != string(corev1.ConditionTrue) {
			continue
		}
		switch {
		case c.Object.Kind == "Deployment" && c.Type() == string(appsv1.DeploymentReplicaFailure),
			c.Object.Kind == "ReplicaSet" && c.Type() == string(appsv1.ReplicaSetReplicaFailure) && (w.cls.Current == nil || c.Object.Name == cur):
			return replicaFailure(c.Reason, c.Text)
		}
	}
	// Only the controller of the current revision: an old ReplicaSet's FailedCreate is history.
	evs := obs.eventList()
	for i := len(evs) - 1; i >= 0; i-- {
		e := &evs[i]
		if e.Reason != "FailedCreate" {
			continue
		}
		if e.Object.Kind == w.Kind && e.Object.Name == w.Name || e.Object.Kind == "ReplicaSet" && cur != "" && e.Object.Name == cur {
			return e.Text
		}
	}
	return ""
}

// replicaFailure words a ReplicaFailure condition. The condition is the controller's report
// even when it carries no message (a controller other than kube-controller-manager, or a
// status written by hand), so it never reads as no failure.
func replicaFailure(reason, message string) string {
	if message != "" {
		return message
	}
	if reason == "" {
		reason = "unknown reason"
	}
	return "ReplicaFailure (" + reason + ")"
}

// classify decides the shape. Pod status is the verdict; controller conditions and revision
// history place it in time; events only support. The current revision's copies decide, so a
// stuck rollout takes the failing revision's shape while its counts say who serves.
func classify(w *workload, ref time.Time) Shape {
	st := &w.cls
	c := w.Counts
	if st.nowhere != "" {
		st.why = st.nowhere
		return ShapeNeverStarts
	}
	if isBatch(w.Kind) {
		return classifyBatch(w, ref)
	}
	if st.sight.byController() {
		return classifyByController(w, ref)
	}
	if w.Declared == 0 && c.Existing == 0 {
		st.why = "scaled to 0"
		return ShapeHealthy
	}
	var never, dies, idle, warming []*copyFacts
	for _, f := range st.copies {
		if !f.Active || !f.Current {
			continue
		}
		if f.Starting != "" && st.starting == "" {
			st.starting = "copy " + f.Pod.Name + " is " + f.Starting
		}
		switch {
		case f.NeverStarts != "":
			never = append(never, f)
		case f.Dies != "":
			dies = append(dies, f)
		case f.Running && !f.Serving:
			idle = append(idle, f)
			if warmingUp(f, ref) {
				warming = append(warming, f)
			}
		}
	}
	switch {
	case len(never) > 0:
		st.why = fmt.Sprintf("%s on %s", never[0].NeverStarts, copiesPhrase(len(never), currentActive(st.copies)))
		return ShapeNeverStarts
	case st.failedCreate != "" && c.Existing < w.Declared:
		st.why = "the controller cannot create copies: " + st.failedCreate
		return ShapeNeverStarts
	case len(dies) > 0:
		st.why = fmt.Sprintf("%s on %s", dies[0].Dies, copiesPhrase(len(dies), currentActive(st.copies)))
		if lt := dies[0].LastTerminated; lt != nil && lt.Reason != dies[0].Dies {
			st.why = fmt.Sprintf("%s (last: %s, exit code %d) on %s", dies[0].Dies, lt.Reason, lt.ExitCode, copiesPhrase(len(dies), currentActive(st.copies)))
		}
		return ShapeStartsAndDies
	}
	if why := churn(w, ref); why != "" {
		st.why = why
		return ShapeStartsAndDies
	}
	if st.starting != "" && !st.rollout.TimedOut && c.Serving < w.Declared && len(idle) == 0 {
		// A copy on its way up with no error, inside its deadline: whatever the controller
		// says, nothing has failed yet.
		st.why = "copies are still starting: " + st.starting
		return ShapeProgressing
	}
	// A rollout inside its deadline is progressing unless its new copies have visibly failed:
	// then it takes the failing revision's shape without waiting for the deadline.
	stalled := ""
	if st.rollout.InProgress && len(idle) > 0 {
		stalled = stalledRollout(w, ref, idle)
	}
	if st.rollout.InProgress && stalled == "" {
		st.why = "rollout under way inside its deadline"
		st.failingWhileProgressing = failureSignal(w, unserving(st.copies))
		return ShapeProgressing
	}
	if stalled != "" {
		st.why = stalled
		return ShapeLiveButIdle
	}
	if why := flickering(w, idle, ref); why != "" && !st.rollout.TimedOut {
		st.why = why
		return ShapeHealthy
	}
	// A stuck rollout takes the failing revision's shape even when old copies still cover the
	// declared count (maxUnavailable 0).
	stuckOnIdle := st.rollout.TimedOut && len(idle) > 0
	if c.Serving >= w.Declared && !stuckOnIdle {
		st.why = "every declared copy serves"
		return ShapeHealthy
	}
	if len(idle) > 0 {
		if len(warming) == len(idle) && !st.rollout.TimedOut {
			st.why = "copies started moments ago and are still warming up"
			st.failingWhileProgressing = failureSignal(w, idle)
			return ShapeProgressing
		}
		st.why = idleWhy(w, idle)
		return ShapeLiveButIdle
	}
	// Fewer copies than declared and nothing on them explains it (events may have expired).
	if c.Existing < w.Declared {
		st.why = fmt.Sprintf("%d of %d copies exist and no signal says why", c.Existing, w.Declared)
	} else {
		st.why = "copies do not serve and no signal says why"
	}
	return ShapeUnknown
}

// unserving returns the active copies of the current revision that do not serve.
func unserving(copies []*copyFacts) []*copyFacts {
	var out []*copyFacts
	for _, f := range copies {
		if f.Active && f.Current && !f.Serving {
			out = append(out, f)
		}
	}
	return out
}

func currentActive(copies []*copyFacts) int {
	n := 0
	for _, f := range copies {
		if f.Active && f.Current {
			n++
		}
	}
	return n
}

func copiesPhrase(n, of int) string {
	if n == of {
		switch n {
		case 1:
			return "its only copy"
		case 2:
			return "both copies"
		}
		return fmt.Sprintf("all %d copies", n)
	}
	return fmt.Sprintf("%d of %d copies", n, of)
}

func idleWhy(w *workload, idle []*copyFacts) string {
	ready := 0
	for _, f := range idle {
		if f.Ready {
			ready++
		}
	}
	if ready == len(idle) {
		if len(w.UnmatchedServices) > 0 {
			svc := w.UnmatchedServices[0]
			return fmt.Sprintf("copies are Ready but Service %s selects %s, which matches none of them", svc.Name, selectorString(svc.Spec.Selector))
		}
		if svc := w.cls.unexposedService; svc != "" {
			return fmt.Sprintf("copies are Ready but Service %s sends traffic to a port no container exposes", svc)
		}
		return "copies are Ready but no Service endpoint serves them"
	}
	return fmt.Sprintf("%s run and stay up but are not Ready", copiesPhrase(len(idle)-ready, currentActive(w.cls.copies)))
}

func selectorString(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	sortStrings(parts)
	return strings.Join(parts, ",")
}

// Churn: every copy is young while the revision is old and the controller keeps replacing them
// (copies evicted or failed, or more creations than declared copies).
const (
	churnYoung = 10 * time.Minute
	churnOld   = time.Hour
)

func churn(w *workload, ref time.Time) string {
	cur := w.cls.Current
	if cur == nil || w.Counts.Existing == 0 || ref.Sub(cur.Created) < churnOld {
		return ""
	}
	finished, evicted := 0, 0
	for _, f := range w.cls.copies {
		if f.Active && f.Age > churnYoung {
			return ""
		}
		if !f.Active {
			finished++
		}
		if f.Dies == reasonEvicted {
			evicted++
		}
	}
	var created int32
	evs := w.observe().eventList()
	for k := range evs {
		if evs[k].Reason == "SuccessfulCreate" {
			created += evs[k].Count
		}
	}
	if finished == 0 && created <= w.Declared {
		return ""
	}
	s := fmt.Sprintf("every copy is younger than %s while revision %d is %s old: the count keeps returning to target by replacing copies",
		humanDuration(churnYoung), cur.Number, humanDuration(ref.Sub(cur.Created)))
	if evicted > 0 {
		// Said by the kubelet, not guessed from ages: the replaced copies were evicted.
		s += fmt.Sprintf(" the kubelet evicted (%d in the snapshot)", evicted)
	}
	return s
}

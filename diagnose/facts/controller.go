package facts

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
)

// Controller is what a workload controller's status says of its progress, read once
// (ReadController): every reader of a Deployment's Available or Progressing, a ReplicaSet's
// ReplicaFailure or a Job's verdict reads this record, so two of them cannot derive one
// condition two ways. The counts (replicas, readyReplicas...) are the kind adapters' own
// (internal/kinds).
type Controller struct {
	// Conditions are the status's conditions, in the order the status lists them.
	Conditions []WorkloadCondition
	// Started is a Job's status.startTime; zero for the other kinds, and before the Job
	// controller writes one.
	Started time.Time
}

// WorkloadCondition is one status condition of a controller, whatever its kind's
// condition type.
type WorkloadCondition struct {
	Type, Status, Reason, Message string
	// Changed is its lastTransitionTime; Updated its lastUpdateTime, which only a
	// Deployment's conditions carry. Either is zero when the writer wrote none (an object
	// written by hand, another controller).
	Changed, Updated time.Time
}

// ReadController reads the status of obj, a workload kind's object (a Deployment,
// StatefulSet, DaemonSet, ReplicaSet, Job or CronJob); the zero Controller for any other.
func ReadController(obj any) Controller {
	var c Controller
	k := kinds.Of(obj)
	if k == nil {
		return c
	}
	if n := k.ConditionCount(obj); n > 0 {
		c.Conditions = make([]WorkloadCondition, n)
		for i := range c.Conditions {
			kc := k.Condition(obj, i)
			c.Conditions[i] = WorkloadCondition{
				Type: kc.Type, Status: kc.Status, Reason: kc.Reason, Message: kc.Message,
				Changed: kc.LastTransition, Updated: kc.LastUpdate,
			}
		}
	}
	if j, ok := obj.(*batchv1.Job); ok && j.Status.StartTime != nil {
		c.Started = j.Status.StartTime.Time
	}
	return c
}

// Finished is a Job's terminal condition, or nil while it runs: the first Complete or Failed
// that is True, else the last FailureTarget or SuccessCriteriaMet that is True, which the
// controller writes first, once the Job's pods are terminating.
func (c *Controller) Finished() *WorkloadCondition {
	var target *WorkloadCondition
	for i := range c.Conditions {
		cd := &c.Conditions[i]
		if cd.Status != string(corev1.ConditionTrue) {
			continue
		}
		switch batchv1.JobConditionType(cd.Type) {
		case batchv1.JobComplete, batchv1.JobFailed:
			return cd
		case batchv1.JobFailureTarget, batchv1.JobSuccessCriteriaMet:
			target = cd
		}
	}
	return target
}

// Succeeded reports whether a Job's terminal condition says it succeeded (Complete, or the
// SuccessCriteriaMet written before it).
func (c *Controller) Succeeded() bool {
	cd := c.Finished()
	return cd != nil && (cd.Type == string(batchv1.JobComplete) || cd.Type == string(batchv1.JobSuccessCriteriaMet))
}

// AppendController appends to list a ControllerCondition fact for each of c's conditions,
// pointing at obj: dated by its last transition, Since its last update.
func AppendController(list []Fact, c *Controller, obj *Ref) []Fact {
	for i := range c.Conditions {
		cd := &c.Conditions[i]
		list = append(list, Fact{
			Kind: ControllerCondition, Object: obj, Name: cd.Type, Status: cd.Status, Reason: cd.Reason, Text: cd.Message,
			At: cd.Changed, Since: cd.Updated,
		})
	}
	return list
}

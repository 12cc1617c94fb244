package kinds

import (
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Workload is one workload kind: the adapter every reader of a kind goes through. The
// functions take the kind's object (*appsv1.Deployment for Deployment) and are never nil.
type Workload struct {
	// Kind is the object kind ("Deployment"), GVK its group, version and kind, Resource the
	// plural resource name ("deployments").
	Kind     string
	GVK      schema.GroupVersionKind
	Resource string
	// ShortNames are the API server's short names of the resource, as discovery serves them
	// and kubectl accepts them (k8s.io/kubernetes pkg/registry/<group>/<kind>/storage,
	// ShortNames): none for a Job.
	ShortNames []string
	// ControlledBy names the workload kind whose controller makes objects of this kind
	// ("Deployment" for ReplicaSets, "CronJob" for Jobs), "" for none.
	ControlledBy string
	// TemplatePath is the field path of the pod template in the object (spec.template).
	TemplatePath *field.Path
	// Batch kinds run to completion (Jobs, CronJobs): their copies are runs, which the Job's
	// conditions and counts account for, not replicas a controller keeps up.
	Batch bool
	// Rollout says kubectl rollout status and undo apply to the kind: kubectl keeps a
	// status viewer and a rollbacker for Deployments, StatefulSets and DaemonSets only
	// (k8s.io/kubectl pkg/polymorphichelpers rollback.go, rollout_status.go); a ReplicaSet, a
	// Job and a CronJob have no rollout history to go back to.
	Rollout bool

	template   func(obj any) *corev1.PodTemplateSpec
	declared   func(obj any) (int32, bool)
	generation func(obj any) (generation, observed int64, ok bool)
	counts     func(obj any) (Counts, bool)
	conditions func(obj any) int
	condition  func(obj any, i int) Condition
	strategy   func(obj any) Strategy
}

// Counts are the copies a controller reports in its status.
type Counts struct {
	// Replicas are the copies that exist (for a DaemonSet, on nodes where they should run and
	// on nodes where they should not), Ready and Available those the controller counts so,
	// Updated those of the current template.
	Replicas, Ready, Available, Updated int32
}

// Condition is one status condition of a workload, whatever its kind's condition type.
type Condition struct {
	Type, Status, Reason, Message string
	// LastTransition is when Status last changed; LastUpdate when the controller last wrote
	// the condition, for the kinds whose conditions carry it (Deployments), else zero.
	LastTransition, LastUpdate time.Time
}

// Strategy is how a kind's controller replaces copies in a rollout. Its pointers are shared
// (the object's own fields, the table's defaults): read them, never write through them.
type Strategy struct {
	// Recreate says the controller stops every copy before it starts any of the new
	// revision (a Deployment's Recreate); Path is then the strategy type's field path.
	Recreate bool
	// MaxUnavailable bounds the copies a rolling update takes down at once, as written or
	// defaulted; nil when the controller replaces no copy by itself (Recreate, OnDelete, a
	// kind without rollouts) or sets no such bound (a StatefulSet without one replaces one
	// copy at a time). Path is then its field path; RoundUp says the controller rounds a
	// percentage up (DaemonSets, StatefulSets) rather than down (Deployments).
	MaxUnavailable *intstr.IntOrString
	Path           *field.Path
	RoundUp        bool
}

// Template returns the object's pod template.
func (k *Workload) Template(obj any) *corev1.PodTemplateSpec { return k.template(obj) }

// Declared returns the copies the object declares (spec.replicas, 1 when unset; a
// DaemonSet's desiredNumberScheduled; a Job's completions, 1 when unset); set is false when
// the object does not say and n is the default (spec.replicas unset, a CronJob, whose Jobs
// each declare their own).
func (k *Workload) Declared(obj any) (n int32, set bool) { return k.declared(obj) }

// Generation returns the object's generation and the one its controller last observed; ok
// is false for the kinds whose status has no observedGeneration (Jobs, CronJobs).
func (k *Workload) Generation(obj any) (generation, observed int64, ok bool) {
	return k.generation(obj)
}

// Counts returns the copies the controller reports; ok is false for the kinds whose status
// counts no copies of one template (Jobs, CronJobs).
func (k *Workload) Counts(obj any) (Counts, bool) { return k.counts(obj) }

// ConditionCount is how many status conditions the object has; Condition returns the i-th.
// An index rather than a callback: the engine reads them for every workload it diagnoses.
func (k *Workload) ConditionCount(obj any) int { return k.conditions(obj) }

// Condition returns the object's i-th status condition, 0 <= i < ConditionCount(obj).
func (k *Workload) Condition(obj any, i int) Condition { return k.condition(obj, i) }

// Strategy returns how the controller replaces the object's copies in a rollout.
func (k *Workload) Strategy(obj any) Strategy { return k.strategy(obj) }

// Aliases are the words a user may type for the kind, lowercased: the kind and its plural
// resource, each also with its group (deployment, deployments, deployment.apps,
// deployments.apps), and the short names.
func (k *Workload) Aliases() []string {
	kind := strings.ToLower(k.Kind)
	out := []string{kind, k.Resource}
	if g := k.GVK.Group; g != "" {
		out = append(out, kind+"."+g, k.Resource+"."+g)
	}
	return append(out, k.ShortNames...)
}

// Short is the kind as kubectl abbreviates it: its first short name, else its lowercased
// kind ("deploy", "job").
func (k *Workload) Short() string {
	if len(k.ShortNames) > 0 {
		return k.ShortNames[0]
	}
	return strings.ToLower(k.Kind)
}

// Named returns the adapter of a kind by its name ("Deployment"), or nil for a kind that is
// not a workload.
func Named(kind string) *Workload {
	for _, k := range Workloads {
		if k.Kind == kind {
			return k
		}
	}
	return nil
}

// Of returns the adapter of obj's kind, or nil when obj is not a workload's object. It is the
// one switch on a workload's type.
func Of(obj any) *Workload {
	switch obj.(type) {
	case *appsv1.Deployment:
		return &Deployment
	case *appsv1.StatefulSet:
		return &StatefulSet
	case *appsv1.DaemonSet:
		return &DaemonSet
	case *appsv1.ReplicaSet:
		return &ReplicaSet
	case *batchv1.CronJob:
		return &CronJob
	case *batchv1.Job:
		return &Job
	}
	return nil
}

// Lookup returns the workload kind a user's word names, as kubectl reads it: the kind or its
// resource, singular or plural, with or without its group, or a short name, in any case.
func Lookup(word string) (*Workload, bool) {
	k, ok := byAlias[strings.ToLower(word)]
	return k, ok
}

var byAlias = func() map[string]*Workload {
	m := map[string]*Workload{}
	for _, k := range Workloads {
		for _, a := range k.Aliases() {
			m[a] = k
		}
	}
	return m
}()

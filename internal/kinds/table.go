package kinds

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Workloads lists every workload kind, in the order sources read them.
var Workloads = []*Workload{&Deployment, &StatefulSet, &DaemonSet, &ReplicaSet, &CronJob, &Job}

var (
	apps  = appsv1.SchemeGroupVersion
	batch = batchv1.SchemeGroupVersion

	specTemplate = field.NewPath("spec", "template")

	// The strategies' paths and the API server's defaults (apps/v1 SetDefaults_Deployment,
	// SetDefaults_DaemonSet), made once: Strategy is read for every workload diagnosed.
	deploymentStrategyType       = field.NewPath("spec", "strategy", "type")
	deploymentMaxUnavailable     = field.NewPath("spec", "strategy", "rollingUpdate", "maxUnavailable")
	updateStrategyUnavailable    = field.NewPath("spec", "updateStrategy", "rollingUpdate", "maxUnavailable")
	defaultDeploymentUnavailable = intstr.FromString("25%")
	defaultDaemonSetUnavailable  = intstr.FromInt32(1)
)

// replicas reads spec.replicas, which the API server defaults to 1.
func replicas(r *int32) (int32, bool) {
	if r == nil {
		return 1, false
	}
	return *r, true
}

// Deployment is the adapter of apps/v1 Deployments.
var Deployment = Workload{
	Kind: "Deployment", GVK: apps.WithKind("Deployment"), Resource: "deployments", ShortNames: []string{"deploy"},
	TemplatePath: specTemplate, Rollout: true,
	template: func(obj any) *corev1.PodTemplateSpec { return &obj.(*appsv1.Deployment).Spec.Template },
	declared: func(obj any) (int32, bool) { return replicas(obj.(*appsv1.Deployment).Spec.Replicas) },
	generation: func(obj any) (int64, int64, bool) {
		o := obj.(*appsv1.Deployment)
		return o.Generation, o.Status.ObservedGeneration, true
	},
	counts: func(obj any) (Counts, bool) {
		st := &obj.(*appsv1.Deployment).Status
		return Counts{Replicas: st.Replicas, Ready: st.ReadyReplicas, Available: st.AvailableReplicas, Updated: st.UpdatedReplicas}, true
	},
	conditions: func(obj any) int { return len(obj.(*appsv1.Deployment).Status.Conditions) },
	condition: func(obj any, i int) Condition {
		c := &obj.(*appsv1.Deployment).Status.Conditions[i]
		return Condition{
			Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message,
			LastTransition: c.LastTransitionTime.Time, LastUpdate: c.LastUpdateTime.Time,
		}
	},
	strategy: func(obj any) Strategy {
		st := &obj.(*appsv1.Deployment).Spec.Strategy
		if st.Type == appsv1.RecreateDeploymentStrategyType {
			return Strategy{Recreate: true, Path: deploymentStrategyType}
		}
		// The deployment controller rounds down (pkg/controller/deployment/util.ResolveFenceposts).
		mu := &defaultDeploymentUnavailable
		if st.RollingUpdate != nil && st.RollingUpdate.MaxUnavailable != nil {
			mu = st.RollingUpdate.MaxUnavailable
		}
		return Strategy{MaxUnavailable: mu, Path: deploymentMaxUnavailable}
	},
}

// StatefulSet is the adapter of apps/v1 StatefulSets.
var StatefulSet = Workload{
	Kind: "StatefulSet", GVK: apps.WithKind("StatefulSet"), Resource: "statefulsets", ShortNames: []string{"sts"},
	TemplatePath: specTemplate, Rollout: true,
	template: func(obj any) *corev1.PodTemplateSpec { return &obj.(*appsv1.StatefulSet).Spec.Template },
	declared: func(obj any) (int32, bool) { return replicas(obj.(*appsv1.StatefulSet).Spec.Replicas) },
	generation: func(obj any) (int64, int64, bool) {
		o := obj.(*appsv1.StatefulSet)
		return o.Generation, o.Status.ObservedGeneration, true
	},
	counts: func(obj any) (Counts, bool) {
		st := &obj.(*appsv1.StatefulSet).Status
		return Counts{Replicas: st.Replicas, Ready: st.ReadyReplicas, Available: st.AvailableReplicas, Updated: st.UpdatedReplicas}, true
	},
	conditions: func(obj any) int { return len(obj.(*appsv1.StatefulSet).Status.Conditions) },
	condition: func(obj any, i int) Condition {
		c := &obj.(*appsv1.StatefulSet).Status.Conditions[i]
		return Condition{
			Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message,
			LastTransition: c.LastTransitionTime.Time,
		}
	},
	strategy: func(obj any) Strategy {
		// Without maxUnavailable the controller replaces one copy at a time; with it, it
		// rounds a percentage up. The API server accepts rollingUpdate only with the
		// RollingUpdate type.
		st := &obj.(*appsv1.StatefulSet).Spec.UpdateStrategy
		if st.RollingUpdate == nil || st.RollingUpdate.MaxUnavailable == nil {
			return Strategy{}
		}
		return Strategy{MaxUnavailable: st.RollingUpdate.MaxUnavailable, RoundUp: true, Path: updateStrategyUnavailable}
	},
}

// DaemonSet is the adapter of apps/v1 DaemonSets.
var DaemonSet = Workload{
	Kind: "DaemonSet", GVK: apps.WithKind("DaemonSet"), Resource: "daemonsets", ShortNames: []string{"ds"},
	TemplatePath: specTemplate, Rollout: true,
	template: func(obj any) *corev1.PodTemplateSpec { return &obj.(*appsv1.DaemonSet).Spec.Template },
	declared: func(obj any) (int32, bool) { return obj.(*appsv1.DaemonSet).Status.DesiredNumberScheduled, true },
	generation: func(obj any) (int64, int64, bool) {
		o := obj.(*appsv1.DaemonSet)
		return o.Generation, o.Status.ObservedGeneration, true
	},
	counts: func(obj any) (Counts, bool) {
		st := &obj.(*appsv1.DaemonSet).Status
		return Counts{
			Replicas: st.CurrentNumberScheduled + st.NumberMisscheduled, Ready: st.NumberReady,
			Available: st.NumberAvailable, Updated: st.UpdatedNumberScheduled,
		}, true
	},
	conditions: func(obj any) int { return len(obj.(*appsv1.DaemonSet).Status.Conditions) },
	condition: func(obj any, i int) Condition {
		c := &obj.(*appsv1.DaemonSet).Status.Conditions[i]
		return Condition{
			Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message,
			LastTransition: c.LastTransitionTime.Time,
		}
	},
	strategy: func(obj any) Strategy {
		st := &obj.(*appsv1.DaemonSet).Spec.UpdateStrategy
		if st.Type != appsv1.RollingUpdateDaemonSetStrategyType && st.Type != "" {
			return Strategy{}
		}
		// The daemon set controller rounds a percentage up (pkg/controller/daemon/util.UnavailableCount).
		mu := &defaultDaemonSetUnavailable
		if st.RollingUpdate != nil && st.RollingUpdate.MaxUnavailable != nil {
			mu = st.RollingUpdate.MaxUnavailable
		}
		return Strategy{MaxUnavailable: mu, RoundUp: true, Path: updateStrategyUnavailable}
	},
}

// ReplicaSet is the adapter of apps/v1 ReplicaSets: a Deployment's revision, or a workload of
// its own.
var ReplicaSet = Workload{
	Kind: "ReplicaSet", GVK: apps.WithKind("ReplicaSet"), Resource: "replicasets", ShortNames: []string{"rs"},
	ControlledBy: "Deployment", TemplatePath: specTemplate,
	template: func(obj any) *corev1.PodTemplateSpec { return &obj.(*appsv1.ReplicaSet).Spec.Template },
	declared: func(obj any) (int32, bool) { return replicas(obj.(*appsv1.ReplicaSet).Spec.Replicas) },
	generation: func(obj any) (int64, int64, bool) {
		o := obj.(*appsv1.ReplicaSet)
		return o.Generation, o.Status.ObservedGeneration, true
	},
	counts: func(obj any) (Counts, bool) {
		st := &obj.(*appsv1.ReplicaSet).Status
		// One template: every copy it has is of the current revision.
		return Counts{Replicas: st.Replicas, Ready: st.ReadyReplicas, Available: st.AvailableReplicas, Updated: st.Replicas}, true
	},
	conditions: func(obj any) int { return len(obj.(*appsv1.ReplicaSet).Status.Conditions) },
	condition: func(obj any, i int) Condition {
		c := &obj.(*appsv1.ReplicaSet).Status.Conditions[i]
		return Condition{
			Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message,
			LastTransition: c.LastTransitionTime.Time,
		}
	},
	// A ReplicaSet replaces no copy when its template changes.
	strategy: func(any) Strategy { return Strategy{} },
}

// CronJob is the adapter of batch/v1 CronJobs.
var CronJob = Workload{
	Kind: "CronJob", GVK: batch.WithKind("CronJob"), Resource: "cronjobs", ShortNames: []string{"cj"}, Batch: true,
	TemplatePath: field.NewPath("spec", "jobTemplate", "spec", "template"),
	template:     func(obj any) *corev1.PodTemplateSpec { return &obj.(*batchv1.CronJob).Spec.JobTemplate.Spec.Template },
	// Each Job declares its own completions, from the job template as it was when it was made.
	declared:   func(any) (int32, bool) { return 1, false },
	generation: func(any) (int64, int64, bool) { return 0, 0, false },
	counts:     func(any) (Counts, bool) { return Counts{}, false },
	// A CronJob's status has no conditions.
	conditions: func(any) int { return 0 },
	condition:  func(any, int) Condition { return Condition{} },
	strategy:   func(any) Strategy { return Strategy{} },
}

// Job is the adapter of batch/v1 Jobs.
var Job = Workload{
	Kind: "Job", GVK: batch.WithKind("Job"), Resource: "jobs",
	ControlledBy: "CronJob", Batch: true, TemplatePath: specTemplate,
	template: func(obj any) *corev1.PodTemplateSpec { return &obj.(*batchv1.Job).Spec.Template },
	declared: func(obj any) (int32, bool) {
		if c := obj.(*batchv1.Job).Spec.Completions; c != nil {
			return *c, true
		}
		return 1, false
	},
	generation: func(any) (int64, int64, bool) { return 0, 0, false },
	counts:     func(any) (Counts, bool) { return Counts{}, false },
	conditions: func(obj any) int { return len(obj.(*batchv1.Job).Status.Conditions) },
	condition: func(obj any, i int) Condition {
		c := &obj.(*batchv1.Job).Status.Conditions[i]
		return Condition{
			Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message,
			LastTransition: c.LastTransitionTime.Time,
		}
	},
	strategy: func(any) Strategy { return Strategy{} },
}

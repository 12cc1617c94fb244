package diagnose

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// workload is everything the rules need about one workload, gathered once by the classifier and
// read by the suspect rules and signal-gap checks. It is the seam between the two halves of the
// engine: classification (shape, counts, evidence, revisions, cause) fills it, suspects.go and
// gaps.go only read it.
type workload struct {
	Kind, Namespace, Name string
	UID                   types.UID
	// Object is the *appsv1.Deployment, *appsv1.StatefulSet, *appsv1.DaemonSet or *appsv1.ReplicaSet.
	Object   any
	Declared int32
	Selector labels.Selector

	// Template is the current pod template; TemplatePath is its field path in Object
	// (spec.template).
	Template     *corev1.PodTemplateSpec
	TemplatePath *field.Path
	// PreviousTemplate is the pod template of the last revision that served, nil when none did
	// or it is the current one.
	PreviousTemplate *corev1.PodTemplateSpec
	// VolumeClaimTemplates of a StatefulSet.
	VolumeClaimTemplates []corev1.PersistentVolumeClaim

	CurrentRevision, LastServingRevision string
	// Changes are the fields that differ between PreviousTemplate and Template, paths rooted at
	// the workload (spec.template....).
	Changes []Change

	// Pods are all copies, any revision; CurrentPods those of the current revision.
	Pods, CurrentPods []*corev1.Pod
	// Events involve the workload, its ReplicaSets, its pods and its claims, oldest first.
	Events []*corev1.Event
	// Logs are the log tails of its pods.
	Logs []*snapshot.ContainerLog
	// Services select the workload's pods (or its template's labels).
	Services []*corev1.Service

	Shape    Shape
	Evidence []Evidence

	Snap *snapshot.Snapshot
}

package diagnose

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// workload is everything the engine knows about one workload, gathered once by the classifier
// and read by the suspect ranking and signal-gap checks. It is the seam between the two halves
// of the engine: classification (shape, counts, evidence, revisions, cause) fills it,
// suspects.go and gaps.go only read it; the rule families read the rules.Input made from it
// (rule_input.go), never the workload itself.
type workload struct {
	Kind, Namespace, Name string
	UID                   types.UID
	// Object is the *appsv1.Deployment, *appsv1.StatefulSet, *appsv1.DaemonSet or *appsv1.ReplicaSet.
	Object   any
	Declared int32

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
	// OwnChanges are the fields the current revision changed from the one before it, read
	// when the current revision served (Changes is then empty) and the failing copies' logs
	// were not read: without a line to name a field, its own change set is where to look.
	OwnChanges []Change

	// Pods are all copies, any revision; CurrentPods those of the current revision.
	Pods, CurrentPods []*corev1.Pod
	// Events involve the workload, its ReplicaSets, its pods and its claims, oldest first.
	Events []*corev1.Event
	// Logs are the log tails of its pods.
	Logs []*snapshot.ContainerLog
	// Services select the workload's pods (or its template's labels). They are found through an
	// index of selectors, so reading them is cheaper than testing every Service of the namespace
	// (Snap.ServicesIn), which is quadratic when one namespace holds many workloads.
	Services []*corev1.Service

	Shape    Shape
	Evidence []Evidence

	// UnmatchedServices were evidently written for the workload (same name, or the same
	// app.kubernetes.io/name label as its template) but select none of its pods.
	UnmatchedServices []*corev1.Service
	// NearbyServices are all the Services the index offered for the workload: those above,
	// and those that only share its name or its app.kubernetes.io/name label. The suspect
	// rules read these instead of every Service of the namespace.
	NearbyServices []*corev1.Service
	// Claims are the PersistentVolumeClaims its pods mount or its volumeClaimTemplates name.
	Claims []*corev1.PersistentVolumeClaim
	// ReplicaSets of a Deployment (or the ownerless ReplicaSet itself).
	ReplicaSets []*appsv1.ReplicaSet
	// Counts as classified; serving[i] says whether copy i (Pods[i]) counts as serving.
	Counts  Counts
	serving []bool
	// lives[i] is copy i's lifecycle (Pods[i]), read once (life).
	lives []facts.Copy
	// ctl is what the workload's controller status says, read once (controller); ctlRead
	// says it was.
	ctl     facts.Controller
	ctlRead bool
	// Created is the workload's creation time.
	Created time.Time
	// obs is the observation list, read once (observe).
	obs *observations
	// texts is the worker's cache of what log texts say, shared with the workloads it
	// diagnosed before; nil reads each text afresh.
	texts *textCache
	// cls is the classifier's own working state (revision history and the like).
	cls classState

	Snap *snapshot.Snapshot

	// objectRef is object's "Kind/Name", made once: the evidence, the suspect rules, the gap
	// checks and the timeline each cited the workload by a string of their own.
	objectRef string
}

// object is the workload as evidence and suspects cite it: "Deployment/checkout".
func (w *workload) object() string {
	if w.objectRef == "" {
		w.objectRef = w.Kind + "/" + w.Name
	}
	return w.objectRef
}

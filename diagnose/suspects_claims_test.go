package diagnose

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// unboundClaims is volumebinding's PreFilter reason (volume_binding.go ErrReasonUnboundImmediatePVC)
// in the FitError both v1.31 and v1.37 write.
const unboundClaims = "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."

func pendingClaim(name string, selector *metav1.LabelSelector) *corev1.PersistentVolumeClaim {
	empty := ""
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: stNS},
		Spec:       corev1.PersistentVolumeClaimSpec{Selector: selector, StorageClassName: &empty},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
}

func TestUnboundClaimSelector(t *testing.T) {
	runSuspectCases(t, []suspectCase{
		{
			name: "a Deployment's claim whose selector no volume carries",
			setup: func(w *workload) {
				w.Template.Spec.Volumes = []corev1.Volume{{Name: "archive", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "archive"},
				}}}
				w.Claims = []*corev1.PersistentVolumeClaim{pendingClaim("archive", &metav1.LabelSelector{MatchLabels: map[string]string{"volume": "archive-2026"}})}
				stEvent(w, "Pod", stPod(w).Name, "", "FailedScheduling", unboundClaims)
			},
			rule: rules.RuleClaimSelector, object: "PersistentVolumeClaim/archive", path: "spec.selector",
		},
		{
			name: "a StatefulSet's claim template whose selector no volume carries",
			setup: func(w *workload) {
				tpl := corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{
					Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"nvme"}}}},
				}}
				st := &appsv1.StatefulSet{
					TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
					ObjectMeta: metav1.ObjectMeta{Name: "ledger", Namespace: stNS},
					Spec:       appsv1.StatefulSetSpec{Template: *w.Template, VolumeClaimTemplates: []corev1.PersistentVolumeClaim{tpl}},
				}
				w.Kind, w.Name, w.Object, w.Template = "StatefulSet", "ledger", st, &st.Spec.Template
				w.VolumeClaimTemplates = st.Spec.VolumeClaimTemplates
				w.Claims = []*corev1.PersistentVolumeClaim{pendingClaim("data-ledger-0", tpl.Spec.Selector)}
				stEvent(w, "Pod", stPod(w).Name, "", "FailedScheduling", unboundClaims)
			},
			rule: rules.RuleClaimSelector, object: "StatefulSet/ledger", path: "spec.volumeClaimTemplates[0].spec.selector",
		},
		{
			name: "a Pending claim without a selector names no selector",
			setup: func(w *workload) {
				w.Template.Spec.Volumes = []corev1.Volume{{Name: "archive", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "archive"},
				}}}
				w.Claims = []*corev1.PersistentVolumeClaim{pendingClaim("archive", nil)}
				stEvent(w, "Pod", stPod(w).Name, "", "FailedScheduling", unboundClaims)
			},
			anyTop: true, absent: []string{"spec.selector"},
		},
	})
}

// The PV controller's and the scheduler's messages, copied from the sources of both supported
// versions (k8s.io/kubernetes v1.31.14 and v1.37.2: the same text in each); the package rules
// test of readBindingEvent and noVolumeReason reads each of them, and more.
const (
	// pkg/controller/volume/persistentvolume/pv_controller.go syncUnboundClaim
	msgNoClass = "no persistent volumes available for this claim and no storage class is set"
	// pv_controller.go provisionClaim: err.Error() of the class lister's NotFound
	// (k8s.io/client-go/listers, errors.NewNotFound(storage.Resource("storageclass"), name))
	msgClassNotFound = `storageclass.storage.k8s.io "manual" not found`
	// pkg/volume/plugins.go FindProvisionablePluginByName, through provisionClaim
	msgNoPlugin = "no provisionable volume plugin matched"
	// pv_controller.go emitEventForUnboundDelayBindingClaim
	msgFirstConsumer = "waiting for first consumer to be created before binding"
	// pkg/scheduler/framework/plugins/volumebinding/binder.go ErrReasonBindConflict in a
	// FitError (pkg/scheduler/framework/types.go): v1.31.14 and v1.37.2
	bindConflict = "0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
)

// pv is an Available volume of a class, capacity and access modes.
func pv(name, class, capacity string, modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			StorageClassName: class, AccessModes: modes,
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)},
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable},
	}
}

// asking is a Pending claim of a class, request and access modes.
func asking(name, class, request string, modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: stNS},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &class, AccessModes: modes,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(request)}},
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
}

// mountClaim makes the Deployment's pods mount the claim, and the scheduler and the PV
// controller say what they say about it.
func mountClaim(w *workload, pvc *corev1.PersistentVolumeClaim, reason, message string, pvs ...*corev1.PersistentVolume) {
	w.Template.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.Name},
	}}}
	w.Claims = []*corev1.PersistentVolumeClaim{pvc}
	w.Snap.PersistentVolumes = pvs
	stEvent(w, "Pod", stPod(w).Name, "", "FailedScheduling", unboundClaims)
	if reason != "" {
		stEvent(w, "PersistentVolumeClaim", pvc.Name, "", reason, message)
	}
}

// asStatefulSet turns the workload into StatefulSet ledger whose template tpl made claim
// tpl-ledger-0.
func asStatefulSet(w *workload, tpl *corev1.PersistentVolumeClaim, reason, message string, pvs ...*corev1.PersistentVolume) {
	st := &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "ledger", Namespace: stNS},
		Spec:       appsv1.StatefulSetSpec{Template: *w.Template, VolumeClaimTemplates: []corev1.PersistentVolumeClaim{*tpl}},
	}
	st.Spec.VolumeClaimTemplates[0].Namespace = ""
	w.Kind, w.Name, w.Object, w.Template = "StatefulSet", "ledger", st, &st.Spec.Template
	w.VolumeClaimTemplates = st.Spec.VolumeClaimTemplates
	pvc := tpl.DeepCopy()
	pvc.Name = tpl.Name + "-ledger-0"
	w.Claims = []*corev1.PersistentVolumeClaim{pvc}
	w.Snap.PersistentVolumes = pvs
	stEvent(w, "Pod", stPod(w).Name, "", "FailedScheduling", unboundClaims)
	if reason != "" {
		stEvent(w, "PersistentVolumeClaim", pvc.Name, "", reason, message)
	}
}

const (
	rwo = corev1.ReadWriteOnce
	rwx = corev1.ReadWriteMany
)

func TestUnboundClaimFields(t *testing.T) {
	runSuspectCases(t, []suspectCase{
		{
			name: "a Deployment's claim larger than every volume of its class",
			setup: func(w *workload) {
				mountClaim(w, asking("uploads", "", "5Gi", rwo), "FailedBinding", msgNoClass,
					pv("nfs-1", "", "1Gi", rwo), pv("nfs-2", "", "2Gi", rwo, rwx), pv("fast-1", "fast", "50Gi", rwo))
			},
			rule: rules.RuleClaimRequest, object: "PersistentVolumeClaim/uploads", path: "spec.resources.requests[storage]",
			absent: []string{"spec.storageClassName", "spec.accessModes"},
		},
		{
			name: "a claim template whose class names pre-made volumes that are too small, its StorageClass missing",
			setup: func(w *workload) {
				asStatefulSet(w, asking("data", "manual", "200Gi", rwo), "ProvisioningFailed", msgClassNotFound,
					pv("san-1", "manual", "100Gi", rwo), pv("san-2", "manual", "100Gi", rwo))
			},
			rule: rules.RuleClaimRequest, object: "StatefulSet/ledger", path: "spec.volumeClaimTemplates[0].spec.resources.requests[storage]",
			absent: []string{"spec.volumeClaimTemplates[0].spec.storageClassName"},
		},
		{
			name: "a claim asking a mode no volume of its class offers, though they have room",
			setup: func(w *workload) {
				mountClaim(w, asking("shared", "", "10Gi", rwx), "FailedBinding", msgNoClass,
					pv("iscsi-1", "", "100Gi", rwo), pv("iscsi-2", "", "100Gi", rwo))
			},
			rule: rules.RuleClaimAccessModes, object: "PersistentVolumeClaim/shared", path: "spec.accessModes",
			absent: []string{"spec.resources.requests[storage]"},
		},
		{
			name: "a claim template whose mode only a smaller volume offers: each field alone",
			setup: func(w *workload) {
				asStatefulSet(w, asking("data", "", "10Gi", rwx), "FailedBinding", msgNoClass,
					pv("big", "", "100Gi", rwo), pv("nfs", "", "1Gi", rwx))
			},
			anyTop: true,
			below:  []string{"spec.volumeClaimTemplates[0].spec.resources.requests[storage]"},
		},
		{
			name: "a claim whose class no volume carries and no StorageClass provisions",
			setup: func(w *workload) {
				mountClaim(w, asking("scratch", "local-nvme", "10Gi", rwo), "ProvisioningFailed", `storageclass.storage.k8s.io "local-nvme" not found`,
					pv("nfs-1", "", "100Gi", rwo), pv("fast-1", "fast", "100Gi", rwo))
			},
			rule: rules.RuleClaimClass, object: "PersistentVolumeClaim/scratch", path: "spec.storageClassName",
		},
		{
			name: "a claim without a class in a cluster whose volumes all have one",
			setup: func(w *workload) {
				mountClaim(w, asking("scratch", "", "10Gi", rwo), "FailedBinding", msgNoClass, pv("fast-1", "fast", "100Gi", rwo))
			},
			rule: rules.RuleClaimClass, object: "PersistentVolumeClaim/scratch", path: "spec.storageClassName",
		},
		{
			name: "a claim whose class an in-tree no-provisioner class names and no volume carries",
			setup: func(w *workload) {
				mountClaim(w, asking("scratch", "local-storage", "10Gi", rwo), "ProvisioningFailed", msgNoPlugin, pv("nfs-1", "", "100Gi", rwo))
			},
			rule: rules.RuleClaimClass, object: "PersistentVolumeClaim/scratch", path: "spec.storageClassName",
		},
		{
			name: "a claim asking Block of filesystem volumes",
			setup: func(w *workload) {
				pvc := asking("raw", "", "10Gi", rwo)
				block := corev1.PersistentVolumeBlock
				pvc.Spec.VolumeMode = &block
				mountClaim(w, pvc, "FailedBinding", msgNoClass, pv("san-1", "", "100Gi", rwo))
			},
			rule: rules.RuleClaimVolumeMode, object: "PersistentVolumeClaim/raw", path: "spec.volumeMode",
		},
		{
			name: "a claim whose selector no volume of its class carries",
			setup: func(w *workload) {
				pvc := asking("archive", "", "10Gi", rwo)
				pvc.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"volume": "archive-2026"}}
				a := pv("archive-a", "", "100Gi", rwo)
				a.Labels = map[string]string{"volume": "archive"}
				mountClaim(w, pvc, "FailedBinding", msgNoClass, a)
			},
			rule: rules.RuleClaimSelector, object: "PersistentVolumeClaim/archive", path: "spec.selector",
			absent: []string{"spec.resources.requests[storage]"},
		},
		{
			name: "a claim a volume satisfies names none of its fields (the claim binds at the next sync)",
			setup: func(w *workload) {
				mountClaim(w, asking("uploads", "", "5Gi", rwo), "FailedBinding", msgNoClass, pv("nfs-1", "", "10Gi", rwo, rwx))
			},
			anyTop: true,
			absent: []string{"spec.resources.requests[storage]", "spec.storageClassName", "spec.accessModes", "spec"},
		},
		{
			name: "volumes bound to other claims are not available",
			setup: func(w *workload) {
				taken := pv("nfs-1", "", "10Gi", rwo)
				taken.Spec.ClaimRef = &corev1.ObjectReference{Namespace: stNS, Name: "other"}
				taken.Status.Phase = corev1.VolumeBound
				mountClaim(w, asking("uploads", "", "5Gi", rwo), "FailedBinding", msgNoClass, taken, pv("nfs-2", "", "1Gi", rwo))
			},
			rule: rules.RuleClaimRequest, object: "PersistentVolumeClaim/uploads", path: "spec.resources.requests[storage]",
		},
		{
			name: "a WaitForFirstConsumer template claim the scheduler finds no volume for on any node",
			setup: func(w *workload) {
				asStatefulSet(w, asking("data", "local-storage", "50Gi", rwo), "WaitForFirstConsumer", msgFirstConsumer,
					pv("nvme-1", "local-storage", "10Gi", rwo), pv("nvme-2", "local-storage", "10Gi", rwo))
				w.Events[0].Message = bindConflict
			},
			rule: rules.RuleClaimRequest, object: "StatefulSet/ledger", path: "spec.volumeClaimTemplates[0].spec.resources.requests[storage]",
		},
		{
			name: "volumes not read: the claim is named unbound, no field is guessed",
			setup: func(w *workload) {
				mountClaim(w, asking("uploads", "", "5Gi", rwo), "FailedBinding", msgNoClass)
				w.Snap.Visibility = []snapshot.Visibility{{Kind: "PersistentVolume", Reason: "forbidden"}}
			},
			rule: rules.RuleClaimUnbound, object: "PersistentVolumeClaim/uploads", path: "spec",
			absent: []string{"spec.resources.requests[storage]", "spec.storageClassName"},
		},
		{
			name: "volumes not read and the template's class not found: the storage-class rule's",
			setup: func(w *workload) {
				asStatefulSet(w, asking("data", "fast-ssd", "20Gi", rwo), "ProvisioningFailed", `storageclass.storage.k8s.io "fast-ssd" not found`)
				w.Snap.Visibility = []snapshot.Visibility{{Kind: "PersistentVolume", Namespace: stNS, Reason: "not in the dump"}}
			},
			rule: rules.RuleStorageClass, object: "StatefulSet/ledger", path: "spec.volumeClaimTemplates[0].spec.storageClassName",
			absent: []string{"spec.volumeClaimTemplates[0].spec"},
		},
	})
}

package diagnose

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
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

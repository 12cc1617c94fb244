package snapshot

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTrimManagedFieldsKeepsOnlyServices(t *testing.T) {
	entries := func() []metav1.ManagedFieldsEntry {
		return []metav1.ManagedFieldsEntry{{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate}}
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", ManagedFields: entries()}}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", ManagedFields: entries()}}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", ManagedFields: entries()}}
	for _, o := range []any{svc, d, p} {
		TrimManagedFields(o)
	}
	if len(svc.ManagedFields) != 1 {
		t.Errorf("Service lost its managedFields: %v", svc.ManagedFields)
	}
	if d.ManagedFields != nil || p.ManagedFields != nil {
		t.Errorf("Deployment or Pod kept managedFields: %v %v", d.ManagedFields, p.ManagedFields)
	}
}

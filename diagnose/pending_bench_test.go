package diagnose

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// BenchmarkDiagnosePendingNamespace diagnoses one small namespace of a fleet as fleetbench
// seeds it: 20 Deployments of 3 copies that stay Pending (no scheduler), nothing logged.
func BenchmarkDiagnosePendingNamespace(b *testing.B) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s := &snapshot.Snapshot{Namespaces: []string{"fleet"}, ReferenceTime: now}
	for k := range 20 {
		name := fmt.Sprintf("web-%02d", k)
		labels := map[string]string{"app": name}
		tpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example/shop/web:1.4.2", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}}}}
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "fleet", UID: types.UID("d" + name), Generation: 1, CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
			Spec:       appsv1.DeploymentSpec{Replicas: func() *int32 { v := int32(3); return &v }(), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tpl},
			Status:     appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, UnavailableReplicas: 3},
		}
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{
				Name: name + "-5d8f9c7b6", Namespace: "fleet", UID: types.UID("r" + name), Labels: labels, Annotations: map[string]string{"deployment.kubernetes.io/revision": "1"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: name, UID: d.UID, Controller: func() *bool { v := true; return &v }()}}, CreationTimestamp: metav1.NewTime(now.Add(-time.Hour)),
			},
			Spec: appsv1.ReplicaSetSpec{Replicas: func() *int32 { v := int32(3); return &v }(), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tpl}, Status: appsv1.ReplicaSetStatus{Replicas: 3},
		}
		s.Deployments = append(s.Deployments, d)
		s.ReplicaSets = append(s.ReplicaSets, rs)
		for i := range 3 {
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					Name: fmt.Sprintf("%s-%05d", rs.Name, i), Namespace: "fleet", UID: types.UID(fmt.Sprintf("p%s%d", name, i)), Labels: labels,
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: func() *bool { v := true; return &v }()}}, CreationTimestamp: metav1.NewTime(now.Add(-time.Hour)),
				},
				Spec: tpl.Spec, Status: corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBestEffort},
			}
			s.Pods = append(s.Pods, p)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		s.ForgetServicesFiled()
		Diagnose(s)
	}
}

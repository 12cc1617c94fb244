package live

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func withResources(name string, requests, limits map[string]string) *corev1.Pod {
	list := func(m map[string]string) corev1.ResourceList {
		if m == nil {
			return nil
		}
		l := corev1.ResourceList{}
		for k, v := range m {
			l[corev1.ResourceName(k)] = resource.MustParse(v)
		}
		return l
	}
	return pod("shop", name, "", func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: list(requests), Limits: list(limits)}
	})
}

// Copies of one template share one copy of their requirements once stored; a copy whose
// requirements differ in any quantity, or that has no limits, keeps its own; every pod's
// requirements read as they were decoded.
func TestWatchedPodsShareEqualRequirements(t *testing.T) {
	r := newResourceInterner()
	a := withResources("a", map[string]string{"cpu": "50m", "memory": "128Mi"}, map[string]string{"memory": "256Mi"})
	b := withResources("b", map[string]string{"memory": "128Mi", "cpu": "50m"}, map[string]string{"memory": "256Mi"})
	c := withResources("c", map[string]string{"cpu": "50m", "memory": "128Mi"}, map[string]string{"memory": "512Mi"})
	d := withResources("d", map[string]string{"cpu": "50m", "memory": "128Mi"}, nil)
	var want []corev1.ResourceRequirements
	for _, p := range []*corev1.Pod{a, b, c, d} {
		want = append(want, *p.Spec.Containers[0].Resources.DeepCopy())
		r.pod(p)
	}
	same := func(x, y *corev1.Pod) bool {
		rx, ry := x.Spec.Containers[0].Resources, y.Spec.Containers[0].Resources
		return reflect.ValueOf(rx.Requests).Pointer() == reflect.ValueOf(ry.Requests).Pointer() &&
			reflect.ValueOf(rx.Limits).Pointer() == reflect.ValueOf(ry.Limits).Pointer()
	}
	if !same(a, b) {
		t.Error("two copies of one template keep their own requirements")
	}
	if same(a, c) || same(a, d) || same(c, d) {
		t.Error("requirements that differ are shared")
	}
	for i, p := range []*corev1.Pod{a, b, c, d} {
		got := p.Spec.Containers[0].Resources
		for _, l := range [][2]corev1.ResourceList{{got.Requests, want[i].Requests}, {got.Limits, want[i].Limits}} {
			if len(l[0]) != len(l[1]) || (l[0] == nil) != (l[1] == nil) {
				t.Fatalf("pod %s: %v, want %v", p.Name, got, want[i])
			}
			for n, q := range l[1] {
				if g, ok := l[0][n]; !ok || g.Cmp(q) != 0 {
					t.Fatalf("pod %s: %s = %v, want %v", p.Name, n, l[0][n], q)
				}
			}
		}
	}
}

package live

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
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
	// The same bytes in another format print otherwise (134217728 against 128Mi).
	e := withResources("e", map[string]string{"cpu": "50m", "memory": "134217728"}, map[string]string{"memory": "256Mi"})
	var want []corev1.ResourceRequirements
	for _, p := range []*corev1.Pod{a, b, c, d, e} {
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
	if same(a, c) || same(a, d) || same(c, d) || same(a, e) {
		t.Error("requirements that differ are shared")
	}
	for i, p := range []*corev1.Pod{a, b, c, d, e} {
		got := p.Spec.Containers[0].Resources
		for _, l := range [][2]corev1.ResourceList{{got.Requests, want[i].Requests}, {got.Limits, want[i].Limits}} {
			for n, q := range l[1] {
				if g := l[0][n]; g.String() != q.String() {
					t.Errorf("pod %s: %s prints %s, want %s", p.Name, n, g.String(), q.String())
				}
			}
		}
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

// Copies of a template in one zone share their labels and their tolerations; another zone's
// labels, or tolerations that differ in a bound, stay their own; each pod reads as decoded.
func TestWatchedPodsShareEqualLabelsAndTolerations(t *testing.T) {
	r := newResourceInterner()
	secs := func(n int64) *int64 { return &n }
	mk := func(name, zone string, bound int64) *corev1.Pod {
		return pod("shop", name, "", func(p *corev1.Pod) {
			p.Labels = map[string]string{"app": "cart", "pod-template-hash": "74446f5d85", "topology.kubernetes.io/zone": zone}
			p.Spec.Tolerations = []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs(bound)},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs(300)},
			}
		})
	}
	a, b, c, d := mk("a", "sim-1a", 300), mk("b", "sim-1a", 300), mk("c", "sim-1b", 300), mk("d", "sim-1a", 60)
	var want []*corev1.Pod
	for _, p := range []*corev1.Pod{a, b, c, d} {
		want = append(want, p.DeepCopy())
		r.pod(p)
	}
	ptr := func(v any) uintptr { return reflect.ValueOf(v).Pointer() }
	if ptr(a.Labels) != ptr(b.Labels) || &a.Spec.Tolerations[0] != &b.Spec.Tolerations[0] {
		t.Error("two copies in one zone keep their own labels or tolerations")
	}
	if ptr(a.Labels) == ptr(c.Labels) || &a.Spec.Tolerations[0] == &d.Spec.Tolerations[0] {
		t.Error("labels or tolerations that differ are shared")
	}
	for i, p := range []*corev1.Pod{a, b, c, d} {
		if !reflect.DeepEqual(p.Labels, want[i].Labels) || !reflect.DeepEqual(p.Spec.Tolerations, want[i].Spec.Tolerations) {
			t.Errorf("pod %s: labels %v tolerations %v, want %v %v", p.Name, p.Labels, p.Spec.Tolerations, want[i].Labels, want[i].Spec.Tolerations)
		}
	}
	if cap(a.Spec.Tolerations) != len(a.Spec.Tolerations) {
		t.Error("a shared list has room to append into")
	}
}

// A watch trims and interns the first read's pods as it lists them, before it publishes them,
// and its informers pass the same pods through the same transform again while that snapshot is
// on screen. The second pass must write nothing: under -race, a write to any field the screen
// reads (labels, tolerations, requirements, managedFields) beside this reader fails the test.
func TestASecondTrimAndInternWritesNothing(t *testing.T) {
	r := newResourceInterner()
	mk := func(name string) *corev1.Pod {
		p := withResources(name, map[string]string{"cpu": "50m"}, map[string]string{"memory": "256Mi"})
		p.Labels = map[string]string{"app": "cart", "pod-template-hash": "74446f5d85"}
		p.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
		p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate}}
		withStatusExtras(p)
		return p
	}
	pods := []*corev1.Pod{mk("a"), mk("b")}
	for _, p := range pods {
		snapshot.TrimWatched(p)
		r.pod(p)
	}
	want := []*corev1.Pod{pods[0].DeepCopy(), pods[1].DeepCopy()}
	stop := make(chan struct{})
	reading := make(chan struct{})
	done := make(chan int)
	go func() {
		n := 0
		for first := true; ; first = false {
			for _, p := range pods {
				n += len(p.Labels) + len(p.Spec.Tolerations) + len(p.Spec.Containers[0].Resources.Limits) +
					len(p.Spec.Containers[0].Resources.Requests) + len(p.ManagedFields) + len(p.Status.ContainerStatuses[0].VolumeMounts)
			}
			if first {
				close(reading)
			}
			select {
			case <-stop:
				done <- n
				return
			default:
			}
		}
	}()
	<-reading
	for _, p := range pods {
		snapshot.TrimWatched(p)
		r.pod(p)
	}
	close(stop)
	<-done
	for i, p := range pods {
		if !reflect.DeepEqual(p, want[i]) {
			t.Errorf("pod %s changed on the second pass", p.Name)
		}
	}
}

// BenchmarkInternPods is a watch's first read of a 20,000-pod namespace going through the
// interner (2,000 templates of 10 copies, in three zones), then its informers' second pass over
// the same pods: ns/op is per pod, both passes.
func BenchmarkInternPods(b *testing.B) {
	secs := int64(300)
	zones := []string{"sim-1a", "sim-1b", "sim-1c"}
	var pods []*corev1.Pod
	for w := range 2000 {
		app, hash := fmt.Sprintf("cart-%04d", w), fmt.Sprintf("%010x", w*7919)
		for c := range 10 {
			p := withResources(fmt.Sprintf("%s-%s-%05d", app, hash, c), map[string]string{"cpu": "50m", "memory": "128Mi"}, map[string]string{"memory": "256Mi"})
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-" + hash, UID: types.UID(fmt.Sprintf("uid-%d", w)), Controller: ptr.To(true)}}
			p.Labels = map[string]string{"app": app, "pod-template-hash": hash, "topology.kubernetes.io/region": "sim-1", "topology.kubernetes.io/zone": zones[c%3]}
			p.Spec.Tolerations = []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs},
			}
			pods = append(pods, p)
		}
	}
	fresh := make([][]*corev1.Pod, b.N)
	for i := range fresh {
		fresh[i] = make([]*corev1.Pod, len(pods))
		for j, p := range pods {
			fresh[i][j] = p.DeepCopy()
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		r := newResourceInterner()
		for range 2 {
			for _, p := range fresh[i] {
				r.pod(p)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pods)), "ns/pod")
}

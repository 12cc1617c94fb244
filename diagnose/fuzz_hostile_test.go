package diagnose

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

func fuzzTemplate() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		NodeSelector: map[string]string{"disk": "ssd"},
		Containers: []corev1.Container{{
			Name: "web", Image: "registry.internal/web:1.0",
			Env:            []corev1.EnvVar{{Name: "A", Value: "1"}},
			Resources:      corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")}}},
		}},
	}}
}

// FuzzDescend walks the field-path walker down a pod template along any path text: it must
// never panic, whatever brackets, dots and indexes the text holds.
func FuzzDescend(f *testing.F) {
	for _, s := range []string{
		".spec.containers[0].image", ".spec.nodeSelector[disk]", ".spec.containers[0].resources.requests[cpu]",
		".spec.containers[9]", "[", ".spec.containers[-1]", ".spec.containers[0].readinessProbe.httpGet.port", "..", ".spec.containers[0",
	} {
		f.Add(s)
	}
	tmpl := fuzzTemplate()
	root := field.NewPath("spec", "template")
	f.Fuzz(func(_ *testing.T, rest string) {
		descend(reflect.ValueOf(tmpl), rest)
		valueAt(root, tmpl, field.NewPath("spec", "template").Child(rest))
	})
}

// TestUntilStops checks the cancellation hook: a closed channel stops the diagnosis
// with ErrCanceled, an open one changes nothing.
func TestUntilStops(t *testing.T) {
	s := manyContainers(t, 3)
	done := make(chan struct{})
	r, err := Until(s, done)
	if err != nil || len(r.Workloads) != 1 {
		t.Fatalf("open channel: %v workloads, %v", r, err)
	}
	close(done)
	if r, err := Until(s, done); !errors.Is(err, ErrCanceled) || r != nil {
		t.Errorf("closed channel: %v, %v; want ErrCanceled", r, err)
	}
}

// TestTenThousandContainers diagnoses a pod template of 10,000 containers, and one of 5,000:
// bounded time, no quadratic growth.
func TestTenThousandContainers(t *testing.T) {
	run := func(n int) time.Duration {
		s := manyContainers(t, n)
		start := time.Now()
		r := Diagnose(s)
		if len(r.Workloads) != 1 {
			t.Fatalf("%d workloads", len(r.Workloads))
		}
		return time.Since(start)
	}
	// The faster of two runs each: a busy machine stretches single runs unevenly, and
	// quadratic work shows in both.
	a, b := run(5000), run(10000)
	a, b = min(a, run(5000)), min(b, run(10000))
	t.Logf("5,000 containers in %s, 10,000 in %s", a, b)
	if b > 30*time.Second {
		t.Errorf("10,000 containers took %s", b)
	}
	if b > 4*a+time.Second {
		t.Errorf("twice the containers took %.1f times as long", float64(b)/float64(a))
	}
}

func manyContainers(t *testing.T, n int) *snapshot.Snapshot {
	t.Helper()
	c := newCluster()
	d := c.deployment("wide", 1, 1, "NewReplicaSetAvailable", time.Hour)
	var cs []corev1.Container
	for i := 0; i < n; i++ {
		cs = append(cs, corev1.Container{Name: fmt.Sprintf("c%d", i), Image: "busybox:" + strings.Repeat("1", 1+i%3)})
	}
	d.Spec.Template.Spec.Containers = cs
	return c.s
}

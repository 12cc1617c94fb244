package diagnose

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

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

package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/metrics"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
	"github.com/kubediagnose/kubectl-diagnose/test/testbed/promtest"
)

// TestWatchWithMetrics: the live console's watch gains the Prometheus reading without a new
// cluster event, reads again on its interval, and goes on with a visibility entry once
// Prometheus is stopped.
func TestWatchWithMetrics(t *testing.T) {
	exp := promtest.StartExporter(t)
	exp.SetRate("readings_accepted_total", "dev", "web-6f5d4c8b2-h7j6k", 20)
	prom := promtest.StartPrometheus(t, exp.Addr)
	src, err := metrics.New(metrics.Config{URL: prom.URL, Window: time.Minute, Step: time.Second, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	in := make(chan *snapshot.Snapshot, 1)
	in <- &snapshot.Snapshot{Deployments: []*appsv1.Deployment{{ObjectMeta: metav1.ObjectMeta{
		Namespace: "dev", Name: "web",
		Annotations: map[string]string{metrics.AnnotationThroughput: `sum(rate(readings_accepted_total{namespace="$namespace",pod=~"$pods"}[5s]))`},
	}}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch := watchWithMetrics(src, 300*time.Millisecond, func(context.Context) (<-chan *snapshot.Snapshot, <-chan error) {
		return in, make(chan error)
	})
	out, _ := watch(ctx)
	next := func(what string, cond func(*snapshot.Snapshot) bool) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case s, ok := <-out:
				if !ok {
					t.Fatalf("watch closed waiting for %s", what)
				}
				if cond(s) {
					return
				}
			case <-deadline:
				t.Fatalf("no snapshot with %s within 30s", what)
			}
		}
	}
	next("the workload's throughput", func(s *snapshot.Snapshot) bool {
		return s.MetricsFor("Deployment", "dev", "web", snapshot.RoleThroughput) != nil
	})
	prom.Stop()
	next("Prometheus said unreachable", func(s *snapshot.Snapshot) bool {
		for _, v := range s.Visibility {
			if v.Kind == metrics.VisibilityKind && strings.Contains(v.Reason, "connection refused") {
				return len(s.Deployments) == 1
			}
		}
		return false
	})
}

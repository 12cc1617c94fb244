package metrics

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
	"github.com/kubediagnose/kubectl-diagnose/test/testbed/promtest"
)

// BenchmarkRead2000 reads the throughput of 2,000 Deployments in 20 namespaces from a real
// Prometheus scraping one request counter per workload: batched (the default queries) and,
// for comparison, one query per workload (an annotation the batcher cannot merge).
func BenchmarkRead2000(b *testing.B) {
	exp := promtest.StartExporter(b)
	var deps []*appsv1.Deployment
	for i := range 2000 {
		ns, name := fmt.Sprintf("team-%02d", i%20), fmt.Sprintf("svc-%04d", i)
		exp.SetRate("http_requests_total", ns, name+"-6f5d4c8b2-h7j6k", float64(1+i%7))
		deps = append(deps, deployment(ns, name, nil, nil))
	}
	prom := promtest.StartPrometheus(b, exp.Addr)
	src, err := New(Config{URL: prom.URL, Window: time.Minute, Step: 2 * time.Second, Timeout: 30 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	read := func(b *testing.B, ds []*appsv1.Deployment) int {
		snap := &snapshot.Snapshot{ReferenceTime: time.Now(), Deployments: ds}
		src.Read(context.Background(), snap)
		if len(snap.Visibility) > 0 {
			b.Fatalf("visibility: %v", snap.Visibility[0])
		}
		return len(snap.Metrics.Series)
	}
	// Wait until every counter has been scraped twice, so each workload has a series.
	deadline := time.Now().Add(60 * time.Second)
	for read(b, deps) < len(deps) {
		if time.Now().After(deadline) {
			b.Fatal("not every workload has a series after 60s")
		}
		time.Sleep(time.Second)
	}
	b.Run("batched", func(b *testing.B) {
		for b.Loop() {
			if n := read(b, deps); n != len(deps) {
				b.Fatalf("%d series, want %d", n, len(deps))
			}
		}
	})
	b.Run("per-workload", func(b *testing.B) {
		annotated := make([]*appsv1.Deployment, len(deps))
		for i, d := range deps {
			annotated[i] = deployment(d.Namespace, d.Name, nil, map[string]string{
				AnnotationThroughput: `sum(rate(http_requests_total{namespace="$namespace",pod=~"$pods"}[2m])) * 1`,
			})
		}
		for b.Loop() {
			if n := read(b, annotated); n != len(deps) {
				b.Fatalf("%d series, want %d", n, len(deps))
			}
		}
	})
}

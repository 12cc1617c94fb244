package rollout

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

// TestMetricsThroughputOnARealPrometheus answers the gate's query from a real Prometheus
// scraping counters the test drives: output flowing since the rollout looked done is
// producing, output that stops is not, a workload no query answers for is not gated, and a
// Prometheus that cannot be reached is an error.
func TestMetricsThroughputOnARealPrometheus(t *testing.T) {
	exp := promtest.StartExporter(t)
	exp.SetRate("readings_accepted_total", "dev", "ingester-7d9f8c6b5-x2x9k", 40)
	prom := promtest.StartPrometheus(t, exp.Addr)
	src, err := metrics.New(metrics.Config{URL: prom.URL, Window: time.Minute, Step: time.Second, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	snap := &snapshot.Snapshot{Deployments: []*appsv1.Deployment{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "dev", Name: "ingester", Annotations: map[string]string{
			metrics.AnnotationThroughput:     `sum(rate(readings_accepted_total{namespace="$namespace",pod=~"$pods"}[5s]))`,
			metrics.AnnotationThroughputUnit: "readings/s",
		}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "dev", Name: "quiet"}},
	}}
	q := &MetricsThroughput{Source: src, Every: 100 * time.Millisecond}
	in := make(chan *snapshot.Snapshot, 1)
	in <- snap
	close(in)
	for range q.Feed(in) {
	}
	ctx := context.Background()
	ingester := Target{Kind: "Deployment", Namespace: "dev", Name: "ingester"}
	since := time.Now()
	wait := func(what string, ok func(*Output) bool) *Output {
		t.Helper()
		deadline := time.Now().Add(40 * time.Second)
		for {
			out, err := q.Output(ctx, ingester, since)
			if err != nil {
				t.Fatal(err)
			}
			if ok(out) {
				return out
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 40s: %+v, want %s", out, what)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	out := wait("producing", func(o *Output) bool { return o.Producing })
	// A 5s rate over the first scrapes ramps up to 40: the value varies, the unit does not.
	if !strings.HasPrefix(out.Detail, "producing ") || !strings.HasSuffix(out.Detail, " readings/s") {
		t.Errorf("detail %q", out.Detail)
	}
	exp.SetRate("readings_accepted_total", "dev", "ingester-7d9f8c6b5-x2x9k", 0)
	out = wait("not producing", func(o *Output) bool { return !o.Producing })
	if !strings.Contains(out.Detail, "throughput 0 readings/s") {
		t.Errorf("detail %q", out.Detail)
	}

	quiet, err := q.Output(ctx, Target{Kind: "Deployment", Namespace: "dev", Name: "quiet"}, since)
	if err != nil || !quiet.Producing || !strings.Contains(quiet.Detail, "not gated") {
		t.Errorf("a workload without a query: %+v, %v", quiet, err)
	}

	gone, err := metrics.New(metrics.Config{URL: "http://127.0.0.1:1", Window: time.Minute, Step: time.Second, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	q = &MetricsThroughput{Source: gone}
	in = make(chan *snapshot.Snapshot, 1)
	in <- snap
	close(in)
	for range q.Feed(in) {
	}
	if _, err := q.Output(ctx, ingester, since); err == nil || !strings.Contains(err.Error(), "read the throughput") {
		t.Errorf("an unreachable Prometheus: %v", err)
	}
}

func TestJudgeWaitsForADeclaredQuery(t *testing.T) {
	target := Target{Kind: "Deployment", Namespace: "dev", Name: "api"}
	since := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	empty := &snapshot.Snapshot{Metrics: &snapshot.Metrics{}}
	if out, err := judge(empty, target, since, true); err != nil || out.Producing {
		t.Errorf("declared, no series: %+v %v, want a wait", out, err)
	}
	if out, err := judge(empty, target, since, false); err != nil || !out.Producing {
		t.Errorf("no query: %+v %v, want not gated", out, err)
	}
	key := snapshot.ObjectKey{Kind: "Deployment", Namespace: "dev", Name: "api"}
	series := func(vals ...float64) *snapshot.Snapshot {
		s := snapshot.MetricSeries{Workload: key, Role: snapshot.RoleThroughput, Unit: "requests/s"}
		// One sample before since, which does not count.
		s.Samples = append(s.Samples, snapshot.Sample{Time: since.Add(-time.Second), Value: 0})
		for i, v := range vals {
			s.Samples = append(s.Samples, snapshot.Sample{Time: since.Add(time.Duration(i) * time.Second), Value: v})
		}
		return &snapshot.Snapshot{Metrics: &snapshot.Metrics{Series: []snapshot.MetricSeries{s}}}
	}
	for _, tt := range []struct {
		vals      []float64
		producing bool
		detail    string
	}{
		{nil, false, "no throughput sample yet since"},
		{[]float64{3, 4}, true, "producing 4 requests/s"},
		{[]float64{3, 0, 4}, false, "throughput 0 requests/s at 2026-12-01T10:00:01Z"},
	} {
		out, err := judge(series(tt.vals...), target, since, true)
		if err != nil || out.Producing != tt.producing || !strings.Contains(out.Detail, tt.detail) {
			t.Errorf("%v: %+v %v, want producing %v and %q", tt.vals, out, err, tt.producing, tt.detail)
		}
	}
	unreachable := &snapshot.Snapshot{Metrics: &snapshot.Metrics{}, Visibility: []snapshot.Visibility{{Kind: "Prometheus", Reason: "connection refused"}}}
	if _, err := judge(unreachable, target, since, true); err == nil {
		t.Error("an unreachable Prometheus must be an error")
	}
}

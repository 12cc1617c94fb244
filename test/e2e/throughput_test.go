package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/test/testbed/promtest"
)

// tpReport is the part of the report the throughput test reads; the shared report type
// refuses keys it does not know, and the throughput section is one of them.
type tpReport struct {
	Visibility []visibility `json:"visibility"`
	Workloads  []struct {
		Kind       string      `json:"kind"`
		Name       string      `json:"name"`
		Shape      string      `json:"shape"`
		Cause      string      `json:"cause"`
		Headline   string      `json:"headline"`
		Fix        string      `json:"fix"`
		Evidence   []evidence  `json:"evidence"`
		Suspects   []suspect   `json:"suspects"`
		SignalGaps []signalGap `json:"signalGaps"`
		Throughput *struct {
			Query         string   `json:"query"`
			Origin        string   `json:"origin"`
			Unit          string   `json:"unit"`
			Current       *float64 `json:"current"`
			Baseline      *float64 `json:"baseline"`
			Verdict       string   `json:"verdict"`
			OnsetRevision string   `json:"onsetRevision"`
			Samples       []struct {
				Value float64 `json:"value"`
			} `json:"samples"`
			Backlog *struct {
				Rising bool `json:"rising"`
			} `json:"backlog"`
			Capacity *struct {
				Message string `json:"message"`
			} `json:"capacity"`
		} `json:"throughput"`
	} `json:"workloads"`
}

// tpVerdict is what the test expects of one workload; empty fields are not checked.
type tpVerdict struct {
	name, shape, cause, verdict, evidence, onsetRevision string
	capacity, gap                                        bool
}

func (r *tpReport) check(v tpVerdict) string {
	for _, w := range r.Workloads {
		if w.Kind != "Deployment" || w.Name != v.name {
			continue
		}
		b, _ := json.MarshalIndent(w, "", "  ")
		got := string(b)
		switch {
		case v.shape != "" && w.Shape != v.shape, v.cause != "" && w.Cause != v.cause:
			return fmt.Sprintf("%s: want shape %s cause %s:\n%s", v.name, v.shape, v.cause, got)
		case v.verdict != "" && (w.Throughput == nil || w.Throughput.Verdict != v.verdict || w.Throughput.OnsetRevision != v.onsetRevision):
			return fmt.Sprintf("%s: want throughput verdict %s onset revision %q:\n%s", v.name, v.verdict, v.onsetRevision, got)
		case v.capacity && (w.Throughput == nil || w.Throughput.Capacity == nil):
			return fmt.Sprintf("%s: want a capacity finding:\n%s", v.name, got)
		}
		if v.evidence != "" {
			found := false
			for _, e := range w.Evidence {
				found = found || (e.Kind == v.evidence && e.Source == "metrics")
			}
			if !found {
				return fmt.Sprintf("%s: want %s evidence from metrics:\n%s", v.name, v.evidence, got)
			}
		}
		if v.gap {
			found := false
			for _, g := range w.SignalGaps {
				found = found || strings.Contains(g.Message, "the count is all anyone gets")
			}
			if !found {
				return fmt.Sprintf("%s: want the throughput signal gap:\n%s", v.name, got)
			}
		}
		return ""
	}
	return v.name + " is not in the report"
}

func tpAudit(t *testing.T, args ...string) (*tpReport, result) {
	t.Helper()
	res := diagnoseCmd(t, append([]string{"audit", "-o", "json"}, args...)...)
	if res.code != 0 {
		t.Fatalf("audit %s: exit %d\nstderr: %s", strings.Join(args, " "), res.code, res.stderr)
	}
	var r tpReport
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("decode audit: %v\n%s", err, res.stdout)
	}
	return &r, res
}

// rateDriver sets each copy's counters from its revision (pod-template-hash) as copies come and
// go, so the exporter's series carry the names of the simulated pods.
type rateDriver struct {
	e   *env
	exp *promtest.Exporter
	mu  sync.Mutex
	// rates maps an app to a function of its copy's revision index (0 for the first seen).
	rates  map[string]func(rev int) float64
	growth map[string]float64
	hashes map[string][]string
	seen   map[string]string
}

func (d *rateDriver) set(app string, f func(rev int) float64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rates[app] = f
}

func (d *rateDriver) run(ctx context.Context, t *testing.T) {
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		l, err := d.e.cs.CoreV1().Pods(d.e.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			if ctx.Err() == nil {
				t.Logf("rate driver: %v", err)
			}
			continue
		}
		d.mu.Lock()
		live := map[string]bool{}
		for _, p := range l.Items {
			app, hash := p.Labels["app"], p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
			f, ok := d.rates[app]
			if !ok || p.DeletionTimestamp != nil {
				continue
			}
			rev := -1
			for i, h := range d.hashes[app] {
				if h == hash {
					rev = i
				}
			}
			if rev < 0 {
				d.hashes[app] = append(d.hashes[app], hash)
				rev = len(d.hashes[app]) - 1
			}
			live[p.Name] = true
			d.seen[p.Name] = app
			d.exp.SetRate("readings_accepted_total", d.e.ns, p.Name, f(rev))
			if g, ok := d.growth[app]; ok {
				d.exp.SetGrowth("ingest_queue_depth", d.e.ns, p.Name, g)
			}
		}
		for name := range d.seen {
			if !live[name] {
				// A copy that is gone produces nothing.
				d.exp.SetRate("readings_accepted_total", d.e.ns, name, 0)
			}
		}
		d.mu.Unlock()
	}
}

const (
	throughputQuery = `sum(rate(readings_accepted_total{namespace="$namespace",pod=~"$pods"}[10s]))`
	backlogQuery    = `sum(ingest_queue_depth{namespace="$namespace",pod=~"$pods"})`
)

func annotated(d *appsv1.Deployment, backlog bool) *appsv1.Deployment {
	d.Annotations = map[string]string{
		"kubediagnose.dev/throughput":      throughputQuery,
		"kubediagnose.dev/throughput-unit": "readings/s",
	}
	if backlog {
		d.Annotations["kubediagnose.dev/backlog"] = backlogQuery
		d.Annotations["kubediagnose.dev/backlog-unit"] = "readings"
	}
	return d
}

// TestThroughputOnALiveCluster runs a real Prometheus scraping an exporter whose counters carry
// the simulated pods' names, beside workloads whose copies all pass their readiness probes:
// one that ingests nothing, one whose upstream stops with no rollout, one whose new revision
// halves its output, one whose queue grows at full count, one behind a Service no query
// measures. It then saves and replays the answers offline, and stops Prometheus.
func TestThroughputOnALiveCluster(t *testing.T) {
	t.Parallel()
	exp := promtest.StartExporter(t)
	prom := promtest.StartPrometheus(t, exp.Addr)
	e := newEnv(t, world())

	e.create(t, annotated(ingester("idle", 2, reachableIntake), false), true)
	e.create(t, annotated(ingester("feeder", 2, reachableIntake), false), true)
	e.create(t, annotated(ingester("halver", 2, reachableIntake), false), true)
	e.create(t, annotated(ingester("queue", 2, reachableIntake), true), true)
	e.create(t, ingester("plain", 2, reachableIntake), true)

	drv := &rateDriver{
		e: e, exp: exp, rates: map[string]func(int) float64{}, growth: map[string]float64{"queue": 40},
		hashes: map[string][]string{}, seen: map[string]string{},
	}
	drv.set("idle", func(int) float64 { return 0 })
	drv.set("feeder", func(int) float64 { return 50 })
	// Revision 1's copies ingest 60/s each; revision 2's, 25/s: the rollout halves the output.
	drv.set("halver", func(rev int) float64 {
		if rev == 0 {
			return 60
		}
		return 25
	})
	drv.set("queue", func(int) float64 { return 30 })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); drv.run(ctx, t) }()
	t.Cleanup(func() { cancel(); <-done })

	for _, n := range []string{"idle", "feeder", "halver", "queue", "plain"} {
		e.waitServing(t, n, 2)
		// Serving is through the Service: the scenarios start from copies that are its ready
		// endpoints, which the EndpointSlice controller writes after the Deployment reports them.
		e.waitEndpoints(t, n, 2)
	}
	kc := cp.AdminKubeconfig()
	promArgs := []string{"--kubeconfig", kc, "-n", e.ns, "--prometheus", prom.URL, "--prometheus-window", "2m", "--prometheus-step", "2s"}

	// A level before the change: every steady workload healthy, the idle one already idle.
	eventuallyTP(t, 60*time.Second, promArgs,
		tpVerdict{name: "feeder", shape: "healthy", verdict: "steady"},
		tpVerdict{name: "halver", shape: "healthy", verdict: "steady"},
		tpVerdict{name: "idle", shape: "live-but-idle", cause: "unknown", verdict: "zero", evidence: "ThroughputZero"},
	)
	time.Sleep(15 * time.Second) // more samples of the level the falls are measured against

	drv.set("feeder", func(int) float64 { return 0 }) // its upstream stops sending; no rollout
	e.update(t, "halver", func(c *corev1.Container) {
		c.Env = append(c.Env, corev1.EnvVar{Name: "BATCH_SIZE", Value: "16"})
	})
	e.waitServing(t, "halver", 2)

	want := []tpVerdict{
		{name: "idle", shape: "live-but-idle", cause: "unknown", verdict: "zero", evidence: "ThroughputZero"},
		{name: "feeder", shape: "live-but-idle", cause: "dependency", verdict: "zero", evidence: "ThroughputZero"},
		{name: "halver", shape: "live-but-idle", cause: "spec", verdict: "fell", evidence: "ThroughputFell", onsetRevision: "2"},
		{name: "queue", shape: "healthy", verdict: "steady", evidence: "BacklogRising", capacity: true},
		{name: "plain", shape: "healthy", gap: true},
	}
	r := eventuallyTP(t, 90*time.Second, promArgs, want...)
	for _, w := range r.Workloads {
		switch w.Name {
		case "idle":
			if !strings.Contains(w.Headline, "every copy is Ready, but its output is zero") {
				t.Errorf("idle headline %q", w.Headline)
			}
			if w.Throughput.Origin != "annotation" || !strings.Contains(w.Throughput.Query, `namespace="`+e.ns+`"`) || w.Throughput.Unit != "readings/s" {
				t.Errorf("idle throughput names query %q origin %q unit %q", w.Throughput.Query, w.Throughput.Origin, w.Throughput.Unit)
			}
		case "feeder":
			if len(w.Suspects) != 0 {
				t.Errorf("feeder suspects %+v, want none: no rollout explains the fall", w.Suspects)
			}
			if !evidenceSays(w.Evidence, "with no rollout") || w.Throughput.Baseline == nil || *w.Throughput.Baseline < 60 {
				t.Errorf("feeder evidence %+v baseline %v, want the level before (about 100/s) and no rollout", w.Evidence, w.Throughput.Baseline)
			}
		case "halver":
			if !evidenceSays(w.Evidence, "before revision 2") || !strings.Contains(w.Fix, "rollout undo deployment/halver --to-revision=1") {
				t.Errorf("halver evidence %+v fix %q", w.Evidence, w.Fix)
			}
			if len(w.Suspects) == 0 || !strings.HasPrefix(w.Suspects[0].Path, "spec.template.spec.containers[0].env[1]") {
				t.Errorf("halver suspects %+v, want the env var revision 2 added", w.Suspects)
			}
			if c := w.Throughput.Current; c == nil || *c < 35 || *c > 65 {
				t.Errorf("halver current = %v, want about 50 readings/s", c)
			}
		}
	}

	// Offline: the dump saves each query and its answer; replayed without Prometheus, the
	// verdicts are the same.
	dir := filepath.Join(t.TempDir(), "incident")
	if res := diagnoseCmd(t, append([]string{"dump", "--output-directory", dir}, promArgs...)...); res.code != 0 || !strings.Contains(res.stderr, "Prometheus series") {
		t.Fatalf("dump: exit %d: %s", res.code, res.stderr)
	}
	replayed, _ := tpAudit(t, "--dump", dir)
	for _, v := range want[:3] {
		if d := replayed.check(v); d != "" {
			t.Errorf("replayed dump: %s", d)
		}
	}

	// Prometheus goes away: the audit still answers, and says what it could not read.
	prom.Stop()
	start := time.Now()
	down, res := tpAudit(t, append(promArgs, "--prometheus-timeout", "2s")...)
	if time.Since(start) > 30*time.Second {
		t.Errorf("audit with Prometheus down took %s", time.Since(start))
	}
	found := false
	for _, v := range down.Visibility {
		found = found || (v.Kind == "Prometheus" && strings.Contains(v.Reason, prom.URL) && strings.Contains(v.Reason, "connection refused"))
	}
	if !found || !strings.Contains(res.stderr, "warning: could not read Prometheus") {
		t.Errorf("visibility = %+v, stderr %q: want Prometheus unreachable said", down.Visibility, res.stderr)
	}
	if d := down.check(tpVerdict{name: "queue", shape: "healthy"}); d != "" {
		t.Errorf("with Prometheus down: %s", d)
	}
	for _, w := range down.Workloads {
		if w.Throughput != nil {
			t.Errorf("%s has a throughput section with Prometheus down", w.Name)
		}
		for _, g := range w.SignalGaps {
			if strings.Contains(g.Message, "the count is all anyone gets") && strings.Contains(g.Path, "throughput") {
				t.Errorf("%s: a throughput signal gap while Prometheus could not be read", w.Name)
			}
		}
	}
}

func evidenceSays(es []evidence, s string) bool {
	for _, e := range es {
		if e.Source == "metrics" && strings.Contains(e.Message, s) {
			return true
		}
	}
	return false
}

// eventuallyTP audits until every verdict holds.
func eventuallyTP(t *testing.T, timeout time.Duration, args []string, want ...tpVerdict) *tpReport {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		r, _ := tpAudit(t, args...)
		var diffs []string
		for _, v := range want {
			if d := r.check(v); d != "" {
				diffs = append(diffs, d)
			}
		}
		if len(diffs) == 0 {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v the audit still differs:\n%s", timeout, strings.Join(diffs, "\n"))
		}
		time.Sleep(2 * time.Second)
	}
}

// waitEndpoints waits until the Service named name lists n ready endpoints in its EndpointSlices.
func (e *env) waitEndpoints(t *testing.T, name string, n int) {
	t.Helper()
	eventually(t, 90*time.Second, func() string {
		l, err := e.cs.DiscoveryV1().EndpointSlices(e.ns).List(context.Background(), metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
		if err != nil {
			return err.Error()
		}
		ready := 0
		for _, sl := range l.Items {
			for _, ep := range sl.Endpoints {
				if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
					ready++
				}
			}
		}
		if ready < n {
			return fmt.Sprintf("service %s: %d ready endpoints, want %d", name, ready, n)
		}
		return ""
	})
}

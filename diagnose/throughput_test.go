package diagnose

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

const tpUnit = "readings/s"

// addSeries records a series of one Deployment ending at the reference time, one sample per
// step, as the metrics source would.
func (c *cluster) addSeries(name string, role snapshot.MetricRole, origin snapshot.QueryOrigin, step time.Duration, values ...float64) {
	if c.s.Metrics == nil {
		c.s.Metrics = &snapshot.Metrics{Source: "http://prometheus.test:9090"}
	}
	start := testRef.Add(-time.Duration(len(values)-1) * step)
	m := snapshot.MetricSeries{
		Workload: snapshot.ObjectKey{Kind: "Deployment", Namespace: testNS, Name: name}, Role: role, Origin: origin,
		Template: "q", Query: "sum(rate(readings_accepted_total{pod=~\"" + name + "-.*\"}[2m]))", Unit: tpUnit,
		Start: start, End: testRef, Step: step,
	}
	if role == snapshot.RoleBacklog {
		m.Unit = "readings"
	}
	for i, v := range values {
		m.Samples = append(m.Samples, snapshot.Sample{Time: start.Add(time.Duration(i) * step), Value: v})
	}
	c.s.Metrics.Series = append(c.s.Metrics.Series, m)
}

// repeat returns n copies of v.
func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func concat(xs ...[]float64) []float64 {
	var out []float64
	for _, x := range xs {
		out = append(out, x...)
	}
	return out
}

// healthyAt builds a Deployment with 3 Ready copies of its current revision; with rolled set,
// revision 2 replaced revision 1 that long ago.
func healthyAt(c *cluster, name string, rolled time.Duration) {
	const day = 24 * time.Hour
	if rolled == 0 {
		d := c.deployment(name, 3, 1, reasonNewRSAvailable, 3*day)
		rs := c.replicaSet(d, 1, 3, 3*day, nil)
		for _, s := range []string{"a", "b", "c"} {
			c.pod(rs, s, 3*day, running(true))
		}
		return
	}
	d := c.deployment(name, 3, 2, reasonNewRSAvailable, 3*day)
	d.Spec.Template.Spec.Containers[0].Env[0].Value = "upstream.internal:9443"
	c.replicaSet(d, 1, 0, 3*day, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Env[0].Value = "upstream.internal:8443" })
	rs := c.replicaSet(d, 2, 3, rolled, nil)
	for _, s := range []string{"a", "b", "c"} {
		c.pod(rs, s, rolled-10*time.Second, running(true))
	}
}

func TestThroughputRules(t *testing.T) {
	const step = 30 * time.Second
	tests := []struct {
		name  string
		build func(c *cluster)
		// want
		shape        Shape
		cause        Cause
		verdict      ThroughputVerdict
		evidence     string
		message      []string
		onsetRev     string
		fix          string
		capacity     bool
		gap          bool
		noThroughput bool
	}{
		{
			name: "zero throughout an annotated query while every copy is Ready is live-but-idle",
			build: func(c *cluster) {
				healthyAt(c, "ingester", 0)
				c.addSeries("ingester", snapshot.RoleThroughput, snapshot.OriginAnnotation, step, repeat(0, 60)...)
			},
			shape: ShapeLiveButIdle, cause: CauseUnknown, verdict: VerdictZero, evidence: "ThroughputZero",
			message: []string{"0 readings/s for the whole range read (29m)", "query from annotation"},
			fix:     "kubectl describe deployment/ingester -n shop",
		},
		{
			name: "a fall to zero right after revision 2 rolled out is the spec",
			build: func(c *cluster) {
				healthyAt(c, "ingester", 10*time.Minute)
				// 1,240/s until 9m ago, then nothing: the new copies took over about a minute after the rollout.
				c.addSeries("ingester", snapshot.RoleThroughput, snapshot.OriginAnnotation, step, concat(repeat(1240, 41), repeat(0, 19))...)
			},
			shape: ShapeLiveButIdle, cause: CauseSpec, verdict: VerdictZero, evidence: "ThroughputZero", onsetRev: "2",
			message: []string{"0 readings/s for 9m", "1,240 readings/s before revision 2"},
			fix:     "kubectl rollout undo deployment/ingester --to-revision=1 -n shop",
		},
		{
			name: "a halving after a rollout is the spec too, as a fall rather than zero",
			build: func(c *cluster) {
				healthyAt(c, "ingester", 4*time.Minute)
				c.addSeries("ingester", snapshot.RoleThroughput, snapshot.OriginConfig, step, concat(repeat(120, 50), []float64{110, 80}, repeat(48, 8))...)
			},
			shape: ShapeLiveButIdle, cause: CauseSpec, verdict: VerdictFell, evidence: "ThroughputFell", onsetRev: "2",
			message: []string{"48 readings/s (at most 50% of before)", "before revision 2", "query from config"},
			fix:     "kubectl rollout undo deployment/ingester --to-revision=1 -n shop",
		},
		{
			// Recorded from Prometheus 2.42 in the e2e test: a 10s rate ramps up from the first
			// scrapes, and the rollout's transition passes through every level between.
			name: "a halving after a ramp-up and a slow transition, at a 2s step, is still a fall",
			build: func(c *cluster) {
				healthyAt(c, "ingester", 30*time.Second)
				c.addSeries("ingester", snapshot.RoleThroughput, snapshot.OriginAnnotation, 2*time.Second,
					concat([]float64{31.9, 55.9, 79.9, 103.9, 120.2, 120, 111.5, 94.9, 77.3, 60.3, 47.5}, repeat(50, 10))...)
			},
			shape: ShapeLiveButIdle, cause: CauseSpec, verdict: VerdictFell, evidence: "ThroughputFell", onsetRev: "2",
			message: []string{"50 readings/s (at most 50% of before) for 20s", "112 readings/s before revision 2"},
		},
		{
			name: "a fall with no rollout is a dependency",
			build: func(c *cluster) {
				healthyAt(c, "ingester", 0)
				c.addSeries("ingester", snapshot.RoleThroughput, snapshot.OriginAnnotation, step, concat(repeat(500, 42), repeat(0, 18))...)
			},
			shape: ShapeLiveButIdle, cause: CauseDependency, verdict: VerdictZero, evidence: "ThroughputZero",
			message: []string{"0 readings/s for 8m", "500 readings/s before 11:51:30 UTC, with no rollout"},
			fix:     "look outside the spec first",
		},
		{
			name: "a rollout long before the fall is not its cause",
			build: func(c *cluster) {
				healthyAt(c, "ingester", 25*time.Minute)
				c.addSeries("ingester", snapshot.RoleThroughput, snapshot.OriginAnnotation, step, concat(repeat(500, 50), repeat(0, 10))...)
			},
			shape: ShapeLiveButIdle, cause: CauseDependency, verdict: VerdictZero, evidence: "ThroughputZero",
			message: []string{"with no rollout"},
		},
		{
			name: "noisy but level throughput stays healthy",
			build: func(c *cluster) {
				healthyAt(c, "ingester", 0)
				var v []float64
				for i := range 60 {
					v = append(v, 100+float64(i%5*10)-20)
				}
				c.addSeries("ingester", snapshot.RoleThroughput, snapshot.OriginAnnotation, step, v...)
			},
			shape: ShapeHealthy, cause: CauseUnknown, verdict: VerdictSteady,
		},
		{
			name: "a dip that recovered stays healthy",
			build: func(c *cluster) {
				healthyAt(c, "ingester", 0)
				c.addSeries("ingester", snapshot.RoleThroughput, snapshot.OriginAnnotation, step, concat(repeat(300, 30), repeat(0, 10), repeat(300, 20))...)
			},
			shape: ShapeHealthy, cause: CauseUnknown, verdict: VerdictSteady,
		},
		{
			name: "a default request counter at zero throughout may mean no client called: healthy",
			build: func(c *cluster) {
				healthyAt(c, "web", 0)
				c.addSeries("web", snapshot.RoleThroughput, snapshot.OriginDefault, step, repeat(0, 60)...)
			},
			shape: ShapeHealthy, cause: CauseUnknown, verdict: VerdictZero, evidence: "ThroughputZero",
		},
		{
			name: "a backlog rising at full count is a capacity finding, not a failure",
			build: func(c *cluster) {
				healthyAt(c, "ingester", 0)
				c.addSeries("ingester", snapshot.RoleThroughput, snapshot.OriginAnnotation, step, repeat(900, 60)...)
				var b []float64
				for i := range 60 {
					b = append(b, 1000+float64(i)*150)
				}
				c.addSeries("ingester", snapshot.RoleBacklog, snapshot.OriginAnnotation, step, b...)
			},
			shape: ShapeHealthy, cause: CauseUnknown, verdict: VerdictSteady, evidence: "BacklogRising", capacity: true,
			message: []string{"backlog 1,000 → 9,850 readings over 29m while 3 of 3 copies serve"},
		},
		{
			name: "a backlog that drains is no finding",
			build: func(c *cluster) {
				healthyAt(c, "ingester", 0)
				var b []float64
				for i := range 60 {
					b = append(b, 9000-float64(i)*100)
				}
				c.addSeries("ingester", snapshot.RoleBacklog, snapshot.OriginConfig, step, b...)
			},
			shape: ShapeHealthy, cause: CauseUnknown, verdict: VerdictNoData,
		},
		{
			name: "behind a Service with no throughput series is a signal gap",
			build: func(c *cluster) {
				healthyAt(c, "ingester", 0)
				c.service("ingester", "ingester")
				c.s.Metrics = &snapshot.Metrics{Source: "http://prometheus.test:9090"}
			},
			shape: ShapeHealthy, cause: CauseUnknown, gap: true, noThroughput: true,
		},
		{
			name: "an unreachable Prometheus is not a signal gap of every workload",
			build: func(c *cluster) {
				healthyAt(c, "ingester", 0)
				c.service("ingester", "ingester")
				c.s.Metrics = &snapshot.Metrics{Source: "http://prometheus.test:9090"}
				c.s.Visibility = append(c.s.Visibility, snapshot.Visibility{Kind: "Prometheus", Reason: "connection refused"})
			},
			shape: ShapeHealthy, cause: CauseUnknown, noThroughput: true,
		},
		{
			name: "without a metrics source nothing changes",
			build: func(c *cluster) {
				healthyAt(c, "ingester", 0)
				c.service("ingester", "ingester")
			},
			shape: ShapeHealthy, cause: CauseUnknown, noThroughput: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			tt.build(c)
			r := Diagnose(c.s)
			var d *Diagnosis
			for i := range r.Workloads {
				d = &r.Workloads[i]
			}
			if d == nil {
				t.Fatal("no diagnosis")
			}
			if d.Shape != tt.shape || d.Cause != tt.cause {
				t.Errorf("shape %s cause %s, want %s %s (headline %q)", d.Shape, d.Cause, tt.shape, tt.cause, d.Headline)
			}
			if tt.noThroughput {
				if d.Throughput != nil {
					t.Errorf("throughput = %+v, want none", d.Throughput)
				}
			} else if d.Throughput == nil {
				t.Fatal("no throughput section")
			} else {
				if d.Throughput.Verdict != tt.verdict || d.Throughput.OnsetRevision != tt.onsetRev {
					t.Errorf("verdict %s onset revision %q, want %s %q", d.Throughput.Verdict, d.Throughput.OnsetRevision, tt.verdict, tt.onsetRev)
				}
				if (d.Throughput.Capacity != nil) != tt.capacity {
					t.Errorf("capacity = %+v, want present %v", d.Throughput.Capacity, tt.capacity)
				}
			}
			var ev *Evidence
			for i := range d.Evidence {
				if d.Evidence[i].Source == SourceMetrics {
					if ev != nil {
						t.Errorf("two metrics evidence entries: %q and %q", ev.Message, d.Evidence[i].Message)
					}
					ev = &d.Evidence[i]
				}
			}
			switch {
			case tt.evidence == "" && ev != nil:
				t.Errorf("evidence %s %q, want none from metrics", ev.Kind, ev.Message)
			case tt.evidence != "" && (ev == nil || ev.Kind != tt.evidence):
				t.Errorf("evidence = %+v, want kind %s", ev, tt.evidence)
			case ev != nil:
				for _, m := range tt.message {
					if !strings.Contains(ev.Message, m) {
						t.Errorf("evidence message %q lacks %q", ev.Message, m)
					}
				}
			}
			if tt.fix != "" && !strings.HasPrefix(d.Fix, tt.fix) {
				t.Errorf("fix %q, want it to start with %q", d.Fix, tt.fix)
			}
			var gap bool
			for _, g := range d.SignalGaps {
				if strings.Contains(g.Path, "kubediagnose.dev/throughput") {
					gap = strings.Contains(g.Message, "the count is all anyone gets")
				}
			}
			if gap != tt.gap {
				t.Errorf("throughput signal gap %v, want %v (%v)", gap, tt.gap, d.SignalGaps)
			}
			switch {
			case tt.cause == CauseSpec && tt.shape == ShapeLiveButIdle:
				if len(d.Suspects) != 1 || d.Suspects[0].Path.String() != "spec.template.spec.containers[0].env[0].value" ||
					d.Suspects[0].PreviousValue != "upstream.internal:8443" || d.Suspects[0].Rule != rules.RuleChangedField {
					t.Errorf("suspects = %+v, want the env value revision 2 changed", d.Suspects)
				}
				if d.Revisions == nil || d.Revisions.LastServing != "1" || d.Revisions.Current != "2" {
					t.Errorf("revisions = %+v, want 2 current and 1 the last that served", d.Revisions)
				}
			case tt.shape == ShapeLiveButIdle && len(d.Suspects) > 0:
				t.Errorf("suspects = %+v, want none for a fall no rollout explains", d.Suspects)
			}
			if tt.shape == ShapeLiveButIdle && !strings.Contains(d.Headline, "every copy is Ready, but its output") {
				t.Errorf("headline %q does not say the output failed", d.Headline)
			}
		})
	}
}

func TestNumber(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 1240: "1,240", 1240.6: "1,241", 12.5: "12.5", 0.126: "0.13", 1234567: "1,234,567", 99.96: "100", -3.5: "-3.5"} {
		if got := number(in); got != want {
			t.Errorf("number(%v) = %q, want %q", in, got, want)
		}
	}
}

package diagnose

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestReadyCopiesDialingTheirOwnEndpoint: Ready copies whose logs keep failing to connect to a
// host:port one of their own env values holds do not serve (issue 35 item 3), in several log
// styles; a blip at start, another endpoint, a loop that ended, debug output and a value the
// engine may not read leave the workload healthy.
func TestReadyCopiesDialingTheirOwnEndpoint(t *testing.T) {
	const env = "spec.template.spec.containers[0].env[0].value"
	// every writes n lines by line(i, at), one every gap, the last `end` before the reference.
	every := func(n int, gap, end time.Duration, line func(i int, at time.Time) string) []string {
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, line(i, testRef.Add(-end-time.Duration(n-1-i)*gap)))
		}
		return out
	}
	stamp := func(at time.Time) string { return at.UTC().Format(time.RFC3339Nano) }
	logfmt := func(_ int, at time.Time) string {
		return fmt.Sprintf(`time=%s level=warn msg="dial failed, retrying" addr=upstream.internal:8443 err="dial tcp 10.96.0.9:8443: connect: connection refused"`, stamp(at))
	}
	jsonURL := func(i int, at time.Time) string {
		return fmt.Sprintf(`{"ts":%q,"level":"error","msg":"poll failed","error":"Get \"https://upstream.internal:8443/v1/jobs\": dial tcp: lookup upstream.internal on 10.96.0.10:53: no such host","attempt":%d}`, stamp(at), i)
	}
	python := func(_ int, at time.Time) string {
		return at.UTC().Format("2006-01-02 15:04:05,000") + " ERROR worker: poll failed, retrying in 30s\nTraceback (most recent call last):\n" +
			`  File "/app/worker.py", line 12, in poll` + "\nredis.exceptions.ConnectionError: Error 111 connecting to upstream.internal:8443. Connection refused."
	}
	ok := func(_ int, at time.Time) string {
		return fmt.Sprintf(`time=%s level=info msg="batch done" items=12`, stamp(at))
	}
	lines := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			for _, l := range p {
				out = append(out, strings.Split(l, "\n")...)
			}
		}
		return out
	}
	tests := []struct {
		name      string
		mutate    func(*corev1.PodTemplateSpec)
		logs      []string
		loops     bool
		wantCause Cause
	}{
		// The copies started two hours ago: these logs reach back to their start.
		{"logfmt warnings from the start", nil, every(240, 30*time.Second, 10*time.Second, logfmt), true, CauseUnknown},
		{"json errors naming the env URL's host and port", func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Env[0].Value = "https://upstream.internal:8443/v1"
		}, every(60, 2*time.Minute, 100*time.Second, jsonURL), true, CauseUnknown},
		{"python tracebacks after a long quiet run", nil, lines(every(100, time.Minute, 15*time.Minute, ok), every(15, time.Minute, 20*time.Second, python)), true, CauseDependency},
		// Undated lines cannot say when the failure began: the cause is not asserted.
		{"undated lines ending the log", nil, every(6, 0, 0, func(int, time.Time) string {
			return "could not connect to upstream.internal:8443: Connection refused"
		}), true, ""},
		{"a blip at start, quiet since", nil, lines(every(2, 5*time.Second, 110*time.Minute, logfmt), every(100, time.Minute, 0, ok)), false, ""},
		{"three failures at start, quiet since", nil, lines(every(3, 5*time.Second, 110*time.Minute, logfmt), every(100, time.Minute, 0, ok)), false, ""},
		{"failures to another endpoint", nil, every(200, 30*time.Second, 0, func(_ int, at time.Time) string {
			return fmt.Sprintf(`time=%s level=warn msg="push failed" addr=metrics.internal:9091 err="connection refused"`, stamp(at))
		}), false, ""},
		{"a loop that ended twenty minutes ago", nil, lines(every(60, 30*time.Second, 20*time.Minute, logfmt), every(20, time.Minute, 0, ok)), false, ""},
		{"debug output", nil, every(200, 30*time.Second, 0, func(_ int, at time.Time) string {
			return fmt.Sprintf(`time=%s level=debug msg="dial failed, retrying" addr=upstream.internal:8443 err="connection refused"`, stamp(at))
		}), false, ""},
		{"a value from a Secret is never read", func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Env[0] = corev1.EnvVar{Name: "UPSTREAM", ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "up"}, Key: "addr"},
			}}
		}, every(200, 30*time.Second, 0, logfmt), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			d := c.deployment("sweeper", 2, 1, reasonNewRSAvailable, 3*time.Hour)
			if tt.mutate != nil {
				tt.mutate(&d.Spec.Template)
			}
			rs := c.replicaSet(d, 1, 2, 3*time.Hour, nil)
			for _, s := range []string{"a", "b"} {
				p := c.pod(rs, s, 2*time.Hour, running(true))
				c.logs(p, tt.logs...)
			}
			diags := Diagnose(c.s).Workloads
			if len(diags) != 1 {
				t.Fatalf("%d diagnoses, want 1", len(diags))
			}
			dg := diags[0]
			if !tt.loops {
				if dg.Shape != ShapeHealthy || dg.Counts.Serving != 2 {
					t.Errorf("shape %s, %d serving; want healthy, 2 serving: %s", dg.Shape, dg.Counts.Serving, dg.Headline)
				}
				return
			}
			if dg.Shape != ShapeLiveButIdle || dg.Counts.Serving != 0 {
				t.Fatalf("shape %s, %d serving; want live-but-idle, 0 serving: %s", dg.Shape, dg.Counts.Serving, dg.Headline)
			}
			if !strings.Contains(dg.Headline, "upstream.internal:8443 (UPSTREAM)") {
				t.Errorf("the headline does not name the endpoint and its variable: %s", dg.Headline)
			}
			if len(dg.Suspects) == 0 || pathString(dg.Suspects[0]) != env {
				t.Errorf("top suspect %v, want %s", dg.Suspects, env)
			}
			if tt.wantCause != "" && dg.Cause != tt.wantCause {
				t.Errorf("cause %s, want %s", dg.Cause, tt.wantCause)
			}
			for _, cp := range dg.Detail.Copies() {
				if cp.Reason != "ConnectFailing" {
					t.Errorf("copy %s: reason %s, want ConnectFailing", cp.Name, cp.Reason)
				}
			}
		})
	}
}

// TestCopiesWhoseLogWasNotReadArePresumedLikeTheirRevision: a live read samples a workload's
// copies; the unread copies of a revision whose read copy keeps failing to reach its endpoint
// are presumed to do the same, and say so; a copy of another revision is not.
func TestCopiesWhoseLogWasNotReadArePresumedLikeTheirRevision(t *testing.T) {
	c := newCluster()
	d := c.deployment("dispatcher", 4, 2, reasonNewRSAvailable, 3*time.Hour)
	old := c.replicaSet(d, 1, 1, 3*time.Hour, func(t *corev1.PodTemplateSpec) {
		t.Spec.Containers[0].Env[0].Value = "upstream-old.internal:8443"
	})
	cur := c.replicaSet(d, 2, 3, time.Hour, nil)
	c.pod(old, "old", 3*time.Hour, running(true))
	read := c.pod(cur, "a", 50*time.Minute, running(true))
	var lines []string
	for i := 40; i > 0; i-- {
		at := testRef.Add(-time.Duration(i) * time.Minute).UTC().Format(time.RFC3339)
		lines = append(lines, `time=`+at+` level=warn msg="dial failed, retrying" addr=upstream.internal:8443 err="connection refused"`)
	}
	c.logs(read, lines...)
	c.pod(cur, "b", 50*time.Minute, running(true))
	c.pod(cur, "c", 50*time.Minute, running(true))
	dg := Diagnose(c.s).Workloads[0]
	if dg.Counts.Serving != 1 {
		t.Errorf("%d serving, want 1 (the old revision's copy): %s", dg.Counts.Serving, dg.Headline)
	}
	if !strings.Contains(dg.Headline, "copy dispatcher-abc002-a keeps failing") {
		t.Errorf("the headline does not name the copy whose log showed it: %s", dg.Headline)
	}
	for _, cp := range dg.Detail.Copies() {
		presumed := strings.Contains(cp.Message, "presumed to fail like copy dispatcher-abc002-a")
		switch cp.Name {
		case "dispatcher-abc002-b", "dispatcher-abc002-c":
			if cp.Reason != "ConnectFailing" || !presumed {
				t.Errorf("copy %s: %s %q, want ConnectFailing, presumed", cp.Name, cp.Reason, cp.Message)
			}
		case "dispatcher-abc002-a":
			if cp.Reason != "ConnectFailing" || presumed {
				t.Errorf("copy %s: %s %q, want ConnectFailing, read", cp.Name, cp.Reason, cp.Message)
			}
		default:
			if !cp.Serving {
				t.Errorf("copy %s of the old revision: %s %q, want serving", cp.Name, cp.Reason, cp.Message)
			}
		}
	}
}

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/test/testbed/promtest"
)

// TestRolloutGateWaitsForOutput follows rollouts with --prometheus, beside a real Prometheus
// scraping counters that carry the simulated pods' names: a new revision whose copies are Ready
// and ingest passes; one whose copies are Ready and ingest nothing never passes, though without
// --prometheus the gate would.
func TestRolloutGateWaitsForOutput(t *testing.T) {
	t.Parallel()
	exp := promtest.StartExporter(t)
	prom := promtest.StartPrometheus(t, exp.Addr)
	e := newEnv(t, gateWorld())
	e.create(t, annotated(ingester("flowing", 2, reachableIntake), false), true)
	e.create(t, annotated(ingester("silent", 2, reachableIntake), false), true)
	drv := &rateDriver{
		e: e, exp: exp, rates: map[string]func(int) float64{}, growth: map[string]float64{},
		hashes: map[string][]string{}, seen: map[string]string{},
	}
	drv.set("flowing", func(int) float64 { return 40 })
	// Revision 2 of silent is Ready but accepts nothing.
	drv.set("silent", func(rev int) float64 {
		if rev == 0 {
			return 40
		}
		return 0
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); drv.run(ctx, t) }()
	t.Cleanup(func() { cancel(); <-done })
	for _, n := range []string{"flowing", "silent"} {
		e.waitServing(t, n, 2)
		e.waitEndpoints(t, n, 2)
	}
	promArgs := []string{"--prometheus", prom.URL, "--prometheus-window", "2m", "--prometheus-step", "2s"}
	for _, n := range []string{"flowing", "silent"} {
		e.update(t, n, func(c *corev1.Container) { c.Env[0].Value = otherIntake })
	}

	flowing := e.startGate(t, "flowing", promArgs...)
	silent := e.startGate(t, "silent", append([]string{"--timeout", "45s"}, promArgs...)...)

	doc := e.passes(t, flowing, "flowing", 2, 150*time.Second)
	if !strings.Contains(doc.Reason, "; producing ") || !strings.Contains(doc.Reason, " readings/s") {
		t.Errorf("reason %q does not say the copies produce output", doc.Reason)
	}

	r := silent.wait(t, 90*time.Second)
	sd := r.decode(t, 5)
	if sd.Result != "timed-out" || !strings.Contains(sd.Reason, "not producing output: throughput 0 readings/s") {
		t.Errorf("silent: result %s, reason %q; want a timeout for want of output", sd.Result, sd.Reason)
	}
	// The controller and the engine alone call the silent rollout done: only the output held it.
	if sd.Status == nil || !sd.Status.Done || sd.Diagnosis == nil || sd.Diagnosis.Shape != "healthy" {
		t.Errorf("silent: status %+v diagnosis %+v, want a finished, healthy rollout", sd.Status, sd.Diagnosis)
	}
}

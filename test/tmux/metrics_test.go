package tmux

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/controlplane"
	"github.com/kubediagnose/kubectl-diagnose/test/testbed/promtest"
)

// The live console with a real Prometheus that is stopped halfway: before, the THROUGHPUT
// column, the throughput strip on the Timeline tab and the footer's refresh interval; after,
// a visibility notice on screen, and the console still following the cluster and answering keys.
func TestLiveConsoleWithPrometheusStopped(t *testing.T) {
	bin := build(t)
	exp := promtest.StartExporter(t)
	prom := promtest.StartPrometheus(t, exp.Addr)
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := cp.Namespace(t)
	cs := kubernetes.NewForConfigOrDie(cp.AdminConfig())
	exp.SetRate("readings_accepted_total", ns, "ingester-0", 40)
	d := deployment("ingester")
	// No kubelet runs here, so no copy has a name to select by: the query takes the namespace's.
	d.Annotations = map[string]string{
		"kubediagnose.dev/throughput":      `sum(rate(readings_accepted_total{namespace="$namespace"}[5s]))`,
		"kubediagnose.dev/throughput-unit": "readings/s",
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Samples of the rate before the console asks for them.
	time.Sleep(8 * time.Second)

	// Without --prometheus the same live console has no column and no interval to tell.
	plain := start(t, 160, 30, bin, "--kubeconfig", cp.AdminKubeconfig(), "-n", ns)
	s := plain.waitForWithin(time.Minute, "● live", "deploy/ingester", "q quit")
	if strings.Contains(s, "THROUGHPUT") || strings.Contains(s, "throughput every") {
		t.Errorf("a console without Prometheus shows throughput:\n%s", s)
	}
	plain.keys("q")
	if st := plain.waitExit(); st != "0" {
		t.Errorf("exit status %s after q, want 0", st)
	}

	tm := start(t, 160, 30, bin, "--kubeconfig", cp.AdminKubeconfig(), "-n", ns,
		"--prometheus", prom.URL, "--prometheus-refresh", "2s", "--prometheus-window", "1m", "--prometheus-step", "1s")
	tm.waitForWithin(time.Minute, "● live", "THROUGHPUT", "throughput every 2s")
	// A rate reads a little off its 40/s (40.0, 39.8): a number, not "-".
	s = tm.waitMatchWithin(time.Minute, regexp.MustCompile(`deploy/ingester .*[▁▂▃▄▅▆▇█]+ (39|40)(\.\d)?/s`), "the ingester's throughput cell at 40/s")
	if strings.Contains(s, "not readable") {
		t.Fatalf("a visibility notice while Prometheus answers:\n%s", s)
	}
	tm.keys("Enter", "6")
	tm.waitFor("readings/s from the workload's annotation on " + prom.URL)
	s = tm.waitMatch(regexp.MustCompile(`(?m)^out \S+\s+[·▁▂▃▄▅▆▇█ ]*[▁▂▃▄▅▆▇█][·▁▂▃▄▅▆▇█ ]*$`), "the throughput strip on the Timeline tab")
	if !strings.Contains(s, "throughput every 2s") {
		t.Errorf("the footer lost the refresh interval on the Timeline tab:\n%s", s)
	}

	prom.Stop()
	// The next reading, at most one refresh later, finds nobody listening.
	s = tm.waitForWithin(time.Minute, "⚠ 1 not readable", "out      not read: "+prom.URL)
	if !strings.Contains(s, "connection refused") {
		t.Errorf("the notice does not say why Prometheus was not read:\n%s", s)
	}
	t.Logf("with Prometheus stopped:\n%s", s)
	if !strings.Contains(s, "● live") || strings.Contains(s, "stale") {
		t.Errorf("Prometheus stopping made the cluster's watch look broken:\n%s", s)
	}
	tm.keys("Escape")
	tm.waitFor("SHAPE", "ingester", "⚠ 1 not readable")

	// The console still follows the cluster: a workload created now appears, no key pressed.
	d2 := deployment("after-prometheus")
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d2, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tm.waitForWithin(time.Minute, "after-prometheus")
	tm.keys("q")
	if st := tm.waitExit(); st != "0" {
		t.Errorf("exit status %s after q, want 0", st)
	}
	tm.quietStderr()
}

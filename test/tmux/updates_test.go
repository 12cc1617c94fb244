package tmux

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/controlplane"
)

// consolePID is the process id of the program the tmux pane runs (the pane's shell's child).
func consolePID(t *testing.T, tm *term) int {
	t.Helper()
	shell := strings.TrimSpace(tm.tmux("list-panes", "-t", "diag", "-F", "#{pane_pid}"))
	b, err := os.ReadFile("/proc/" + shell + "/task/" + shell + "/children")
	if err != nil {
		t.Fatalf("children of the pane's shell %s: %v", shell, err)
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		t.Fatalf("the pane's shell %s runs nothing", shell)
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// cpuTime is the user and system time a process has used, from /proc/PID/stat.
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The command name may hold spaces; the fields after it are fixed.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticks
}

var updatedAgo = regexp.MustCompile(`● live updated (\d+)s ago`)

// Under 50 pod status changes a second (the scheduler's word on 500 copies that cannot be
// placed, changing back and forth) the console keeps its picture within 2 s of the cluster and
// uses under a quarter of one core.
func TestLiveConsoleUnderFiftyPodUpdatesASecond(t *testing.T) {
	bin := build(t)
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := cp.Namespace(t)
	cfg := cp.AdminConfig()
	cfg.QPS, cfg.Burst = 200, 400
	cs := kubernetes.NewForConfigOrDie(cfg)
	const deployments, copies = 100, 5
	for i := range deployments {
		d := deployment(fmt.Sprintf("web-%03d", i))
		d.Spec.Replicas = ptr.To[int32](copies)
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var pods []corev1.Pod
	for deadline := time.Now().Add(2 * time.Minute); len(pods) < deployments*copies; time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d pods created by the controller-manager within 2 minutes", len(pods), deployments*copies)
		}
		list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pods = list.Items
	}

	tm := start(t, 160, 30, bin, "--kubeconfig", cp.AdminKubeconfig(), "-n", ns)
	tm.waitForWithin(2*time.Minute, "● live", "web-000")
	pid := consolePID(t, tm)

	// The scheduler's condition on a copy it cannot place (pkg/scheduler/schedule_one.go:
	// PodScheduled False, reason Unschedulable, the FitError's message).
	messages := []string{
		"0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
		"0/2 nodes are available: 2 node(s) had untolerated taint {node.kubernetes.io/not-ready: }. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
	}
	var sent, failed atomic.Int32
	const rate, seconds = 50, 20
	cpu0, wall0 := cpuTime(t, pid), time.Now()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second / rate)
		defer tick.Stop()
		// A tick the loaded machine drops is made up at the next: the rate holds on average.
		for i := 0; ; {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			for due := int(time.Since(wall0).Seconds() * rate); i < due; i++ {
				p := pods[i%len(pods)]
				patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":%q,"lastTransitionTime":%q}]}}`,
					messages[(i/len(pods))%2], time.Now().UTC().Format(time.RFC3339))
				go func() {
					if _, err := cs.CoreV1().Pods(ns).Patch(ctx, p.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
						failed.Add(1)
					}
					sent.Add(1)
				}()
			}
		}
	}()
	worst := 0
	for end := time.Now().Add(seconds * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		s := tm.screen()
		m := updatedAgo.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("the header does not say live while pods change:\n%s", s)
		}
		if n, _ := strconv.Atoi(m[1]); n > worst {
			worst = n
		}
	}
	close(stop)
	<-done
	cpu, wall := cpuTime(t, pid)-cpu0, time.Since(wall0)
	share := cpu.Seconds() / wall.Seconds()
	t.Logf("%d status patches (%d failed) in %s; console CPU %s = %.0f%% of a core; screen at most %ds behind",
		sent.Load(), failed.Load(), wall.Round(time.Millisecond), cpu, 100*share, worst)
	if got := float64(sent.Load()) / wall.Seconds(); got < 0.8*rate {
		t.Fatalf("only %.0f patches a second were sent; the measurement is void", got)
	}
	if share >= 0.25 {
		t.Errorf("the console used %.0f%% of a core under %d pod updates a second, want under 25%%", 100*share, rate)
	}
	if worst > 2 {
		t.Errorf("the header said the picture was %ds old while pods changed, want at most 2", worst)
	}
	tm.keys("q")
	if st := tm.waitExit(); st != "0" {
		t.Errorf("exit status %s after q, want 0", st)
	}
	tm.quietStderr()
}

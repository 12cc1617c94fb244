package scalegen_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/controlplane"
	"github.com/kubediagnose/kubectl-diagnose/test/internal/scalegen"
)

// TestChurnWritesRestartsAndReadinessAsTheKubeletDoes churns a small loaded namespace on a real
// control plane while watching its pods: every write the API server stores is a restart (the
// previous instance in lastState.terminated, the restart count one up, Ready False with the
// kubelet's message) or the readiness passing again, by field manager kubelet, at no more than
// the asked rate and near it; the marker's pods end crash-looping, and the built binary's audit
// calls the marker starts-and-dies; once the churn ends every other pod is ready again.
func TestChurnWritesRestartsAndReadinessAsTheKubeletDoes(t *testing.T) {
	binary := make(chan string, 1)
	go func() { binary <- build(t) }()
	cp := controlplane.StartT(t, controlplane.Options{ControllerManagerArgs: scalegen.ControllerManagerArgs})
	opts := scalegen.Options{Namespace: "scalegen-churn", Deployments: 6, PodsPer: 3, BrokenFraction: -1, ProgressDeadlineSeconds: 5, Logf: t.Logf}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l, err := scalegen.Load(ctx, cp.AdminConfig(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop()
	cs, err := kubernetes.NewForConfig(cp.AdminConfig())
	if err != nil {
		t.Fatal(err)
	}
	list, err := cs.CoreV1().Pods(opts.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().Pods(opts.Namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		history = map[string][]*corev1.Pod{}
	)
	for i := range list.Items {
		history[list.Items[i].Name] = []*corev1.Pod{&list.Items[i]}
	}
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Modified {
				mu.Lock()
				history[p.Name] = append(history[p.Name], p)
				mu.Unlock()
			}
		}
	}()

	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, controlplane.AdminUser, opts.Namespace); err != nil {
		t.Fatal(err)
	}
	bin := <-binary
	mark := make(chan struct{})
	const rate, dur = 20, 8 * time.Second
	type result struct {
		stats scalegen.ChurnStats
		err   error
	}
	done := make(chan result, 1)
	go func() {
		stats, err := scalegen.Churn(ctx, cp.AdminConfig(), scalegen.ChurnOptions{
			Namespace: opts.Namespace, Rate: rate, Duration: dur, ReadyAfter: time.Second,
			Markers: 1, Mark: mark, Seed: 7, Logf: t.Logf,
		})
		done <- result{stats, err}
	}()
	time.Sleep(time.Second)
	mark <- struct{}{}
	// While the churn goes on, the marker's copies crash-loop and the audit says so.
	var marker string
	brokenBy := time.Now().Add(5 * time.Second)
	for marker == "" {
		mu.Lock()
		apps := map[string][2]int{}
		for _, h := range history {
			p := h[len(h)-1]
			n := apps[p.Labels["app"]]
			n[0]++
			if cs := p.Status.ContainerStatuses[0]; cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff" && cs.RestartCount == 1 &&
				cs.LastTerminationState.Terminated != nil && cs.LastTerminationState.Terminated.ExitCode == 1 {
				n[1]++
			}
			apps[p.Labels["app"]] = n
		}
		mu.Unlock()
		for app, n := range apps {
			if n[1] > 0 && n[1] == n[0] {
				marker = app
			}
		}
		if marker == "" && time.Now().After(brokenBy) {
			t.Fatal("no workload has all its copies crash-looping 5 s after the mark")
		}
		time.Sleep(100 * time.Millisecond)
	}
	live := audit(t, bin, "--kubeconfig", kubeconfig, "audit", "-n", opts.Namespace, "-o", "json")
	if got := live[marker].Shape; got != "starts-and-dies" {
		t.Errorf("marker %s: shape %q while crash-looping, want starts-and-dies", marker, got)
	}
	res := <-done
	stats, err := res.stats, res.err
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("churn: %+v", stats)
	if stats.Errors != 0 {
		t.Errorf("%d writes failed", stats.Errors)
	}
	// A tick every 50 ms for 8 s: at most 160 writes, and on a loaded machine most of them.
	if n := stats.Writes(); n > int(rate*dur.Seconds())+1 || n < int(0.6*rate*dur.Seconds()) {
		t.Errorf("%d writes in %s at %d/s", n, stats.Elapsed, rate)
	}
	if stats.Restarts == 0 || stats.ReadyAgain == 0 || stats.ReadyAgain > stats.Restarts {
		t.Errorf("%d restarts, %d ready again", stats.Restarts, stats.ReadyAgain)
	}
	if len(stats.Markers) != 1 || stats.Markers[0].Pods != opts.PodsPer || stats.Markers[0].Workload != marker {
		t.Fatalf("markers %+v, want %s of %d pods", stats.Markers, marker, opts.PodsPer)
	}

	// The pods as the churn left them, including the restored readiness.
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		ready, total := 0, 0
		for _, h := range history {
			p := h[len(h)-1]
			total++
			if podReady(p) && p.Status.ContainerStatuses[0].RestartCount == 0 {
				ready++
			}
		}
		mu.Unlock()
		if ready == total {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d pods ready and never restarted after the churn wrote back their statuses", ready, total)
		}
		time.Sleep(200 * time.Millisecond)
	}
	w.Stop()
	<-watched

	restarts, readies := 0, 0
	for name, h := range history {
		for i := 1; i < len(h); i++ {
			prev, cur := h[i-1], h[i]
			pc, cc := prev.Status.ContainerStatuses[0], cur.Status.ContainerStatuses[0]
			switch {
			case cc.RestartCount == pc.RestartCount+1:
				restarts++
				lt := cc.LastTerminationState.Terminated
				switch {
				case pc.State.Running == nil:
					t.Errorf("%s: restarted from %+v", name, pc.State)
				case lt == nil || lt.ContainerID != pc.ContainerID || !lt.StartedAt.Equal(&pc.State.Running.StartedAt):
					t.Errorf("%s: lastState.terminated %+v is not the previous instance %s", name, lt, pc.ContainerID)
				case (lt.ExitCode != 137 || lt.Reason != "OOMKilled") && (lt.ExitCode != 1 || lt.Reason != "Error"):
					t.Errorf("%s: exit %d %s", name, lt.ExitCode, lt.Reason)
				case cc.ContainerID == pc.ContainerID:
					t.Errorf("%s: the restarted container kept its ID", name)
				}
				if cur.Labels["app"] == marker {
					continue // its next write is the crash loop, checked while it ran
				}
				if cc.State.Running == nil || cc.Ready {
					t.Errorf("%s: restarted into %+v, ready %v", name, cc.State, cc.Ready)
				}
				if c := condition(cur, corev1.PodReady); c == nil || c.Status != corev1.ConditionFalse || c.Reason != "ContainersNotReady" ||
					c.Message != "containers with unready status: ["+cc.Name+"]" {
					t.Errorf("%s: Ready after a restart: %+v", name, c)
				}
				if !managedByKubelet(cur) {
					t.Errorf("%s: status not managed by kubelet: %+v", name, cur.ManagedFields)
				}
			case !pc.Ready && cc.Ready && cc.RestartCount == pc.RestartCount:
				readies++
				if c := condition(cur, corev1.PodReady); c == nil || c.Status != corev1.ConditionTrue || c.Reason != "" {
					t.Errorf("%s: Ready after the probe passed: %+v", name, c)
				}
			}
		}
	}
	if restarts < stats.Restarts || readies < stats.ReadyAgain {
		t.Errorf("watched %d restarts and %d readiness flips; the churn counted %d and %d", restarts, readies, stats.Restarts, stats.ReadyAgain)
	}
}

func condition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func podReady(p *corev1.Pod) bool {
	c := condition(p, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

func managedByKubelet(p *corev1.Pod) bool {
	for _, m := range p.ManagedFields {
		if m.Manager == "kubelet" && m.Subresource == "status" {
			return true
		}
	}
	return false
}

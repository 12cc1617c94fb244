package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
)

// Images of the rollout gate's tests, beside world()'s.
const (
	// crasherImage panics two seconds after it starts, before it listens, every time.
	crasherImage = "registry.sim.example/telemetry/ingester:5.0.0-rc1"
	// slowStartImage loads for 8 simulated minutes (24 s) before it listens, logging no error.
	slowStartImage = "registry.sim.example/shop/recommender:0.21.0"
	// slowPullImage takes 6 simulated minutes (18 s) to pull on each node.
	slowPullImage = "registry.sim.example/shop/recommender:0.21.1"
	imagePath     = "spec.template.spec.containers[0].image"
	// canaryIntake answers until the test takes it away.
	canaryIntake = "telemetry-intake-canary.internal:8443"
	// otherIntake is a second endpoint that answers.
	otherIntake = "telemetry-intake-b.internal:8443"
)

func gateWorld() *kubeletsim.World {
	recommender := kubeletsim.Program{Ports: []int32{8080}, HealthPaths: []string{"/healthz"}, Logs: []string{"model loaded"}}
	slow := recommender
	slow.StartupDelay = 8 * time.Minute
	slow.Logs = []string{"loading model recommender-0.21.0.onnx"}
	return world().
		SetImage(crasherImage, kubeletsim.Image{Program: kubeletsim.Program{
			ExitAfter: 2 * time.Second, ExitCode: 2,
			ExitLogs: []string{`panic: runtime error: invalid memory address or nil pointer dereference`},
		}}).
		SetImage(slowStartImage, kubeletsim.Image{Program: slow}).
		SetImage(slowPullImage, kubeletsim.Image{Size: 3 << 30, PullTime: 6 * time.Minute, Program: recommender}).
		SetReachable(canaryIntake, true).
		SetReachable(otherIntake, true)
}

// gateDoc is the documented JSON of `rollout -o json`, decoded with unknown fields disallowed.
type gateDoc struct {
	APIVersion     string            `json:"apiVersion"`
	Kind           string            `json:"kind"`
	Workload       map[string]string `json:"workload"`
	Result         string            `json:"result"`
	Reason         string            `json:"reason"`
	ElapsedSeconds float64           `json:"elapsedSeconds"`
	SettleSeconds  float64           `json:"settleSeconds"`
	Status         *struct {
		Generation         int64  `json:"generation"`
		ObservedGeneration int64  `json:"observedGeneration"`
		Declared           int32  `json:"declared"`
		Replicas           int32  `json:"replicas"`
		Updated            int32  `json:"updated"`
		Available          int32  `json:"available"`
		Done               bool   `json:"done"`
		DeadlineExceeded   bool   `json:"deadlineExceeded"`
		Message            string `json:"message"`
	} `json:"status"`
	Diagnosis  *workload    `json:"diagnosis"`
	Visibility []visibility `json:"visibility"`
}

// gateRun is a `rollout` run of the binary, started in the background.
type gateRun struct {
	cmd            *exec.Cmd
	stdout, stderr syncBuffer
	started        time.Time
	done           chan result
}

// startGate starts `kubectl-diagnose rollout deploy/NAME -o json` against the test's namespace.
func (e *env) startGate(t *testing.T, name string, args ...string) *gateRun {
	t.Helper()
	return e.startGateOn(t, "deploy/"+name, args...)
}

// startGateOn starts `kubectl-diagnose rollout KIND/NAME -o json` against the test's namespace.
func (e *env) startGateOn(t *testing.T, ref string, args ...string) *gateRun {
	t.Helper()
	argv := append([]string{"rollout", ref, "-n", e.ns, "-o", "json", "--kubeconfig", cp.AdminKubeconfig()}, args...)
	g := &gateRun{done: make(chan result, 1)}
	g.cmd = exec.Command(binary, argv...)
	g.cmd.Stdout, g.cmd.Stderr = &g.stdout, &g.stderr
	g.cmd.Env = append(os.Environ(), "KUBECONFIG=/nonexistent/kubeconfig")
	g.started = time.Now()
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.cmd.Process.Kill() }) // a no-op once it exited
	go func() {
		err := g.cmd.Wait()
		r := result{stdout: g.stdout.String(), stderr: g.stderr.String(), took: time.Since(g.started)}
		var exit *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &exit):
			r.code = exit.ExitCode()
		default:
			r.code = -1
			r.stderr += err.Error()
		}
		g.done <- r
	}()
	return g
}

// wait returns the finished run, failing the test when it is still going after limit.
func (g *gateRun) wait(t *testing.T, limit time.Duration) result {
	t.Helper()
	select {
	case r := <-g.done:
		return r
	case <-time.After(limit):
		_ = g.cmd.Process.Kill()
		r := <-g.done
		t.Fatalf("rollout still undecided after %v\nstderr:\n%s", limit, r.stderr)
		return r
	}
}

// decode reads the verdict document and fails the test unless the run exited with code.
func (r result) decode(t *testing.T, code int) *gateDoc {
	t.Helper()
	if r.code != code {
		t.Fatalf("rollout exited %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	var doc gateDoc
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("decode rollout -o json: %v\n%s", err, r.stdout)
	}
	if doc.APIVersion != "kubediagnose.dev/v1alpha1" || doc.Kind != "RolloutResult" {
		t.Errorf("apiVersion/kind = %s/%s", doc.APIVersion, doc.Kind)
	}
	return &doc
}

// progress returns the phases of the progress lines on stderr, in order.
func progress(stderr string) []string {
	var phases []string
	for _, l := range strings.Split(stderr, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && strings.HasSuffix(f[0], "s") && strings.Trim(f[0], "0123456789.ms") == "" {
			phases = append(phases, f[1])
		}
	}
	return phases
}

// passes checks a gate that must succeed: exit 0, the rollout really complete, no failure
// ever reported on the way, and the settle period held.
func (e *env) passes(t *testing.T, g *gateRun, name string, replicas int32, limit time.Duration) *gateDoc {
	t.Helper()
	doc := gatePassed(t, g, limit)
	// The cluster agrees: the controller finished with every new copy available.
	d, err := e.cs.AppsV1().Deployments(e.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas != replicas || d.Status.AvailableReplicas != replicas || d.Status.Replicas != replicas {
		t.Errorf("gate passed but the deployment is not complete: %+v", d.Status)
	}
	return doc
}

// gatePassed checks what every passing gate shows, whatever the kind.
func gatePassed(t *testing.T, g *gateRun, limit time.Duration) *gateDoc {
	t.Helper()
	r := g.wait(t, limit)
	t.Logf("rollout's stderr:\n%s", r.stderr)
	doc := r.decode(t, 0)
	if doc.Result != "succeeded" || doc.Diagnosis == nil || doc.Diagnosis.Shape != "healthy" || doc.Status == nil || !doc.Status.Done {
		t.Errorf("verdict %+v, want succeeded and healthy", doc)
	}
	phases := progress(r.stderr)
	if slices.Contains(phases, "failed") {
		t.Errorf("a failure was reported on the way:\n%s", r.stderr)
	}
	if n := len(phases); n < 2 || phases[n-2] != "settling" || phases[n-1] != "succeeded" {
		t.Errorf("progress %v, want it to end settling, succeeded:\n%s", phases, r.stderr)
	}
	// One line per change: a line that repeats its predecessor's words is a change of nothing.
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	for i := 1; i < len(lines); i++ {
		if f, g := strings.Fields(lines[i-1]), strings.Fields(lines[i]); len(f) > 1 && len(g) > 1 && strings.Join(f[1:], " ") == strings.Join(g[1:], " ") {
			t.Errorf("line %d repeats line %d:\n%s", i+1, i, r.stderr)
		}
	}
	if doc.ElapsedSeconds < doc.SettleSeconds {
		t.Errorf("succeeded after %.1fs, inside the %.1fs settle period", doc.ElapsedSeconds, doc.SettleSeconds)
	}
	return doc
}

// failure is what a failing gate must report; empty fields are not checked.
type failure struct {
	shape string
	// changed is a path the diff against the last serving revision must name.
	changed string
	// suspect is the top suspect's path; undo says the fix is the rollout undo to revision 1.
	suspect string
	undo    bool
}

// fails checks a gate that must fail: exit 4 with the diagnosis of the new revision, its diff
// against revision 1 (the last that served) and a fix.
func fails(t *testing.T, g *gateRun, limit time.Duration, want failure) *gateDoc {
	t.Helper()
	r := g.wait(t, limit)
	doc := r.decode(t, 4)
	if doc.Result != "failed" || doc.Diagnosis == nil || doc.Diagnosis.Shape != want.shape {
		t.Fatalf("verdict %+v, want failed %s\n%s", doc, want.shape, r.stdout)
	}
	w := doc.Diagnosis
	if w.Revisions == nil || w.Revisions.LastServing != "1" || w.Revisions.Current != "2" || !slices.Contains(w.Revisions.ChangedPaths, want.changed) {
		t.Errorf("revisions %+v, want current 2, last serving 1, %s changed", w.Revisions, want.changed)
	}
	if want.suspect != "" && w.topSuspect() != want.suspect {
		t.Errorf("top suspect %q, want %q:\n%s", w.topSuspect(), want.suspect, w)
	}
	undo := strings.HasPrefix(w.Fix, "kubectl rollout undo deployment/") && strings.Contains(w.Fix, "--to-revision=1")
	switch {
	case w.Fix == "":
		t.Error("the diagnosis suggests no fix")
	case want.undo && !undo:
		t.Errorf("fix %q, want the rollout undo to revision 1", w.Fix)
	}
	if !strings.HasSuffix(r.stderr, "/"+doc.Workload["name"]+" failed: "+want.shape+"\n") || !strings.Contains(r.stderr, "\nerror: rollout of ") {
		t.Errorf("stderr does not end with the one error line:\n%s", r.stderr)
	}
	return doc
}

// TestRolloutGate follows real rollouts on the control plane with the simulated kubelet: the
// healthy ones (a slow start and a slow pull among them) must pass, the broken ones must fail
// as soon as the evidence allows, with the diagnosis.
func TestRolloutGate(t *testing.T) {
	t.Parallel()
	const gateLimit = 150 * time.Second

	t.Run("an env change that serves passes after settling", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, gateWorld())
		e.create(t, ingester("api", 3, reachableIntake), true)
		e.waitServing(t, "api", 3)
		e.update(t, "api", func(c *corev1.Container) { c.Env[0].Value = otherIntake })
		doc := e.passes(t, e.startGate(t, "api"), "api", 3, gateLimit)
		// The default settle: no minReadySeconds, one 5 s readiness period.
		if doc.SettleSeconds != 5 {
			t.Errorf("settle %.1fs, want the 5s readiness period", doc.SettleSeconds)
		}
		if doc.Diagnosis.Counts.Serving != 3 {
			t.Errorf("counts %+v, want 3 serving", doc.Diagnosis.Counts)
		}
	})

	t.Run("a slow start passes, and Ctrl-C before the verdict exits 130", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, gateWorld())
		e.create(t, deployment("recommender", recommenderV1, 2, nil), true)
		e.waitServing(t, "recommender", 2)
		e.update(t, "recommender", func(c *corev1.Container) { c.Image = slowStartImage })

		early := e.startGate(t, "recommender")
		eventually(t, 30*time.Second, func() string {
			if !strings.Contains(early.stderrNow(), "progressing") {
				return "no progress line yet"
			}
			return ""
		})
		if err := early.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		r := early.wait(t, 10*time.Second)
		if r.code != 130 || r.stdout != "" {
			t.Errorf("after Ctrl-C: exit %d, stdout %q; want 130 and no verdict", r.code, r.stdout)
		}

		e.passes(t, e.startGate(t, "recommender"), "recommender", 2, gateLimit)
	})

	t.Run("a slow image pull passes", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, gateWorld())
		e.create(t, deployment("ranker", recommenderV1, 2, nil), true)
		e.waitServing(t, "ranker", 2)
		e.update(t, "ranker", func(c *corev1.Container) { c.Image = slowPullImage })
		g := e.startGate(t, "ranker")
		e.waitPods(t, "ranker", 1, "pulling the new image", func(p corev1.Pod) bool {
			return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].State.Waiting != nil &&
				p.Status.ContainerStatuses[0].State.Waiting.Reason == "ContainerCreating" && p.Spec.Containers[0].Image == slowPullImage
		})
		doc := e.passes(t, g, "ranker", 2, gateLimit)
		// Two pulls of 18 s each, one after the other under maxUnavailable 0.
		if doc.ElapsedSeconds < 30 {
			t.Errorf("passed after %.1fs, before both slow pulls could finish", doc.ElapsedSeconds)
		}
	})

	t.Run("a bad image fails at once", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, gateWorld())
		e.create(t, ingester("api", 3, reachableIntake), true)
		e.waitServing(t, "api", 3)
		e.update(t, "api", func(c *corev1.Container) { c.Image = missingImage })
		doc := fails(t, e.startGate(t, "api"), gateLimit, failure{
			shape: "never-starts", changed: imagePath, suspect: imagePath, undo: true,
		})
		if doc.ElapsedSeconds > 30 {
			t.Errorf("a pull that cannot succeed took %.1fs to fail", doc.ElapsedSeconds)
		}
	})

	t.Run("a crash loop fails", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, gateWorld())
		e.create(t, ingester("api", 3, reachableIntake), true)
		e.waitServing(t, "api", 3)
		e.update(t, "api", func(c *corev1.Container) { c.Image = crasherImage })
		doc := fails(t, e.startGate(t, "api"), gateLimit, failure{shape: "starts-and-dies", changed: imagePath})
		if doc.ElapsedSeconds > 30 {
			t.Errorf("a copy that panics at every start took %.1fs to fail", doc.ElapsedSeconds)
		}
	})

	t.Run("a readiness failure fails once the probes' allowance has passed", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, gateWorld())
		e.create(t, quickProbe(ingester("api", 3, reachableIntake)), true)
		e.waitServing(t, "api", 3)
		e.update(t, "api", func(c *corev1.Container) { c.Env[0].Value = unreachableIntake })
		g := e.startGate(t, "api")
		doc := fails(t, g, gateLimit, failure{shape: "live-but-idle", changed: envPath, suspect: envPath, undo: true})
		// The probe allows 2 s and the engine 30 s for the endpoint: a verdict before that
		// would be a false alarm on a copy still warming up, one long after it a slow gate.
		if doc.ElapsedSeconds < 30 || doc.ElapsedSeconds > 75 {
			t.Errorf("decided after %.1fs, want just past the 32s the probes allow", doc.ElapsedSeconds)
		}
		if !strings.Contains(doc.Diagnosis.Headline, "past what their probes allow") {
			t.Errorf("headline %q does not say how long the evidence needed", doc.Diagnosis.Headline)
		}
	})

	t.Run("copies Ready then idle fail inside the settle period", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, gateWorld())
		d := quickProbe(ingester("api", 2, reachableIntake))
		// minReadySeconds keeps the controller from calling a copy available for 20 s.
		d.Spec.MinReadySeconds = 20
		e.create(t, d, true)
		e.waitServing(t, "api", 2)
		e.update(t, "api", func(c *corev1.Container) { c.Env[0].Value = canaryIntake })
		g := e.startGate(t, "api")
		e.waitPods(t, "api", 1, "of the new revision Ready", func(p corev1.Pod) bool {
			return running(p) && p.Status.ContainerStatuses[0].Ready && p.Spec.Containers[0].Env[0].Value == canaryIntake
		})
		// The endpoint the new revision depends on stops answering: its copies stay up, not Ready.
		e.sim.World().SetReachable(canaryIntake, false)
		lost := time.Now()
		doc := fails(t, g, gateLimit, failure{shape: "live-but-idle", changed: envPath, suspect: envPath, undo: true})
		took := time.Since(lost)
		t.Logf("decided %.0fs after the copies lost readiness; headline: %s", took.Seconds(), doc.Diagnosis.Headline)
		if took > 60*time.Second {
			t.Errorf("took %v after the copies went idle to fail", took)
		}
		if doc.Status == nil || doc.Status.Done {
			t.Errorf("status %+v: the controller should not have finished the rollout", doc.Status)
		}
	})
}

// TestRolloutGateOnAStatefulSet follows a StatefulSet's ordered rolling update: a revision that
// serves passes once every ordinal runs it, one that cannot pull fails on the first replaced pod.
func TestRolloutGateOnAStatefulSet(t *testing.T) {
	t.Parallel()
	const limit = 150 * time.Second
	for _, tt := range []struct {
		name   string
		change func(*corev1.Container)
		fail   *failure
	}{
		{name: "an env change that serves passes", change: func(c *corev1.Container) { c.Env[0].Value = otherIntake }},
		{
			name: "a bad image fails", change: func(c *corev1.Container) { c.Image = missingImage },
			fail: &failure{shape: "never-starts", changed: imagePath, suspect: imagePath},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, gateWorld())
			const name = "indexer"
			d := ingester(name, 2, reachableIntake)
			sts := &appsv1.StatefulSet{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: d.Labels},
				Spec: appsv1.StatefulSetSpec{
					Replicas: ptr.To[int32](2), ServiceName: name, Selector: d.Spec.Selector, Template: d.Spec.Template,
				},
			}
			ctx := context.Background()
			if _, err := e.cs.AppsV1().StatefulSets(e.ns).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.cs.CoreV1().Services(e.ns).Create(ctx, service(name), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			eventually(t, 90*time.Second, func() string {
				got, err := e.cs.AppsV1().StatefulSets(e.ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return err.Error()
				}
				if st := got.Status; st.AvailableReplicas != 2 || st.UpdateRevision == "" || st.CurrentRevision != st.UpdateRevision {
					return fmt.Sprintf("statefulset %s not rolled out: %+v", name, st)
				}
				return ""
			})
			for {
				got, err := e.cs.AppsV1().StatefulSets(e.ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				tt.change(&got.Spec.Template.Spec.Containers[0])
				if _, err = e.cs.AppsV1().StatefulSets(e.ns).Update(ctx, got, metav1.UpdateOptions{}); err == nil {
					break
				}
				t.Logf("update %s: %v; retrying", name, err)
			}
			g := e.startGateOn(t, "sts/"+name)
			if tt.fail != nil {
				fails(t, g, limit, *tt.fail)
				return
			}
			doc := gatePassed(t, g, limit)
			got, err := e.cs.AppsV1().StatefulSets(e.ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if st := got.Status; st.UpdatedReplicas != 2 || st.AvailableReplicas != 2 || st.CurrentRevision != st.UpdateRevision {
				t.Errorf("gate passed but the statefulset is not rolled out: %+v", st)
			}
			if doc.Workload["kind"] != "StatefulSet" || doc.Diagnosis.Counts.Serving != 2 {
				t.Errorf("verdict %+v on %+v, want the statefulset with 2 serving", doc.Workload, doc.Diagnosis.Counts)
			}
		})
	}
}

// poolLabel names the node pool of a test's simulated nodes.
const poolLabel = "sim.example/pool"

// newPoolEnv is newEnv with its three nodes labelled as the pool named after the namespace.
func newPoolEnv(t *testing.T, w *kubeletsim.World) *env {
	t.Helper()
	ns := cp.Namespace(t)
	nodes := kubeletsim.DefaultNodes(ns, 3)
	for i := range nodes {
		nodes[i].Labels[poolLabel] = ns
	}
	sim, err := kubeletsim.New(cp.AdminConfig(), w, kubeletsim.Options{
		Nodes: nodes, Namespaces: []string{ns}, TimeScale: timeScale, Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := sim.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); sim.Stop() })
	return &env{ns: ns, cs: kubernetes.NewForConfigOrDie(cp.AdminConfig()), sim: sim}
}

// TestRolloutGateOnADaemonSet follows a DaemonSet's rolling update over the simulated nodes.
func TestRolloutGateOnADaemonSet(t *testing.T) {
	t.Parallel()
	const limit = 150 * time.Second
	for _, tt := range []struct {
		name   string
		change func(*corev1.Container)
		fail   *failure
	}{
		{name: "an env change that serves passes", change: func(c *corev1.Container) { c.Env[0].Value = otherIntake }},
		{
			name: "a bad image fails", change: func(c *corev1.Container) { c.Image = missingImage },
			fail: &failure{shape: "never-starts", changed: imagePath, suspect: imagePath},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newPoolEnv(t, gateWorld())
			const name = "collector"
			d := ingester(name, 1, reachableIntake)
			// Other tests' simulated nodes share the control plane: the DaemonSet runs on this
			// test's pool only, as one meant for a node pool would.
			d.Spec.Template.Spec.NodeSelector = map[string]string{poolLabel: e.ns}
			ds := &appsv1.DaemonSet{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: d.Labels},
				Spec:       appsv1.DaemonSetSpec{Selector: d.Spec.Selector, Template: d.Spec.Template},
			}
			ctx := context.Background()
			if _, err := e.cs.AppsV1().DaemonSets(e.ns).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			rolledOut := func() string {
				got, err := e.cs.AppsV1().DaemonSets(e.ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return err.Error()
				}
				if st := got.Status; st.ObservedGeneration < got.Generation || st.DesiredNumberScheduled == 0 ||
					st.NumberAvailable != st.DesiredNumberScheduled || st.UpdatedNumberScheduled != st.DesiredNumberScheduled {
					return fmt.Sprintf("daemonset %s not rolled out: %+v", name, st)
				}
				return ""
			}
			eventually(t, 90*time.Second, rolledOut)
			for {
				got, err := e.cs.AppsV1().DaemonSets(e.ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				tt.change(&got.Spec.Template.Spec.Containers[0])
				if _, err = e.cs.AppsV1().DaemonSets(e.ns).Update(ctx, got, metav1.UpdateOptions{}); err == nil {
					break
				}
				t.Logf("update %s: %v; retrying", name, err)
			}
			g := e.startGateOn(t, "ds/"+name)
			if tt.fail != nil {
				fails(t, g, limit, *tt.fail)
				return
			}
			doc := gatePassed(t, g, limit)
			if msg := rolledOut(); msg != "" {
				t.Errorf("gate passed but %s", msg)
			}
			if doc.Workload["kind"] != "DaemonSet" || doc.Diagnosis.Counts.Declared == 0 || doc.Diagnosis.Counts.Serving != doc.Diagnosis.Counts.Declared {
				t.Errorf("verdict %+v on %+v, want the daemonset with every copy serving", doc.Workload, doc.Diagnosis.Counts)
			}
		})
	}
}

// stderrNow is what the run has written to stderr so far.
func (g *gateRun) stderrNow() string { return g.stderr.String() }

// syncBuffer is a buffer the test reads while exec's copying goroutine writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

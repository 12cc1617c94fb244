package kubeletsim_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/internal/controlplane"
	"github.com/kubediagnose/kubectl-diagnose/internal/kubeletsim"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(controlplane.RunTests(m, controlplane.Options{}, func(c *controlplane.ControlPlane) { cp = c }))
}

const (
	appImage  = "registry.sim.example/shop/api:1.4.2"
	oomImage  = "registry.sim.example/media/thumbs:3.0.0"
	upstream  = "intake.sim.example:8443"
	timeScale = 20
)

// world is the registry and network every test starts from.
func world() *kubeletsim.World {
	return kubeletsim.NewWorld().
		SetImage(appImage, kubeletsim.Image{Size: 31 * kubeletsim.MiB, Program: kubeletsim.Program{
			Ports:       []int32{8080},
			HealthPaths: []string{"/healthz"},
			UpstreamEnv: "INTAKE",
			Logs:        []string{`level=info msg="listening" addr=$(POD_IP):8080 intake=$(INTAKE)`},
		}}).
		SetImage(oomImage, kubeletsim.Image{Program: kubeletsim.Program{
			Ports:    []int32{8080},
			Memory:   200 * kubeletsim.MiB,
			OOMAfter: 4 * time.Second,
			Logs:     []string{"thumbnailer ready", "converting upload 1.heic"},
		}}).
		SetReachable(upstream, true)
}

// env is one test's namespace, clients and running simulation.
type env struct {
	ns  string
	cs  kubernetes.Interface
	sim *kubeletsim.Sim
}

func start(t *testing.T, w *kubeletsim.World, nodes []kubeletsim.NodeSpec) *env {
	t.Helper()
	t.Parallel()
	ns := cp.Namespace(t)
	if nodes == nil {
		nodes = kubeletsim.DefaultNodes(ns, 3)
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

func deployment(name, image string, replicas int32, mutate func(*corev1.PodSpec)) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	spec := corev1.PodSpec{Containers: []corev1.Container{{
		Name:  name,
		Image: image,
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		Env:   []corev1.EnvVar{{Name: "INTAKE", Value: "https://" + upstream + "/v1"}},
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
			PeriodSeconds: 5,
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
	}}}
	if mutate != nil {
		mutate(&spec)
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}

func (e *env) apply(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	if _, err := e.cs.AppsV1().Deployments(e.ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// eventually polls cond until it returns "" or the timeout passes; the last complaint fails the test.
func eventually(t *testing.T, timeout time.Duration, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		msg := cond()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", timeout, msg)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (e *env) pods(t *testing.T, app string) []corev1.Pod {
	t.Helper()
	l, err := e.cs.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// events returns "reason: message" of the core/v1 events about pods whose name starts with prefix.
func (e *env) events(t *testing.T, prefix string) []corev1.Event {
	t.Helper()
	l, err := e.cs.CoreV1().Events(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Event
	for _, ev := range l.Items {
		if strings.HasPrefix(ev.InvolvedObject.Name, prefix) {
			out = append(out, ev)
		}
	}
	return out
}

func hasEvent(evs []corev1.Event, reason, message string) bool {
	for _, ev := range evs {
		if ev.Reason == reason && ev.Message == message {
			return true
		}
	}
	return false
}

func condition(p corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func TestDeploymentBecomesReadyAndLogsComeThroughTheAPIServer(t *testing.T) {
	e := start(t, world(), nil)
	e.apply(t, deployment("api", appImage, 3, nil))
	eventually(t, 60*time.Second, func() string {
		d, err := e.cs.AppsV1().Deployments(e.ns).Get(context.Background(), "api", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if d.Status.AvailableReplicas != 3 {
			return fmt.Sprintf("deployment available %d/3", d.Status.AvailableReplicas)
		}
		return ""
	})
	pods := e.pods(t, "api")
	nodes := map[string]bool{}
	for _, p := range pods {
		nodes[p.Spec.NodeName] = true
		if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != 1 {
			t.Fatalf("pod %s phase %s statuses %d", p.Name, p.Status.Phase, len(p.Status.ContainerStatuses))
		}
		cs := p.Status.ContainerStatuses[0]
		if !cs.Ready || cs.State.Running == nil || !strings.HasPrefix(cs.ContainerID, "containerd://") ||
			cs.Image != appImage || !strings.HasPrefix(cs.ImageID, "registry.sim.example/shop/api@sha256:") {
			t.Fatalf("container status %+v", cs)
		}
		order := []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled}
		for i, c := range p.Status.Conditions {
			if i >= len(order) || c.Type != order[i] || c.Status != corev1.ConditionTrue {
				t.Fatalf("conditions %+v, want %v all True", p.Status.Conditions, order)
			}
		}
	}
	if len(nodes) != 3 {
		t.Fatalf("3 replicas on %d nodes, want spread over 3", len(nodes))
	}
	p := pods[0]
	eventually(t, 10*time.Second, func() string {
		evs := e.events(t, p.Name)
		for _, want := range [][2]string{
			{"Pulled", "Successfully pulled image \"" + appImage + "\""},
			{"Created", "Container created"},
			{"Started", "Container started"},
		} {
			found := false
			for _, ev := range evs {
				if ev.Reason == want[0] && strings.HasPrefix(ev.Message, want[1]) &&
					ev.Source.Component == "kubelet" && ev.Source.Host == p.Spec.NodeName &&
					ev.InvolvedObject.FieldPath == "spec.containers{api}" {
					found = true
				}
			}
			if !found {
				return fmt.Sprintf("no kubelet event %v among %d events of %s", want, len(evs), p.Name)
			}
		}
		return ""
	})
	sched, err := e.cs.EventsV1().Events(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scheduled := false
	for _, ev := range sched.Items {
		if ev.Reason == "Scheduled" && ev.Regarding.Name == p.Name && ev.ReportingController == "default-scheduler" &&
			ev.Note == fmt.Sprintf("Successfully assigned %s/%s to %s", e.ns, p.Name, p.Spec.NodeName) {
			scheduled = true
		}
	}
	if !scheduled {
		t.Fatalf("no Scheduled event for %s", p.Name)
	}

	body, err := e.cs.CoreV1().Pods(e.ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: "api", TailLines: ptr.To[int64](5)}).DoRaw(context.Background())
	if err != nil {
		t.Fatalf("pods/log through the API server: %v", err)
	}
	want := fmt.Sprintf(`level=info msg="listening" addr=%s:8080 intake=https://%s/v1`, p.Status.PodIP, upstream)
	if strings.TrimSpace(string(body)) != want {
		t.Fatalf("logs %q, want %q", body, want)
	}
	_, err = e.cs.CoreV1().Pods(e.ns).GetLogs(p.Name, &corev1.PodLogOptions{Previous: true}).Stream(context.Background())
	if err == nil || !strings.Contains(err.Error(), `previous terminated container "api" in pod "`+p.Name+`" not found`) {
		t.Fatalf("previous logs of a container that never restarted: %v", err)
	}
}

func TestUpstreamOutageFailsReadinessUnderAnUnchangedSpec(t *testing.T) {
	e := start(t, world(), nil)
	e.apply(t, deployment("api", appImage, 1, nil))
	ready := func(want bool) func() string {
		return func() string {
			pods := e.pods(t, "api")
			if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 || pods[0].Status.ContainerStatuses[0].Ready != want {
				return fmt.Sprintf("pod not ready=%v", want)
			}
			return ""
		}
	}
	eventually(t, 60*time.Second, ready(true))
	e.sim.World().SetReachable(upstream, false)
	eventually(t, 30*time.Second, ready(false))
	p := e.pods(t, "api")[0]
	c := condition(p, corev1.PodReady)
	if c.Status != corev1.ConditionFalse || c.Reason != "ContainersNotReady" || c.Message != "containers with unready status: [api]" {
		t.Fatalf("Ready condition %+v", c)
	}
	eventually(t, 10*time.Second, func() string {
		if !hasEvent(e.events(t, p.Name), "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503") {
			return "no Unhealthy 503 event"
		}
		return ""
	})
	body, err := e.cs.CoreV1().Pods(e.ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `err="dial tcp `+upstream+`: connect: connection refused"`) {
		t.Fatalf("logs do not show the upstream failure:\n%s", body)
	}
	if p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Fatalf("restartCount %d, want 0", p.Status.ContainerStatuses[0].RestartCount)
	}
}

func TestUnknownImageTagGivesErrImagePullThenBackOff(t *testing.T) {
	e := start(t, world(), nil)
	bad := "registry.sim.example/shop/api:1.4.x"
	e.apply(t, deployment("api", bad, 1, nil))
	pullErr := fmt.Sprintf(`rpc error: code = NotFound desc = failed to pull and unpack image %q: failed to resolve image: %s: not found`, bad, bad)
	seen := map[string]bool{}
	var name string
	eventually(t, 30*time.Second, func() string {
		pods := e.pods(t, "api")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no container status yet"
		}
		name = pods[0].Name
		w := pods[0].Status.ContainerStatuses[0].State.Waiting
		if w == nil {
			return "container not waiting"
		}
		switch w.Reason {
		case "ErrImagePull":
			if w.Message != pullErr {
				t.Fatalf("ErrImagePull message %q, want %q", w.Message, pullErr)
			}
		case "ImagePullBackOff":
			want := fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %s", bad, pullErr)
			if w.Message != want {
				t.Fatalf("ImagePullBackOff message %q, want %q", w.Message, want)
			}
		}
		seen[w.Reason] = true
		if !seen["ImagePullBackOff"] {
			return fmt.Sprintf("waiting reasons seen %v, want ImagePullBackOff", seen)
		}
		return ""
	})
	evs := e.events(t, name)
	for _, want := range [][2]string{
		{"Pulling", fmt.Sprintf("Pulling image %q", bad)},
		{"Failed", fmt.Sprintf("Failed to pull image %q: %s", bad, pullErr)},
		{"Failed", "Error: ErrImagePull"},
		{"BackOff", fmt.Sprintf("Back-off pulling image %q", bad)},
		{"Failed", "Error: ImagePullBackOff"},
	} {
		if !hasEvent(evs, want[0], want[1]) {
			t.Errorf("no event %s %q", want[0], want[1])
		}
	}
	_, err := e.cs.CoreV1().Pods(e.ns).GetLogs(name, &corev1.PodLogOptions{}).Stream(context.Background())
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`container "api" in pod %q is waiting to start`, name)) {
		t.Fatalf("logs of a container that never started: %v", err)
	}
}

func TestPrivateImageWithoutPullSecretIsDenied(t *testing.T) {
	w := world()
	private := "registry.corp.sim.example/obs/shipper:1.8.0"
	w.SetImage(private, kubeletsim.Image{Private: true})
	e := start(t, w, nil)
	e.apply(t, deployment("shipper", private, 1, nil))
	want := fmt.Sprintf(`failed to pull and unpack image %q: failed to resolve image: pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed`, private)
	eventually(t, 30*time.Second, func() string {
		pods := e.pods(t, "shipper")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no container status yet"
		}
		// The pod spends most of its time in back-off; either state carries the error.
		wt := pods[0].Status.ContainerStatuses[0].State.Waiting
		backOff := fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %s", private, want)
		if wt == nil || !(wt.Reason == "ErrImagePull" && wt.Message == want) && !(wt.Reason == "ImagePullBackOff" && wt.Message == backOff) {
			return fmt.Sprintf("waiting %+v, want ErrImagePull %q", wt, want)
		}
		return ""
	})
}

func TestMissingSecretKeyGivesCreateContainerConfigError(t *testing.T) {
	e := start(t, world(), nil)
	_, err := e.cs.CoreV1().Secrets(e.ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "db-credentials"},
		Data:       map[string][]byte{"password": []byte("s3cret")},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.apply(t, deployment("worker", appImage, 1, func(s *corev1.PodSpec) {
		s.Containers[0].Env = append(s.Containers[0].Env, corev1.EnvVar{Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db-credentials"}, Key: "passwd"},
		}})
	}))
	want := fmt.Sprintf("couldn't find key passwd in Secret %s/db-credentials", e.ns)
	var name string
	eventually(t, 30*time.Second, func() string {
		pods := e.pods(t, "worker")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no container status yet"
		}
		name = pods[0].Name
		if pods[0].Status.Phase != corev1.PodPending {
			return "phase " + string(pods[0].Status.Phase)
		}
		wt := pods[0].Status.ContainerStatuses[0].State.Waiting
		if wt == nil || wt.Reason != "CreateContainerConfigError" || wt.Message != want {
			return fmt.Sprintf("waiting %+v, want CreateContainerConfigError %q", wt, want)
		}
		return ""
	})
	eventually(t, 10*time.Second, func() string {
		if !hasEvent(e.events(t, name), "Failed", "Error: "+want) {
			return "no Failed event with the config error"
		}
		return ""
	})
}

func TestMemoryAboveLimitIsOOMKilledIntoCrashLoopBackOff(t *testing.T) {
	e := start(t, world(), nil)
	e.apply(t, deployment("thumbs", oomImage, 1, func(s *corev1.PodSpec) { s.Containers[0].ReadinessProbe = nil }))
	var p corev1.Pod
	eventually(t, 60*time.Second, func() string {
		pods := e.pods(t, "thumbs")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no container status yet"
		}
		p = pods[0]
		cs := p.Status.ContainerStatuses[0]
		last := cs.LastTerminationState.Terminated
		if cs.RestartCount < 2 || last == nil || cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" {
			return fmt.Sprintf("restarts %d state %+v last %+v", cs.RestartCount, cs.State, last)
		}
		if last.Reason != "OOMKilled" || last.ExitCode != 137 {
			t.Fatalf("last state %+v, want OOMKilled 137", last)
		}
		// Restarts after 0, 10, 20, 40 ... s: the n-th restart waits 10s·2^(n-1), capped at 5m0s.
		backoff := min(10*time.Second<<(cs.RestartCount-1), 5*time.Minute)
		want := fmt.Sprintf("back-off %s restarting failed container=thumbs pod=%s_%s(%s)",
			backoff, p.Name, p.Namespace, p.UID)
		if cs.State.Waiting.Message != want {
			return fmt.Sprintf("waiting message %q, want %q", cs.State.Waiting.Message, want)
		}
		return ""
	})
	if p.Status.Phase != corev1.PodRunning {
		t.Fatalf("phase %s, want Running (restartPolicy Always)", p.Status.Phase)
	}
	eventually(t, 10*time.Second, func() string {
		want := fmt.Sprintf("Back-off restarting failed container thumbs in pod %s_%s(%s)", p.Name, p.Namespace, p.UID)
		if !hasEvent(e.events(t, p.Name), "BackOff", want) {
			return "no BackOff event " + want
		}
		return ""
	})
	body, err := e.cs.CoreV1().Pods(e.ns).GetLogs(p.Name, &corev1.PodLogOptions{Previous: true}).DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != "thumbnailer ready\nconverting upload 1.heic\n" {
		t.Fatalf("previous logs %q", body)
	}
	limited, err := e.cs.CoreV1().Pods(e.ns).GetLogs(p.Name, &corev1.PodLogOptions{Previous: true, LimitBytes: ptr.To[int64](10)}).Stream(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer limited.Close()
	if b, _ := io.ReadAll(limited); string(b) != "thumbnaile" {
		t.Fatalf("limitBytes=10 gave %q", b)
	}
}

func TestNodeSelectorNothingMatchesIsFailedScheduling(t *testing.T) {
	e := start(t, world(), nil)
	e.apply(t, deployment("search", appImage, 1, func(s *corev1.PodSpec) {
		s.NodeSelector = map[string]string{"topology.kubernetes.io/zone": "sim-1d"}
	}))
	want := "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
	var p corev1.Pod
	eventually(t, 30*time.Second, func() string {
		pods := e.pods(t, "search")
		if len(pods) != 1 {
			return "no pod"
		}
		p = pods[0]
		c := condition(p, corev1.PodScheduled)
		if c == nil || c.Status != corev1.ConditionFalse || c.Reason != corev1.PodReasonUnschedulable || c.Message != want {
			return fmt.Sprintf("PodScheduled %+v", c)
		}
		return ""
	})
	if p.Spec.NodeName != "" {
		t.Fatalf("pod bound to %s", p.Spec.NodeName)
	}
	evs, err := e.cs.EventsV1().Events(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs.Items {
		if ev.Reason == "FailedScheduling" && ev.Regarding.Name == p.Name && ev.Note == want &&
			ev.Type == corev1.EventTypeWarning && ev.Action == "Scheduling" && ev.ReportingController == "default-scheduler" {
			return
		}
	}
	t.Fatalf("no FailedScheduling event %q", want)
}

func TestRequestsAboveAllocatableAndTaintsAreFailedScheduling(t *testing.T) {
	prefix := fmt.Sprintf("fit-%d", time.Now().UnixNano()%1000000)
	nodes := []kubeletsim.NodeSpec{
		{Name: prefix + "-1", Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}},
		{Name: prefix + "-2", Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}},
		{Name: prefix + "-3", Taints: []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}},
	}
	e := start(t, world(), nodes)
	e.apply(t, deployment("batch", appImage, 1, func(s *corev1.PodSpec) {
		s.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("3")
	}))
	want := "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
	eventually(t, 30*time.Second, func() string {
		pods := e.pods(t, "batch")
		if len(pods) != 1 {
			return "no pod"
		}
		c := condition(pods[0], corev1.PodScheduled)
		if c == nil || c.Message != want {
			return fmt.Sprintf("PodScheduled %+v, want message %q", c, want)
		}
		return ""
	})
}

func TestFailingLivenessProbeRestartsTheContainer(t *testing.T) {
	e := start(t, world(), nil)
	e.apply(t, deployment("web", appImage, 1, func(s *corev1.PodSpec) {
		s.Containers[0].LivenessProbe = &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthy", Port: intstr.FromInt32(8080)}},
			PeriodSeconds:    2,
			FailureThreshold: 2,
		}
	}))
	var p corev1.Pod
	eventually(t, 60*time.Second, func() string {
		pods := e.pods(t, "web")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no container status yet"
		}
		p = pods[0]
		if cs := p.Status.ContainerStatuses[0]; cs.RestartCount < 1 || cs.LastTerminationState.Terminated == nil {
			return fmt.Sprintf("restartCount %d", cs.RestartCount)
		}
		return ""
	})
	eventually(t, 10*time.Second, func() string {
		evs := e.events(t, p.Name)
		if !hasEvent(evs, "Unhealthy", "Liveness probe failed: HTTP probe failed with statuscode: 404") {
			return "no Unhealthy 404 event"
		}
		if !hasEvent(evs, "Killing", "Container web failed liveness probe, will be restarted") {
			return "no Killing event"
		}
		return ""
	})
}

func TestMissingConfigMapInEnvFrom(t *testing.T) {
	e := start(t, world(), nil)
	e.apply(t, deployment("orders", appImage, 1, func(s *corev1.PodSpec) {
		s.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "orders-flags"}}}}
	}))
	eventually(t, 30*time.Second, func() string {
		pods := e.pods(t, "orders")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no container status yet"
		}
		wt := pods[0].Status.ContainerStatuses[0].State.Waiting
		if wt == nil || wt.Reason != "CreateContainerConfigError" || wt.Message != `configmap "orders-flags" not found` {
			return fmt.Sprintf("waiting %+v", wt)
		}
		return ""
	})
	// Creating the ConfigMap unblocks the pod at its next sync.
	_, err := e.cs.CoreV1().ConfigMaps(e.ns).Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "orders-flags"}, Data: map[string]string{"FAST_PATH": "on"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() string {
		pods := e.pods(t, "orders")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 || !pods[0].Status.ContainerStatuses[0].Ready {
			return "pod not ready after the ConfigMap appeared"
		}
		return ""
	})
}

func TestDaemonSetRunsOnEveryNodeAndScaleDownDeletesPods(t *testing.T) {
	e := start(t, world(), nil)
	labels := map[string]string{"app": "agent"}
	_, err := e.cs.AppsV1().DaemonSets(e.ns).Create(context.Background(), &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: deployment("agent", appImage, 1, nil).Spec.Template.Spec},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, func() string {
		ds, err := e.cs.AppsV1().DaemonSets(e.ns).Get(context.Background(), "agent", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if ds.Status.DesiredNumberScheduled != 3 || ds.Status.NumberReady != 3 {
			return fmt.Sprintf("daemonset desired %d ready %d, want 3/3", ds.Status.DesiredNumberScheduled, ds.Status.NumberReady)
		}
		return ""
	})

	e.apply(t, deployment("api", appImage, 2, nil))
	eventually(t, 60*time.Second, func() string {
		if n := len(e.pods(t, "api")); n != 2 {
			return fmt.Sprintf("%d api pods", n)
		}
		return ""
	})
	_, err = e.cs.AppsV1().Deployments(e.ns).Patch(context.Background(), "api", "application/merge-patch+json",
		[]byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Graceful deletion completes only when a kubelet confirms it.
	eventually(t, 30*time.Second, func() string {
		if n := len(e.pods(t, "api")); n != 0 {
			return fmt.Sprintf("%d api pods left after scaling to 0", n)
		}
		return ""
	})
}

func TestInitContainerRunsToCompletionBeforeTheApp(t *testing.T) {
	w := world()
	migrate := "registry.sim.example/shop/migrate:1.4.2"
	w.SetImage(migrate, kubeletsim.Image{Program: kubeletsim.Program{ExitAfter: 3 * time.Second, Logs: []string{"applied 3 migrations"}}})
	e := start(t, w, nil)
	e.apply(t, deployment("api", appImage, 1, func(s *corev1.PodSpec) {
		s.InitContainers = []corev1.Container{{Name: "migrate", Image: migrate}}
	}))
	eventually(t, 60*time.Second, func() string {
		pods := e.pods(t, "api")
		if len(pods) != 1 || len(pods[0].Status.InitContainerStatuses) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no statuses yet"
		}
		p := pods[0]
		init := p.Status.InitContainerStatuses[0].State.Terminated
		if init == nil || init.ExitCode != 0 || init.Reason != "Completed" {
			return fmt.Sprintf("init state %+v", p.Status.InitContainerStatuses[0].State)
		}
		if !p.Status.ContainerStatuses[0].Ready || condition(p, corev1.PodInitialized).Status != corev1.ConditionTrue {
			return "app not ready"
		}
		body, err := e.cs.CoreV1().Pods(e.ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: "migrate"}).DoRaw(context.Background())
		if err != nil || string(body) != "applied 3 migrations\n" {
			return fmt.Sprintf("init logs %q %v", body, err)
		}
		return ""
	})
}

func TestRegistryDownIsADNSFailure(t *testing.T) {
	w := world()
	e := start(t, w, nil)
	w.SetRegistryDown("registry.sim.example", true)
	e.apply(t, deployment("api", appImage, 1, nil))
	want := fmt.Sprintf(`failed to pull and unpack image %q: failed to resolve image: failed to do request: Head "https://registry.sim.example/v2/shop/api/manifests/1.4.2": dial tcp: lookup registry.sim.example on 127.0.0.53:53: no such host`, appImage)
	eventually(t, 30*time.Second, func() string {
		pods := e.pods(t, "api")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no container status yet"
		}
		wt := pods[0].Status.ContainerStatuses[0].State.Waiting
		if wt == nil || !strings.HasSuffix(wt.Message, want) {
			return fmt.Sprintf("waiting %+v, want message ending %q", wt, want)
		}
		return ""
	})
	// The registry comes back: the next pull after the back-off succeeds.
	w.SetRegistryDown("registry.sim.example", false)
	eventually(t, 60*time.Second, func() string {
		pods := e.pods(t, "api")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 || !pods[0].Status.ContainerStatuses[0].Ready {
			return "pod not ready after the registry came back"
		}
		return ""
	})
}

func TestMissingSecretVolumeIsFailedMount(t *testing.T) {
	e := start(t, world(), nil)
	e.apply(t, deployment("api", appImage, 1, func(s *corev1.PodSpec) {
		s.Volumes = []corev1.Volume{{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "app-creds"}}}}
		s.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "creds", MountPath: "/etc/creds", ReadOnly: true}}
	}))
	want := `MountVolume.SetUp failed for volume "creds" : secret "app-creds" not found`
	eventually(t, 30*time.Second, func() string {
		pods := e.pods(t, "api")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no container status yet"
		}
		p := pods[0]
		wt := p.Status.ContainerStatuses[0].State.Waiting
		if p.Status.Phase != corev1.PodPending || wt == nil || wt.Reason != "ContainerCreating" {
			return fmt.Sprintf("phase %s waiting %+v, want Pending ContainerCreating", p.Status.Phase, wt)
		}
		if c := condition(p, corev1.PodReadyToStartContainers); c == nil || c.Status != corev1.ConditionFalse {
			return fmt.Sprintf("PodReadyToStartContainers %+v, want False", c)
		}
		if !hasEvent(e.events(t, p.Name), "FailedMount", want) {
			return "no FailedMount event " + want
		}
		return ""
	})
}

func TestStartupProbeGatesReadinessAndKillsASlowStarter(t *testing.T) {
	w := world()
	slow := "registry.sim.example/shop/slow:1.0.0"
	w.SetImage(slow, kubeletsim.Image{Program: kubeletsim.Program{Ports: []int32{8080}, StartupDelay: time.Minute}})
	e := start(t, w, nil)
	startup := &corev1.Probe{
		ProbeHandler:     corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}},
		PeriodSeconds:    2,
		FailureThreshold: 3,
	}
	e.apply(t, deployment("slow", slow, 1, func(s *corev1.PodSpec) {
		s.Containers[0].ReadinessProbe = nil
		s.Containers[0].StartupProbe = startup
	}))
	var p corev1.Pod
	eventually(t, 60*time.Second, func() string {
		pods := e.pods(t, "slow")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no container status yet"
		}
		p = pods[0]
		cs := p.Status.ContainerStatuses[0]
		if cs.Ready || ptr.Deref(cs.Started, false) {
			t.Fatalf("container ready=%v started=%v before its startup probe passed", cs.Ready, ptr.Deref(cs.Started, false))
		}
		if cs.RestartCount < 1 {
			return "no restart yet"
		}
		return ""
	})
	eventually(t, 10*time.Second, func() string {
		evs := e.events(t, p.Name)
		if !hasEvent(evs, "Killing", "Container slow failed startup probe, will be restarted") {
			return "no Killing event"
		}
		if !hasEvent(evs, "Unhealthy", fmt.Sprintf("Startup probe failed: dial tcp %s:8080: connect: connection refused", p.Status.PodIP)) {
			return "no Unhealthy startup event"
		}
		return ""
	})
}

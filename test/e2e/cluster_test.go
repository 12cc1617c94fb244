package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
)

// timeScale speeds the simulated kubelets' clocks: back-offs and probe periods pass 20 times faster.
const timeScale = 20

const (
	// ingesterImage serves /healthz on 8080 while the endpoint in INGEST_ENDPOINT accepts connections.
	ingesterImage = "registry.sim.example/telemetry/ingester@sha256:4f1d7c3ab1a7c2e0d6f8b4a1c9e2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0"
	// thumbsImage grows to 200 MiB after 4 s, above the 64 Mi limit the tests give it.
	thumbsImage = "registry.sim.example/media/thumbs:3.0.0"
	// recommenderV2 takes 30 simulated minutes to load its model before it listens.
	recommenderV1 = "registry.sim.example/shop/recommender:0.19.2"
	recommenderV2 = "registry.sim.example/shop/recommender:0.20.0"
	// missingImage is a tag the registry does not have.
	missingImage = "registry.sim.example/shop/api:9.9.9"

	reachableIntake   = "telemetry-intake.internal:8443"
	unreachableIntake = "telemetry-intake.internal:9443"
)

// world is the registry and network every test starts from; only reachableIntake answers.
func world() *kubeletsim.World {
	ingester := kubeletsim.Program{
		Ports:       []int32{8080},
		HealthPaths: []string{"/healthz"},
		UpstreamEnv: "INGEST_ENDPOINT",
		Logs:        []string{`level=info msg="ingester listening" addr=$(POD_IP):8080 upstream=$(INGEST_ENDPOINT)`},
	}
	recommender := kubeletsim.Program{Ports: []int32{8080}, HealthPaths: []string{"/healthz"}, Logs: []string{"model loaded"}}
	slow := recommender
	slow.StartupDelay = 30 * time.Minute
	slow.Logs = []string{"loading model recommender-0.20.0.onnx"}
	return kubeletsim.NewWorld().
		SetImage(ingesterImage, kubeletsim.Image{Size: 41 * kubeletsim.MiB, Program: ingester}).
		SetImage(thumbsImage, kubeletsim.Image{Program: kubeletsim.Program{
			Ports: []int32{8080}, Memory: 200 * kubeletsim.MiB, OOMAfter: 4 * time.Second,
			Logs: []string{"thumbnailer ready", "converting upload 1.heic"},
		}}).
		SetImage(recommenderV1, kubeletsim.Image{Program: recommender}).
		SetImage(recommenderV2, kubeletsim.Image{Program: slow}).
		SetReachable(reachableIntake, true)
}

// env is one test's namespace, admin client and simulated nodes.
type env struct {
	ns  string
	cs  kubernetes.Interface
	sim *kubeletsim.Sim
}

func newEnv(t *testing.T, w *kubeletsim.World) *env {
	t.Helper()
	ns := cp.Namespace(t)
	sim, err := kubeletsim.New(cp.AdminConfig(), w, kubeletsim.Options{
		Nodes: kubeletsim.DefaultNodes(ns, 3), Namespaces: []string{ns}, TimeScale: timeScale, Logf: t.Logf,
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

// ingester is the canonical workload: a telemetry ingester whose readiness depends on the
// endpoint in its first env var.
func ingester(name string, replicas int32, endpoint string) *appsv1.Deployment {
	return deployment(name, ingesterImage, replicas, func(c *corev1.Container) {
		c.Env = []corev1.EnvVar{{Name: "INGEST_ENDPOINT", Value: endpoint}}
	})
}

func deployment(name, image string, replicas int32, mutate func(*corev1.Container)) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	c := corev1.Container{
		Name:  name,
		Image: image,
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
			PeriodSeconds: 5,
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
	}
	if mutate != nil {
		mutate(&c)
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas:                ptr.To(replicas),
			ProgressDeadlineSeconds: ptr.To[int32](600),
			Selector:                &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{c}},
			},
		},
	}
}

// quickProbe shortens the readiness probe's allowance (initialDelaySeconds +
// failureThreshold×periodSeconds, which the engine reads from the spec and measures on the
// status's wall-clock timestamps) to 2 s, so a copy that never becomes Ready is past what its
// probe allows 2 s + the engine's 30 s endpoint grace after it started. The simulated kubelet
// probes timeScale times faster, every 100 ms.
func quickProbe(d *appsv1.Deployment) *appsv1.Deployment {
	for i := range d.Spec.Template.Spec.Containers {
		if p := d.Spec.Template.Spec.Containers[i].ReadinessProbe; p != nil {
			p.PeriodSeconds, p.FailureThreshold = 2, 1
		}
	}
	return d
}

// service fronts the deployment of the same name on port 80.
func service(name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}},
		},
	}
}

func (e *env) create(t *testing.T, d *appsv1.Deployment, withService bool) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.cs.AppsV1().Deployments(e.ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if withService {
		if _, err := e.cs.CoreV1().Services(e.ns).Create(ctx, service(d.Name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// update applies change to the deployment's pod template's first container, as `kubectl set env`
// or `kubectl set image` would.
func (e *env) update(t *testing.T, name string, change func(*corev1.Container)) {
	t.Helper()
	ctx := context.Background()
	for range 5 {
		d, err := e.cs.AppsV1().Deployments(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		change(&d.Spec.Template.Spec.Containers[0])
		if _, err = e.cs.AppsV1().Deployments(e.ns).Update(ctx, d, metav1.UpdateOptions{}); err == nil {
			return
		}
		t.Logf("update %s: %v; retrying", name, err)
	}
	t.Fatalf("could not update deployment %s", name)
}

// waitServing waits until the deployment's rollout is complete and n copies are available.
func (e *env) waitServing(t *testing.T, name string, n int32) {
	t.Helper()
	eventually(t, 90*time.Second, func() string {
		d, err := e.cs.AppsV1().Deployments(e.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas != n || d.Status.AvailableReplicas != n || d.Status.Replicas != n {
			return fmt.Sprintf("deployment %s: updated %d available %d replicas %d, want %d", name,
				d.Status.UpdatedReplicas, d.Status.AvailableReplicas, d.Status.Replicas, n)
		}
		return ""
	})
}

// waitPods waits until cond holds for at least n pods of the app.
func (e *env) waitPods(t *testing.T, app string, n int, what string, cond func(corev1.Pod) bool) {
	t.Helper()
	// Three minutes: the longest wait is for copies to pass two minutes of age.
	eventually(t, 3*time.Minute, func() string {
		l, err := e.cs.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + app})
		if err != nil {
			return err.Error()
		}
		got := 0
		for _, p := range l.Items {
			if cond(p) {
				got++
			}
		}
		if got < n {
			return fmt.Sprintf("%d of %d pods of %s %s, want %d", got, len(l.Items), app, what, n)
		}
		return ""
	})
}

func running(p corev1.Pod) bool {
	return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].State.Running != nil
}

func runningNotReady(p corev1.Pod) bool {
	return running(p) && !p.Status.ContainerStatuses[0].Ready
}

func restarted(p corev1.Pod) bool {
	return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].RestartCount > 0
}

func pullFailing(p corev1.Pod) bool {
	if len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Waiting == nil {
		return false
	}
	r := p.Status.ContainerStatuses[0].State.Waiting.Reason
	return r == "ErrImagePull" || r == "ImagePullBackOff"
}

// unhealthyEvents waits until the kubelet reported a failing readiness probe for a pod of app.
func (e *env) waitUnhealthy(t *testing.T, app string) {
	t.Helper()
	eventually(t, 60*time.Second, func() string {
		l, err := e.cs.CoreV1().Events(e.ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		for _, ev := range l.Items {
			if ev.Reason == "Unhealthy" && len(ev.InvolvedObject.Name) > len(app) && ev.InvolvedObject.Name[:len(app)] == app {
				return ""
			}
		}
		return "no Unhealthy event for " + app
	})
}

// insideDeadline fails the test when the deployment controller has given up on the rollout:
// the verdict just read must have been reached inside the default 600 s progress deadline,
// not because the controller reported ProgressDeadlineExceeded.
func (e *env) insideDeadline(t *testing.T, name string) {
	t.Helper()
	d, err := e.cs.AppsV1().Deployments(e.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(d.Spec.ProgressDeadlineSeconds, 0); got != 600 {
		t.Errorf("deployment %s: progressDeadlineSeconds %d, want the default 600", name, got)
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			t.Errorf("deployment %s already exceeded its progress deadline: %s", name, c.Message)
		}
	}
}

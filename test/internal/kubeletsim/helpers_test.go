package kubeletsim_test

import (
	"context"
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

	"github.com/kubediagnose/kubectl-diagnose/test/internal/controlplane"
	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
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

package scalegen

import (
	"fmt"
	"math"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
)

// Options say how big the namespace is and how much of it is broken. The zero value is the
// benchmark's namespace: 2,000 Deployments × 10 pods in "scale", 10% broken.
type Options struct {
	// Namespace to create; default "scale". It must not exist yet.
	Namespace string
	// Deployments is how many workloads (each with a Service); default 2000.
	Deployments int
	// PodsPer is each Deployment's replicas; default 10.
	PodsPer int
	// BrokenFraction of the workloads is broken; default 0.1. Negative means none.
	BrokenFraction float64
	// ProgressDeadlineSeconds of every Deployment; default 60, so the broken rollouts have timed
	// out by the time Load returns. Load waits for it.
	ProgressDeadlineSeconds int32
	// GrowTo sizes Load's simulated nodes for this many Deployments, so that Loaded.Grow can
	// add workloads up to it onto nodes that were there all along; default Deployments.
	GrowTo int
	// Logf receives progress lines; default none.
	Logf func(format string, args ...any)
}

func (o Options) withDefaults() Options {
	if o.Namespace == "" {
		o.Namespace = "scale"
	}
	if o.Deployments <= 0 {
		o.Deployments = 2000
	}
	if o.PodsPer <= 0 {
		o.PodsPer = 10
	}
	switch {
	case o.BrokenFraction == 0:
		o.BrokenFraction = 0.1
	case o.BrokenFraction < 0:
		o.BrokenFraction = 0
	case o.BrokenFraction > 1:
		o.BrokenFraction = 1
	}
	if o.ProgressDeadlineSeconds <= 0 {
		o.ProgressDeadlineSeconds = 60
	}
	o.GrowTo = max(o.GrowTo, o.Deployments)
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return o
}

// Fault is how a planned workload is broken; "" is healthy.
type Fault string

// The faults, in the order the broken workloads take them.
const (
	FaultNone     Fault = ""
	FaultImage    Fault = "image"    // image tag does not exist: never-starts
	FaultCrash    Fault = "crash"    // DATABASE_URL missing, exits 1: starts-and-dies
	FaultUpstream Fault = "upstream" // upstream unreachable, readiness 503: live-but-idle
	FaultSelector Fault = "selector" // Service selects no pod: live-but-idle
)

var faults = []Fault{FaultImage, FaultCrash, FaultUpstream, FaultSelector}

// Workload is one planned Deployment and its Service.
type Workload struct {
	Name  string
	Index int
	Fault Fault
	// Revisions is 1 or 2. With 2 and a Fault, the fault came with revision 2 and revision 1
	// still serves (a stuck rollout); with 2 and no fault, the rollout completed.
	Revisions int
	// Component is the program's name: its image repository and labels.
	Component string
}

// Plan lists the workloads Options describe, in order.
func Plan(opts Options) []Workload {
	opts = opts.withDefaults()
	out := make([]Workload, opts.Deployments)
	healthy := 0
	for i := range out {
		c := components[i%len(components)]
		w := Workload{Name: fmt.Sprintf("%s-%04d", c, i), Index: i, Component: c, Revisions: 1}
		f := opts.BrokenFraction
		// Evenly spread: workload i is broken when (i+1)·f crosses a whole number.
		if k := int(math.Floor(float64(i+1)*f)) - int(math.Floor(float64(i)*f)); k > 0 && f > 0 {
			n := int(math.Floor(float64(i) * f)) // how many broken ones came before
			w.Fault = faults[n%len(faults)]
			if (w.Fault == FaultImage || w.Fault == FaultCrash) && (n/len(faults))%2 == 0 {
				w.Revisions = 2
			}
		} else {
			if healthy%5 == 1 {
				w.Revisions = 2
			}
			healthy++
		}
		out[i] = w
	}
	return out
}

// components name the programs; a workload's name is its component and index.
var components = []string{
	"checkout", "cart", "catalog", "search", "payments", "ledger", "inventory", "shipping",
	"pricing", "reviews", "accounts", "notifier", "recommender", "media", "gateway", "reports",
}

const registry = "registry.scale.example"

// Image tags: 1.0 and 1.1 exist for every component; 1.2 was never pushed.
const (
	tagRev1    = "1.0"
	tagRev2    = "1.1"
	tagMissing = "1.2"
)

// upstreams: a workload's program dials its component's upstream; the broken "upstream" ones
// dial one that does not answer.
func upstream(w Workload) string {
	if w.Fault == FaultUpstream {
		return "http://" + w.Component + "-legacy.internal.example:8443"
	}
	return "http://" + w.Component + "-store.internal.example:8443"
}

// World is what the simulated nodes see for these workloads: every component's 1.0 and 1.1
// images, and which upstreams answer.
func World(_ Options) *kubeletsim.World {
	world := kubeletsim.NewWorld()
	for _, c := range components {
		prog := kubeletsim.Program{
			Ports:       []int32{8080},
			HealthPaths: []string{"/healthz"},
			UpstreamEnv: "UPSTREAM_URL",
			RequiredEnv: []string{"DATABASE_URL"},
			Memory:      96 * kubeletsim.MiB,
			Logs:        []string{`level=info msg="starting ` + c + `" version=$(APP_VERSION) addr=:8080`},
			// A missing DATABASE_URL logs the program's error line and exits 1 (Program.RequiredEnv).
			UpstreamErrorLog: `level=error msg="upstream unavailable" endpoint=$(UPSTREAM) err="$(ERROR)"`,
		}
		for _, tag := range []string{tagRev1, tagRev2} {
			world.SetImage(registry+"/"+c+":"+tag, kubeletsim.Image{Size: 48 * kubeletsim.MiB, Program: prog})
		}
		world.SetReachable(kubeletsim.HostPort("http://"+c+"-store.internal.example:8443"), true)
	}
	return world
}

// template is revision rev's pod template (1 or 2).
func template(w Workload, rev int) corev1.PodTemplateSpec {
	// A second revision ships the next release, except the crash fault's, which only changes
	// the environment.
	tag := tagRev1
	if rev == 2 && w.Fault != FaultCrash {
		tag = tagRev2
	}
	broken := w.Fault != FaultNone && (w.Revisions == 1 || rev == 2)
	if broken && w.Fault == FaultImage {
		tag = tagMissing
	}
	env := []corev1.EnvVar{
		{Name: "APP_VERSION", Value: tag},
		{Name: "UPSTREAM_URL", Value: upstream(w)},
	}
	if !broken || w.Fault != FaultCrash {
		env = append(env, corev1.EnvVar{Name: "DATABASE_URL", Value: "postgres://" + w.Component + "@" + w.Component + "-db.internal.example:5432/" + w.Component})
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": w.Name}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  w.Component,
				Image: registry + "/" + w.Component + ":" + tag,
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Env:   env,
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
				},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
					PeriodSeconds: 10,
				},
			}},
		},
	}
}

// deployment is the Deployment as applied at revision 1.
func deployment(w Workload, opts Options) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: opts.Namespace, Labels: map[string]string{"app": w.Name}},
		Spec: appsv1.DeploymentSpec{
			Replicas:                ptr.To(int32(opts.PodsPer)),
			Selector:                &metav1.LabelSelector{MatchLabels: map[string]string{"app": w.Name}},
			Template:                template(w, 1),
			ProgressDeadlineSeconds: ptr.To(opts.ProgressDeadlineSeconds),
		},
	}
}

// service is the workload's Service; a selector fault selects a tier no pod carries.
func service(w Workload, opts Options) *corev1.Service {
	sel := map[string]string{"app": w.Name}
	if w.Fault == FaultSelector {
		sel["tier"] = "web"
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: opts.Namespace, Labels: map[string]string{"app": w.Name}},
		Spec: corev1.ServiceSpec{
			Selector: sel,
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}},
		},
	}
}

// expectedPods is how many pods the workload has once its rollout stopped: a stuck rollout
// keeps replicas − maxUnavailable old pods and grows the new ReplicaSet to the rest of
// replicas + maxSurge (25% each, rounded up and down as the deployment controller rounds them).
func expectedPods(w Workload, podsPer int) int {
	if w.Revisions == 2 && (w.Fault == FaultImage || w.Fault == FaultCrash) {
		return podsPer + int(math.Ceil(float64(podsPer)*0.25))
	}
	return podsPer
}

// Nodes is how many simulated nodes carry the pods: 100 per node, for GrowTo Deployments.
func Nodes(opts Options) int {
	opts = opts.withDefaults()
	opts.Deployments = opts.GrowTo
	total := 0
	for _, w := range Plan(opts) {
		total += expectedPods(w, opts.PodsPer)
	}
	return max(1, (total+99)/100)
}

package diagnose

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func gapPaths(gs []SignalGap) map[string]bool {
	out := map[string]bool{}
	for _, g := range gs {
		out[g.Path] = true
	}
	return out
}

func TestSignalGapsDeployment(t *testing.T) {
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	num := func(i int) *intstr.IntOrString { v := intstr.FromInt(i); return &v }
	tests := []struct {
		name   string
		setup  func(w *workload, d *appsv1.Deployment)
		want   []string
		absent []string
	}{
		{
			name: "default rolling update with probes and a Service leaves no gap",
			setup: func(w *workload, _ *appsv1.Deployment) {
				w.Services = []*corev1.Service{stService("api", map[string]string{"app": "api"}, intstr.FromString("http"))}
			},
			absent: []string{"spec.strategy.type", "spec.strategy.rollingUpdate.maxUnavailable", c0 + ".readinessProbe", "spec.minReadySeconds"},
		},
		{
			name: "no readiness probe behind a Service",
			setup: func(w *workload, _ *appsv1.Deployment) {
				w.Template.Spec.Containers[0].ReadinessProbe = nil
				w.Snap.Services = []*corev1.Service{stService("api", map[string]string{"app": "api"}, intstr.FromString("http"))}
			},
			want: []string{c0 + ".readinessProbe"},
		},
		{
			name:   "no readiness probe and no Service is no gap",
			setup:  func(w *workload, _ *appsv1.Deployment) { w.Template.Spec.Containers[0].ReadinessProbe = nil },
			absent: []string{c0 + ".readinessProbe"},
		},
		{
			name: "sidecar that serves no Service port",
			setup: func(w *workload, _ *appsv1.Deployment) {
				w.Template.Spec.Containers = append(w.Template.Spec.Containers, corev1.Container{
					Name:  "metrics",
					Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9100}},
				})
				w.Services = []*corev1.Service{stService("api", map[string]string{"app": "api"}, intstr.FromString("http"))}
			},
			absent: []string{"spec.template.spec.containers[1].readinessProbe"},
		},
		{
			name:  "Recreate",
			setup: func(_ *workload, d *appsv1.Deployment) { d.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType },
			want:  []string{"spec.strategy.type"},
		},
		{
			name: "maxUnavailable 100%",
			setup: func(_ *workload, d *appsv1.Deployment) {
				d.Spec.Strategy = appsv1.DeploymentStrategy{
					Type:          appsv1.RollingUpdateDeploymentStrategyType,
					RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: pct("100%")},
				}
			},
			want: []string{"spec.strategy.rollingUpdate.maxUnavailable"},
		},
		{
			name: "maxUnavailable at least replicas",
			setup: func(_ *workload, d *appsv1.Deployment) {
				d.Spec.Strategy = appsv1.DeploymentStrategy{
					Type:          appsv1.RollingUpdateDeploymentStrategyType,
					RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: num(3)},
				}
			},
			want: []string{"spec.strategy.rollingUpdate.maxUnavailable"},
		},
		{
			name: "maxUnavailable 50% of 3 rounds down",
			setup: func(_ *workload, d *appsv1.Deployment) {
				d.Spec.Strategy = appsv1.DeploymentStrategy{
					Type:          appsv1.RollingUpdateDeploymentStrategyType,
					RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: pct("50%")},
				}
			},
			absent: []string{"spec.strategy.rollingUpdate.maxUnavailable"},
		},
		{
			name: "readiness identical to liveness",
			setup: func(w *workload, _ *appsv1.Deployment) {
				c := &w.Template.Spec.Containers[0]
				c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/live", Port: intstr.FromString("http")}}, PeriodSeconds: 5}
			},
			want: []string{c0 + ".readinessProbe"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := stWorkload(nil)
			d := w.Object.(*appsv1.Deployment)
			tt.setup(w, d)
			stAttachServices(w)
			got := gapPaths(signalGaps(w))
			for _, p := range tt.want {
				if !got[p] {
					t.Errorf("no gap at %s; gaps: %v", p, got)
				}
			}
			for _, p := range tt.absent {
				if got[p] {
					t.Errorf("unexpected gap at %s", p)
				}
			}
		})
	}
}

func TestSignalGapsDaemonSetAndStatefulSet(t *testing.T) {
	all := intstr.FromString("100%")
	tpl := stTemplate()
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: stNS},
		Spec: appsv1.DaemonSetSpec{Template: *tpl, UpdateStrategy: appsv1.DaemonSetUpdateStrategy{
			Type: appsv1.RollingUpdateDaemonSetStrategyType, RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &all},
		}},
	}
	w := &workload{
		Kind: "DaemonSet", Namespace: stNS, Name: "agent", Object: ds, Declared: 3, Template: &ds.Spec.Template,
		TemplatePath: field.NewPath("spec", "template"),
	}
	got := gapPaths(signalGaps(w))
	for _, p := range []string{"spec.minReadySeconds", "spec.updateStrategy.rollingUpdate.maxUnavailable"} {
		if !got[p] {
			t.Errorf("DaemonSet: no gap at %s", p)
		}
	}
	ds.Spec.MinReadySeconds = 30
	ds.Spec.UpdateStrategy.RollingUpdate = nil
	if got := signalGaps(w); len(got) != 0 {
		t.Errorf("DaemonSet with minReadySeconds and the default maxUnavailable 1: gaps %v", got)
	}

	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: stNS}, Spec: appsv1.StatefulSetSpec{Template: *tpl}}
	w = &workload{
		Kind: "StatefulSet", Namespace: stNS, Name: "db", Object: sts, Declared: 3, Template: &sts.Spec.Template,
		TemplatePath: field.NewPath("spec", "template"),
	}
	gs := signalGaps(w)
	if len(gs) != 1 || gs[0].Path != "spec.minReadySeconds" || gs[0].Object != "StatefulSet/db" {
		t.Errorf("StatefulSet gaps = %+v, want spec.minReadySeconds", gs)
	}
}

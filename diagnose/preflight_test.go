package diagnose

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func preflightTemplate(image, endpoint, tier string) *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "api", "tier": tier}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "api", Image: image,
			Env: []corev1.EnvVar{{Name: "UPSTREAM", Value: endpoint}},
		}}},
	}
}

func TestRankTemplateChangesOrdersByFailureLook(t *testing.T) {
	root := field.NewPath("spec", "template")
	prev := preflightTemplate("registry.example/api:1.0", "db.internal:5432", "web")
	cur := preflightTemplate("registry.example/api:1.1", "db.internal:5433", "front")
	got := RankTemplateChanges(root, prev, cur)
	want := map[string]Confidence{
		"spec.template.spec.containers[0].env[0].value": ConfidenceHigh,
		"spec.template.spec.containers[0].image":        ConfidenceHigh,
		"spec.template.metadata.labels[tier]":           ConfidenceLow,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d changes, want %d: %+v", len(got), len(want), got)
	}
	for _, c := range got {
		if r, ok := want[c.Path.String()]; !ok || r != c.Risk {
			t.Errorf("%s: risk %q, want %q", c.Path, c.Risk, r)
		}
	}
	if last := got[len(got)-1]; last.Path.String() != "spec.template.metadata.labels[tier]" {
		t.Errorf("the label change ranks above a riskier change: %+v", got)
	}
	// A value that names no endpoint is a fair risk, not a strong one.
	plain := RankTemplateChanges(root, preflightTemplate("a:1", "debug", "web"), preflightTemplate("a:1", "info", "web"))
	if len(plain) != 1 || plain[0].Risk != ConfidenceMedium {
		t.Errorf("a plain env change: %+v, want one medium risk", plain)
	}
	if RankTemplateChanges(root, prev, prev) == nil || len(RankTemplateChanges(root, prev, prev)) != 0 {
		t.Error("identical templates must give an empty list")
	}
}

func TestSignalGapsOfASpecNotApplied(t *testing.T) {
	tpl := preflightTemplate("registry.example/api:1.0", "db.internal:5432", "web")
	tpl.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "shop"},
		Spec:       appsv1.DeploymentSpec{Template: *tpl, Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}},
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "shop"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "api"},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}},
		},
	}
	paths := map[string]bool{}
	for _, g := range SignalGapsOf(d, 3, []*corev1.Service{svc}) {
		paths[g.Path] = true
	}
	for _, p := range []string{"spec.strategy.type", "spec.template.spec.containers[0].readinessProbe"} {
		if !paths[p] {
			t.Errorf("no signal gap at %s: %v", p, paths)
		}
	}
	if gs := SignalGapsOf(d, 3, nil); len(gs) != 1 {
		t.Errorf("without a Service: %+v, want only the strategy gap", gs)
	}
}

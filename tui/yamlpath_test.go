package tui

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
)

func TestPathYAMLIndexesFieldsAndMatchesYAML(t *testing.T) {
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		NodeSelector: map[string]string{"disktype": "ssd"},
		Containers: []corev1.Container{{
			Name: "app", Image: "app:1", Args: []string{"--listen=:8080", "--verbose"},
			Env: []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "yes: no"}},
		}, {Name: "sidecar", Image: "side:2"}},
	}}
	lines, index, err := pathYAML("spec.template", tmpl)
	if err != nil {
		t.Fatal(err)
	}
	at := func(p string) string {
		i, ok := index[p]
		if !ok {
			t.Fatalf("no line for %s in\n%s", p, strings.Join(lines, "\n"))
		}
		return strings.TrimSpace(lines[i])
	}
	for path, want := range map[string]string{
		"spec.template.spec.containers[0].env[1].value": `value: 'yes: no'`,
		"spec.template.spec.containers[0].env[1]":       "- name: B",
		"spec.template.spec.containers[0].args[1]":      "- --verbose",
		"spec.template.spec.containers[1].image":        "- image: side:2",
		"spec.template.spec.nodeSelector.disktype":      "disktype: ssd",
	} {
		if got := at(path); got != want {
			t.Errorf("line of %s = %q, want %q", path, got, want)
		}
	}
	// What the console shows must be YAML that means the same template.
	var back corev1.PodTemplateSpec
	if err := yaml.Unmarshal([]byte(strings.Join(lines, "\n")), &back); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, strings.Join(lines, "\n"))
	}
	if back.Spec.Containers[0].Env[1].Value != "yes: no" || back.Spec.Containers[0].Args[1] != "--verbose" || back.Spec.Containers[1].Name != "sidecar" {
		t.Fatalf("round trip lost fields: %+v", back.Spec)
	}
}

func TestParentPath(t *testing.T) {
	p := "spec.template.spec.containers[0].readinessProbe.httpGet.port"
	var got []string
	for p != "" {
		p = fieldpath.Parent(p)
		got = append(got, p)
	}
	want := "spec.template.spec.containers[0].readinessProbe.httpGet,spec.template.spec.containers[0].readinessProbe,spec.template.spec.containers[0],spec.template.spec.containers,spec.template.spec,spec.template,spec,"
	if strings.Join(got, ",") != want {
		t.Fatalf("parents = %v", got)
	}
}

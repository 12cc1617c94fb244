package redact

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
)

// TestAtPathReadsTheSuspectsSteps: a template field is a credential by its name when its path
// goes through a container to an env var's value named like one, or to the argument after a
// credential flag; another field, an index out of range or a map key is not.
func TestAtPathReadsTheSuspectsSteps(t *testing.T) {
	spec := &corev1.PodSpec{
		InitContainers: []corev1.Container{{Env: []corev1.EnvVar{{Name: "MIGRATE_TOKEN", Value: "t0k"}}}},
		Containers: []corev1.Container{{
			Env:  []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "DB_PASSWORD", Value: "hunter2"}},
			Args: []string{"--listen=:8080", "--api-key", "abc123"},
		}},
	}
	tpl := field.NewPath("spec", "template", "spec")
	c0 := tpl.Child("containers").Index(0)
	tests := []struct {
		path  *field.Path
		value string
		want  bool
	}{
		{c0.Child("env").Index(1).Child("value"), "hunter2", true},
		{c0.Child("env").Index(1), "hunter2", true},
		{c0.Child("env").Index(0).Child("value"), "info", false},
		{c0.Child("env").Index(1).Child("valueFrom"), "x", false},
		{c0.Child("env").Index(9).Child("value"), "x", false},
		{c0.Child("args").Index(2), "abc123", true},
		{c0.Child("args").Index(0), "--listen=:8080", false},
		{tpl.Child("initContainers").Index(0).Child("env").Index(0).Child("value"), "t0k", true},
		{tpl.Child("containers").Index(3).Child("env").Index(0).Child("value"), "x", false},
		{tpl.Child("nodeSelector").Key("containers"), "x", false},
		{field.NewPath("spec", "ports").Index(0).Child("targetPort"), "8080", false},
	}
	for _, tt := range tests {
		if got := atPath(spec, fieldpath.Of(tt.path), tt.value); got != tt.want {
			t.Errorf("atPath(%s, %q) = %v, want %v", tt.path, tt.value, got, tt.want)
		}
	}
}

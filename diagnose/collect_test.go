package diagnose

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
)

// TestSetSelectsAsSelector holds setSelects to the selector apimachinery builds from the set.
func TestSetSelectsAsSelector(t *testing.T) {
	sets := []map[string]string{
		{"app": "api"}, {"app": "api", "tier": "web"}, {"app": ""}, {"app.kubernetes.io/name": "api"},
	}
	objects := []map[string]string{
		nil,
		{},
		{"app": "api"},
		{"app": "api", "tier": "web", "pod-template-hash": "6b7d9c5f4"},
		{"app": "api-v2"},
		{"tier": "web"},
		{"app": ""},
		{"app.kubernetes.io/name": "api", "app": "api"},
	}
	for _, sel := range sets {
		for _, l := range objects {
			want := labels.SelectorFromSet(sel).Matches(labels.Set(l))
			if got := facts.SetSelects(sel, l); got != want {
				t.Errorf("facts.SetSelects(%v, %v) = %v, the selector says %v", sel, l, got, want)
			}
		}
	}
}

package report

import (
	"strings"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// TestCauseMeaningSaysServedOnlyWhenARevisionServed: a dependency cause says the spec is
// unchanged since it served only for a workload with a revision that served; a victim of a
// shared dependency that never served is told to fix the dependency without that claim.
func TestCauseMeaningSaysServedOnlyWhenARevisionServed(t *testing.T) {
	served := &diagnose.Diagnosis{
		Kind: "Deployment", Name: "api", Cause: diagnose.CauseDependency,
		Revisions: &diagnose.Revisions{Current: "3", LastServing: "3"},
	}
	never := &diagnose.Diagnosis{
		Kind: "Deployment", Name: "cart", Cause: diagnose.CauseDependency,
		Revisions: &diagnose.Revisions{Current: "1"},
	}
	bare := &diagnose.Diagnosis{Kind: "Deployment", Name: "cart", Cause: diagnose.CauseDependency}
	if m := CauseMeaning(served); !strings.Contains(m, "unchanged since it last served") {
		t.Errorf("served: %q", m)
	}
	for _, d := range []*diagnose.Diagnosis{never, bare} {
		if m := CauseMeaning(d); strings.Contains(m, "served") || !strings.Contains(m, "depends on fails") {
			t.Errorf("never served: %q", m)
		}
	}
	if m := CauseMeaning(&diagnose.Diagnosis{Cause: diagnose.CauseSpec}); !strings.Contains(m, "the spec is wrong") {
		t.Errorf("spec: %q", m)
	}
}

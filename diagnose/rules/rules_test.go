package rules

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// familyNamed returns the registered family of that name.
func familyNamed(t *testing.T, name string) *family {
	t.Helper()
	for _, f := range families() {
		if f.name == name {
			return f
		}
	}
	t.Fatalf("no family %q", name)
	return nil
}

func TestFamilyOwns(t *testing.T) {
	tests := []struct {
		name string
		f    *family
		rule RuleID
		want bool
	}{
		{name: "own rule", f: familyNamed(t, "scheduling"), rule: RuleNodeSelector, want: true},
		{name: "borrowed rule", f: familyNamed(t, "scheduling"), rule: RuleVolumeRefNotFound, want: true},
		{name: "another family's rule", f: familyNamed(t, "image"), rule: RuleNodeSelector, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.owns(tt.rule); got != tt.want {
				t.Errorf("%s.owns(%s) = %v, want %v", tt.f.name, tt.rule, got, tt.want)
			}
		})
	}
}

// TestFamiliesReadOnlyTheirInput holds the families to their narrow input: package rules
// reads an Input and records to a Sink, so none of its files may import the snapshot, the
// sources or the engine (which the import cycle forbids already).
func TestFamiliesReadOnlyTheirInput(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	families := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "register(family{") {
			families++
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "github.com/kubediagnose/kubectl-diagnose/") && p != "github.com/kubediagnose/kubectl-diagnose/diagnose/facts" && p != "github.com/kubediagnose/kubectl-diagnose/internal/fieldpath" {
				t.Errorf("%s imports %s: a rule reads its Input, not the workload or the snapshot", name, p)
			}
		}
	}
	if families < 15 {
		t.Errorf("found %d family files, want every one (at least 15)", families)
	}
}

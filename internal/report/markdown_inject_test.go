package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// TestMarkdownValuesCannotEscapeTheirCodeSpan renders -o markdown with a CommonMark and GFM
// renderer that lets raw HTML through, as a ticket system may: spec values that hold backtick
// runs must stay inside their code spans, never render as HTML or links.
func TestMarkdownValuesCannotEscapeTheirCodeSpan(t *testing.T) {
	payloads := []string{
		"x``<img src=x onerror=alert(1)>``[click](https://evil.example)",
		"`<img src=x onerror=alert(1)>`",
		"```<script>alert(1)</script>",
		"a````<img src=x>",
	}
	for _, p := range payloads {
		r := sampleReport()
		d := ingester()
		d.Suspects[0].Value = p
		d.Suspects[0].PreviousValue = p
		d.Revisions.ChangedPaths = append(d.Revisions.ChangedPaths, p)
		r.Workloads = []diagnose.Diagnosis{d}
		var md bytes.Buffer
		if err := printReport(&md, r, "markdown"); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		gm := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe()))
		if err := gm.Convert(md.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		rendered := out.String()
		for _, bad := range []string{"<img", "<script", "<a href"} {
			if strings.Contains(rendered, bad) {
				t.Errorf("value %q renders %s:\n%s", p, bad, rendered)
			}
		}
		// Each copy of the value is one code span holding it whole.
		if n := strings.Count(rendered, "<code>"+htmlEscape(p)+"</code>"); n < 3 {
			t.Errorf("value %q is whole in %d code spans, want 3 (value, previous, changed path):\n%s", p, n, rendered)
		}
	}
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

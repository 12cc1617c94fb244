package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// TestSortByJSONPath: --sort-by takes a JSONPath into each workload of -o json's document and
// orders as kubectl's --sort-by does: ascending, numbers as numbers, a null or missing field
// first, ties in the order of the worst first.
func TestSortByJSONPath(t *testing.T) {
	tests := []struct {
		sortBy string
		want   []string
	}{
		{"{.counts.serving}", []string{"thumbnailer", "telemetry-ingester", "api-gateway", "batch-exporter", "payments-api", "recommender", "checkout"}},
		{".counts.serving", []string{"thumbnailer", "telemetry-ingester", "api-gateway", "batch-exporter", "payments-api", "recommender", "checkout"}},
		// Numbers, not their text: 45 before 691200.
		{"{.youngestCopySeconds}", []string{"batch-exporter", "recommender", "payments-api", "telemetry-ingester", "api-gateway", "thumbnailer", "checkout"}},
		{"{.namespace}", []string{"api-gateway", "telemetry-ingester", "recommender", "batch-exporter", "checkout", "payments-api", "thumbnailer"}},
		// The workloads without a top suspect first.
		{"{.suspects[0].confidence}", []string{"recommender", "batch-exporter", "checkout", "payments-api", "telemetry-ingester", "api-gateway", "thumbnailer"}},
	}
	for _, tt := range tests {
		t.Run(tt.sortBy, func(t *testing.T) {
			if err := CheckSortBy(tt.sortBy); err != nil {
				t.Fatal(err)
			}
			var want strings.Builder
			for _, n := range tt.want {
				want.WriteString("deployment.apps/" + n + "\n")
			}
			if got := printed(t, "name", Options{SortBy: tt.sortBy}); got != want.String() {
				t.Errorf("-o name --sort-by %q:\n%s\nwant:\n%s", tt.sortBy, got, want.String())
			}
		})
	}

	for _, tt := range []struct{ sortBy, want string }{
		{"{.nope}", `--sort-by: couldn't find any field with path "{.nope}" in the workloads`},
		{"{.counts}", "--sort-by {.counts}: cannot order map[string]interface {} against map[string]interface {}; pick a field holding numbers or strings"},
	} {
		p, err := NewPrinter("table", Options{SortBy: tt.sortBy})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.PrintReport(&bytes.Buffer{}, sampleReport()); err == nil || err.Error() != tt.want {
			t.Errorf("--sort-by %s: %v, want %q", tt.sortBy, err, tt.want)
		}
	}
	for _, tt := range []struct{ sortBy, want string }{
		{"shpae", `unknown --sort-by "shpae"; use one of shape, age, restarts, name, or a JSONPath such as '{.counts.serving}'`},
		{"{.name", `--sort-by: unbalanced braces in custom-columns path "{.name"`},
		{"{.workloads[}", "--sort-by {.workloads[}: unterminated array"},
	} {
		if err := CheckSortBy(tt.sortBy); err == nil || err.Error() != tt.want {
			t.Errorf("CheckSortBy(%q) = %v, want %q", tt.sortBy, err, tt.want)
		}
	}
}

func TestJSONLessOrdersQuantitiesAsKubectl(t *testing.T) {
	tests := []struct {
		a, b any
		want bool
	}{
		{"9Gi", "10Gi", true},
		{"500m", "1", true},
		{"b", "a", false},
		{"a10", "a9", true}, // not quantities: text order
		{float64(2), float64(10), true},
	}
	for _, tt := range tests {
		if got, err := jsonLess(tt.a, tt.b); err != nil || got != tt.want {
			t.Errorf("jsonLess(%v, %v) = %v, %v; want %v", tt.a, tt.b, got, err, tt.want)
		}
	}
	if _, err := jsonLess("1", float64(1)); err == nil {
		t.Error("a string and a number are ordered")
	}
}

// TestLabelColumns: -L and --show-labels add the workloads' labels as kubectl get adds them,
// after every other column, the cluster's text cleaned.
func TestLabelColumns(t *testing.T) {
	labels := func(_, _, name string) map[string]string {
		switch name {
		case "checkout":
			return map[string]string{"app.kubernetes.io/part-of": "shop", "tier": "web\x1b[2J"}
		case "recommender":
			return map[string]string{"app.kubernetes.io/part-of": "shop"}
		}
		return nil
	}
	opts := Options{Labels: labels, LabelColumns: []string{"app.kubernetes.io/part-of", "tier"}, ShowLabels: true, SortBy: "name"}
	got := printed(t, "wide", opts)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if h := strings.Fields(lines[0]); strings.Join(h[len(h)-5:], " ") != "PATH FIX PART-OF TIER LABELS" {
		t.Errorf("header %q: the label columns do not follow the wide ones", lines[0])
	}
	want := map[string]string{
		"deployment/checkout":    "shop web app.kubernetes.io/part-of=shop,tier=web",
		"deployment/recommender": "shop app.kubernetes.io/part-of=shop",
		"deployment/api-gateway": "<none>",
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		w, ok := want[f[2]]
		if !ok {
			continue
		}
		if got := strings.Join(f[len(f)-len(strings.Fields(w)):], " "); got != w {
			t.Errorf("%s ends with %q, want %q:\n%s", f[2], got, w, l)
		}
	}
	if strings.Contains(got, "\x1b") {
		t.Error("a label value's escape sequence reached the table")
	}
	// The fleet's table takes each context's labels.
	var b bytes.Buffer
	fp, err := NewFleetPrinter("table", Options{LabelColumns: []string{"tier"}})
	if err != nil {
		t.Fatal(err)
	}
	r := sampleReport()
	if err := fp.PrintFleet(&b, []Section{{Context: "a", Report: r, Labels: labels}, {Context: "b", Report: r}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "TIER") || strings.Count(b.String(), " web\n") != 1 {
		t.Errorf("fleet -L tier:\n%s", b.String())
	}
}

// TestGoTemplate: -o go-template runs over the document -o json prints, with cli-runtime's
// printer, for one report and a fleet.
func TestGoTemplate(t *testing.T) {
	tmpl := `{{range .workloads}}{{if eq .shape "live-but-idle"}}{{.namespace}}/{{.name}} {{.counts.serving}}/{{.counts.declared}}{{"\n"}}{{end}}{{end}}`
	want := "dev-ingester/telemetry-ingester 0/5\ndev-gateway/api-gateway 0/2\n"
	if got := printed(t, "go-template="+tmpl, Options{}); got != want {
		t.Errorf("-o go-template:\n%s\nwant:\n%s", got, want)
	}
	file := filepath.Join(t.TempDir(), "t.tmpl")
	if err := os.WriteFile(file, []byte(tmpl), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := printed(t, "go-template-file="+file, Options{}); got != want {
		t.Errorf("-o go-template-file:\n%s\nwant:\n%s", got, want)
	}
	fp, err := NewFleetPrinter(`go-template={{range .items}}{{.source.context}} {{len .workloads}}{{"\n"}}{{end}}`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	a, c := sampleReport(), sampleReport()
	a.Source.Context, c.Source.Context = "a", "c"
	c.Workloads = c.Workloads[:2]
	if err := fp.PrintFleet(&b, []Section{{Context: "a", Report: a}, {Context: "c", Report: c}}); err != nil {
		t.Fatal(err)
	}
	if b.String() != "a 7\nc 2\n" {
		t.Errorf("fleet -o go-template = %q", b.String())
	}
}

// TestExplainMarkdown: explain -o markdown is a document for a ticket: the workload as its
// title, the audit's section below it, then the changes, the timeline and the copies, cluster
// text escaped as the audit's is.
func TestExplainMarkdown(t *testing.T) {
	var d diagnose.Diagnosis
	for _, w := range sampleReport().Workloads {
		if w.Name == "telemetry-ingester" {
			d = w
		}
	}
	var b bytes.Buffer
	if err := PrintDiagnosis(&b, &d, "markdown"); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	rest := got
	for _, want := range []string{
		"# deployment/telemetry-ingester in dev-ingester: live-but-idle\n\n",
		"- Shape: live-but-idle",
		"## Suspects\n",
		"| 1 | Deployment/telemetry-ingester | `spec.template.spec.containers[0].env[0].value` | `telemetry-intake.internal:9443` | `telemetry-intake.internal:8443` | high |",
		"## Evidence\n",
		"## Suggested fix\n\n`kubectl rollout undo deployment/telemetry-ingester --to-revision=1 -n dev-ingester`\n",
		"## Changed since it last served\n\n| Path | Previous | Current |\n",
		"| `spec.template.spec.containers[0].env[0].value` | `telemetry-intake.internal:8443` | `telemetry-intake.internal:9443` |\n",
		"## Copies\n",
		"| telemetry-ingester-7d9f8b6c5-2xkqp | 2 | Running | false | false | 0 | 21m | ReadinessProbeFailed | kind-worker |\n",
	} {
		i := strings.Index(rest, want)
		if i < 0 {
			t.Fatalf("explain -o markdown lacks %q (in order):\n%s", want, got)
		}
		rest = rest[i+len(want):]
	}

	// A copy's name from the cluster cannot end a table row early or start markup.
	d.Detail.Changes = nil
	d.Timeline = []diagnose.TimelineEntry{{At: refTime, Kind: diagnose.TimelineOnset, Message: "boom | <script>x</script>\n# not a heading"}}
	b.Reset()
	if err := PrintDiagnosis(&b, &d, "markdown"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| onset | boom \\| &lt;script&gt;x&lt;/script&gt; # not a heading |\n") {
		t.Errorf("timeline message not escaped:\n%s", b.String())
	}
}

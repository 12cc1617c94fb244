package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

func printed(t *testing.T, format string, opts Options) string {
	t.Helper()
	p, err := NewPrinter(format, opts)
	if err != nil {
		t.Fatalf("NewPrinter(%q): %v", format, err)
	}
	var b bytes.Buffer
	if err := p.PrintReport(&b, sampleReport()); err != nil {
		t.Fatalf("print -o %s: %v", format, err)
	}
	return b.String()
}

func TestNameAndSortBy(t *testing.T) {
	tests := []struct {
		sortBy string
		want   []string
	}{
		{"", []string{"payments-api", "thumbnailer", "telemetry-ingester", "api-gateway", "recommender", "batch-exporter", "checkout"}},
		{"shape", []string{"payments-api", "thumbnailer", "telemetry-ingester", "api-gateway", "recommender", "batch-exporter", "checkout"}},
		// Youngest copy first; batch-exporter has none and comes last.
		{"age", []string{"recommender", "payments-api", "telemetry-ingester", "api-gateway", "thumbnailer", "checkout", "batch-exporter"}},
		// Most restarts first, ties worst first.
		{"restarts", []string{"thumbnailer", "checkout", "payments-api", "telemetry-ingester", "api-gateway", "recommender", "batch-exporter"}},
		{"name", []string{"api-gateway", "batch-exporter", "checkout", "payments-api", "recommender", "telemetry-ingester", "thumbnailer"}},
	}
	for _, tt := range tests {
		t.Run("sort by "+tt.sortBy, func(t *testing.T) {
			var want strings.Builder
			for _, n := range tt.want {
				want.WriteString("deployment.apps/" + n + "\n")
			}
			if got := printed(t, "name", Options{SortBy: tt.sortBy}); got != want.String() {
				t.Errorf("-o name --sort-by %q:\n%s\nwant:\n%s", tt.sortBy, got, want.String())
			}
			table := printed(t, "table", Options{SortBy: tt.sortBy, NoHeaders: true})
			var order []string
			for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
				order = append(order, strings.TrimPrefix(strings.Fields(line)[2], "deployment/"))
			}
			if strings.Join(order, " ") != strings.Join(tt.want, " ") {
				t.Errorf("table --sort-by %q order %v, want %v", tt.sortBy, order, tt.want)
			}
		})
	}
}

func TestTableNoHeadersAndWithNamespace(t *testing.T) {
	full := printed(t, "table", Options{})
	bare := printed(t, "table", Options{NoHeaders: true})
	if !strings.HasPrefix(full, "SHAPE") || strings.Contains(bare, "SHAPE") {
		t.Fatalf("headers: with\n%s\nwithout\n%s", full, bare)
	}
	// The same rows; only the alignment may change, as the header no longer widens a column.
	if got := full[strings.Index(full, "\n")+1:]; strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(bare), " ") {
		t.Errorf("--no-headers changed the rows:\n%s\nwant\n%s", bare, got)
	}
	r := sampleReport()
	for _, w := range r.Workloads {
		if w.Name == "telemetry-ingester" {
			r.Workloads = append(r.Workloads[:0], w)
			break
		}
	}
	var b bytes.Buffer
	p, _ := NewPrinter("table", Options{WithNamespace: true})
	if err := p.PrintReport(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "NAMESPACE") || !strings.Contains(b.String(), "dev-ingester") {
		t.Errorf("WithNamespace on one workload:\n%s", b.String())
	}
}

func TestJSONPath(t *testing.T) {
	tests := []struct{ format, want string }{
		// The document -o json prints, in its order.
		{"jsonpath={.workloads[*].name}", "checkout recommender batch-exporter telemetry-ingester thumbnailer payments-api api-gateway"},
		{
			`jsonpath={range .workloads[?(@.shape=="live-but-idle")]}{.namespace}/{.name} {.counts.serving}/{.counts.declared}{"\n"}{end}`,
			"dev-ingester/telemetry-ingester 0/5\ndev-gateway/api-gateway 0/2\n",
		},
		{"jsonpath={.kind} {.source.type} {.summary.healthy}", "Report dump 2"},
		// A missing key is empty, as kubectl's default allows.
		{"jsonpath={.nothing}", ""},
	}
	for _, tt := range tests {
		if got := printed(t, tt.format, Options{}); got != tt.want {
			t.Errorf("-o %s = %q, want %q", tt.format, got, tt.want)
		}
	}
}

func TestCustomColumns(t *testing.T) {
	got := printed(t, "custom-columns=NAME:.name,SHAPE:{.shape},SERVING:counts.serving,SUSPECT:.suspects[0].path,MISSING:.nope", Options{SortBy: "name"})
	want := []string{
		"NAME SHAPE SERVING SUSPECT MISSING",
		"api-gateway live-but-idle 0 spec.selector <none>",
		"batch-exporter healthy 0 <none> <none>",
	}
	lines := strings.Split(got, "\n")
	for i, w := range want {
		if i >= len(lines) || strings.Join(strings.Fields(lines[i]), " ") != w {
			t.Errorf("custom-columns line %d is not %q:\n%s", i, w, got)
		}
	}
	if len(lines) != 9 {
		t.Errorf("custom-columns printed %d lines, want a header and 7 rows:\n%s", len(lines)-1, got)
	}
	bare := printed(t, "custom-columns=NAME:.name,RESTARTS:.counts.restarts", Options{NoHeaders: true, SortBy: "restarts"})
	if !strings.HasPrefix(bare, "thumbnailer          12\ncheckout             1\n") {
		t.Errorf("custom-columns --no-headers --sort-by restarts:\n%s", bare)
	}
}

func TestTemplateFormatErrors(t *testing.T) {
	tests := []struct{ format, want string }{
		{"custom-columns=", "custom-columns format specified but no custom columns given"},
		{"custom-columns=NAME", "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"},
		{"custom-columns=NAME:{.name", `unbalanced braces in custom-columns path "{.name"`},
		{"jsonpath={.workloads[", "-o jsonpath={.workloads[: error parsing jsonpath {.workloads[, unterminated array"},
		{"go-template={{.kind", "-o go-template={{.kind: error parsing template {{.kind, template: output:1: unclosed action"},
		{"go-template=", "-o go-template=: template format specified but no template given"},
		{"go-template-file=testdata/no-such-template", "-o go-template-file=testdata/no-such-template: error reading --template testdata/no-such-template, open testdata/no-such-template: no such file or directory"},
		{"gotemplate={{.kind}}", `unknown output format "gotemplate={{.kind}}"`},
	}
	for _, tt := range tests {
		_, err := NewPrinter(tt.format, Options{})
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("NewPrinter(%q) = %v, want %q", tt.format, err, tt.want)
		}
	}
}

// TestNameOfBatchKinds: -o name gives a Job and a CronJob their batch group, as kubectl does,
// so explain takes the line back.
func TestNameOfBatchKinds(t *testing.T) {
	r := &diagnose.Report{Workloads: []diagnose.Diagnosis{
		{Kind: "CronJob", Namespace: "billing", Name: "nightly-billing", Shape: diagnose.ShapeStartsAndDies},
		{Kind: "Job", Namespace: "billing", Name: "report-export", Shape: diagnose.ShapeNeverStarts},
		{Kind: "Deployment", Namespace: "billing", Name: "api", Shape: diagnose.ShapeHealthy},
	}}
	var b strings.Builder
	if err := (namePrinter{}).PrintReport(&b, r); err != nil {
		t.Fatal(err)
	}
	want := "job.batch/report-export\ncronjob.batch/nightly-billing\ndeployment.apps/api\n"
	if b.String() != want {
		t.Errorf("-o name:\n%s\nwant:\n%s", b.String(), want)
	}
}

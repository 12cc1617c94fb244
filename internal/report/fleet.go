package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// KindReportList is the kind of the document a fleet audit prints as json or yaml.
const KindReportList = "ReportList"

// Section is one context's part of a fleet audit: its report, made of its own snapshot.
type Section struct {
	// Context is the kubeconfig context the report was read from.
	Context string
	Report  *diagnose.Report
	// Labels resolves the labels of this context's workloads, for --show-labels and -L.
	Labels LabelFunc
}

// ReportList is the json and yaml document of a fleet audit: one Report per context, in the
// order the contexts were named (--all-contexts: sorted). It is named for the document's kind.
type ReportList struct { //nolint:revive // the kind's name, as Kubernetes names a kind's list
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Items      []*diagnose.Report `json:"items"`
}

// FleetPrinter writes the reports of several contexts in one format.
type FleetPrinter interface {
	PrintFleet(w io.Writer, secs []Section) error
}

// FleetFormat reports whether format can print several contexts: every format but name, whose
// lines could not say which cluster a workload is in.
func FleetFormat(format string) bool { return format != FormatName }

// NewFleetPrinter returns the fleet printer of format, one of AllFormats but name.
func NewFleetPrinter(format string, opts Options) (FleetPrinter, error) {
	if !FleetFormat(format) {
		return nil, fmt.Errorf("-o %s cannot say which context a workload is in; with several contexts use -o custom-columns=..., json or yaml", format)
	}
	p, err := NewPrinter(format, opts)
	if err != nil {
		return nil, err
	}
	switch p := p.(type) {
	case *tablePrinter:
		return p, nil
	case *markdownPrinter:
		return p, nil
	case jsonPrinter:
		return p, nil
	case yamlPrinter:
		return p, nil
	case templatePrinter:
		return p, nil
	case *customColumnsPrinter:
		return p, nil
	}
	return nil, fmt.Errorf("-o %s cannot print several contexts", format)
}

// List returns the fleet document of secs, every report normalized.
func List(secs []Section) *ReportList {
	l := &ReportList{APIVersion: diagnose.APIVersion, Kind: KindReportList, Items: make([]*diagnose.Report, 0, len(secs))}
	for _, s := range secs {
		l.Items = append(l.Items, normalize(s.Report))
	}
	return l
}

func (jsonPrinter) PrintFleet(w io.Writer, secs []Section) error {
	return writeReportListJSON(w, List(secs))
}

func (yamlPrinter) PrintFleet(w io.Writer, secs []Section) error { return writeYAML(w, List(secs)) }

func (p templatePrinter) PrintFleet(w io.Writer, secs []Section) error {
	doc, err := toUnstructured(List(secs))
	if err != nil {
		return err
	}
	return p.p.PrintObj(&unstructured.Unstructured{Object: doc}, w)
}

// PrintFleet writes the custom columns after a leading CONTEXT column, each context's rows
// together.
func (p *customColumnsPrinter) PrintFleet(w io.Writer, secs []Section) error {
	cols := append([]metav1.TableColumnDefinition{{Name: "CONTEXT", Type: "string"}}, p.columns...)
	table := &metav1.Table{ColumnDefinitions: cols}
	for _, sec := range secs {
		rows, err := p.rows(sec.Report)
		if err != nil {
			return err
		}
		for _, r := range rows {
			r.Cells = append([]any{Clean(sec.Context)}, r.Cells...)
			table.Rows = append(table.Rows, r)
		}
	}
	return printers.NewTablePrinter(printers.PrintOptions{NoHeaders: p.opts.NoHeaders}).PrintObj(table, w)
}

// PrintFleet writes one document: a table of the contexts, then each context's audit under its
// own heading, one level down from a single audit's.
func (p *markdownPrinter) PrintFleet(w io.Writer, secs []Section) error {
	ew := &errWriter{w: w}
	ew.printf("# kubectl-diagnose audit\n\n")
	ew.printf("- Contexts: %d\n", len(secs))
	ew.printf("\n## Contexts\n\n| Context | Source | Workloads | Broken | Not seen |\n|---|---|---:|---:|---:|\n")
	for _, s := range secs {
		broken := 0
		for _, sh := range diagnose.Shapes {
			if sh.Broken() {
				broken += s.Report.Summary[sh]
			}
		}
		// A waived verdict is still broken, and shown as waived rather than hidden.
		waived := 0
		for i := range s.Report.Workloads {
			if d := &s.Report.Workloads[i]; d.Shape.Broken() && d.Waived != nil {
				waived++
			}
		}
		brokenCell := strconv.Itoa(broken)
		if waived > 0 {
			brokenCell += fmt.Sprintf(" (%d waived)", waived)
		}
		ew.printf("| %s | %s | %d | %s | %d |\n", mdCell(s.Context), mdCell(sourceLabel(s.Report)),
			len(s.Report.Workloads), brokenCell, len(s.Report.Visibility))
	}
	for _, s := range secs {
		ew.printf("\n## Context %s\n\n", mdText(s.Context))
		writeMarkdownReport(ew, s.Report, 1)
	}
	return ew.err
}

// heading is a markdown heading of level n+depth.
func heading(n, depth int) string { return strings.Repeat("#", n+depth) }

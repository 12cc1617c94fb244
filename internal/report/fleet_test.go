package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"sigs.k8s.io/yaml"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// sampleFleet is three contexts: prod (the sample report), staging (healthy, one namespace)
// and dead, which could not be read.
func sampleFleet() []Section {
	staging := sampleReport()
	staging.Source = snapshot.SourceInfo{Type: snapshot.SourceLive, Context: "staging", Server: "https://10.0.0.2:6443"}
	staging.Visibility = nil
	staging.Workloads = healthy()
	staging.Summary = map[diagnose.Shape]int{diagnose.ShapeHealthy: 2, diagnose.ShapeProgressing: 1}
	dead := &diagnose.Report{
		APIVersion: diagnose.APIVersion, Kind: diagnose.ReportKind, ReferenceTime: refTime,
		Source:     snapshot.SourceInfo{Type: snapshot.SourceLive, Context: "dead", Server: "https://10.0.0.3:6443"},
		Visibility: []snapshot.Visibility{{Reason: "cannot reach the API server at 10.0.0.3:6443: dial tcp 10.0.0.3:6443: connect: connection refused"}},
		Summary:    map[diagnose.Shape]int{},
	}
	return []Section{
		{Context: "prod", Report: sampleReport()},
		{Context: "staging", Report: staging},
		{Context: "dead", Report: dead},
	}
}

// TestPrintFleet compares every format of a fleet with its golden file.
func TestPrintFleet(t *testing.T) {
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			p, err := NewFleetPrinter(format, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := p.PrintFleet(&buf, sampleFleet()); err != nil {
				t.Fatal(err)
			}
			golden.RequireEqual(t, buf.Bytes())
		})
	}
}

func TestFleetTableKeepsEachContextsRowsTogether(t *testing.T) {
	p, err := NewFleetPrinter("table", Options{SortBy: "name"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.PrintFleet(&buf, sampleFleet()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if got := strings.Fields(lines[0]); got[0] != "CONTEXT" || got[1] != "SHAPE" || got[2] != "NAMESPACE" {
		t.Fatalf("header %v", got)
	}
	var contexts []string
	for _, l := range lines[1:] {
		contexts = append(contexts, strings.Fields(l)[0])
	}
	// prod has 7 workloads, staging 3; dead has none and no row.
	want := append(strings.Split(strings.Repeat("prod ", 7), " ")[:7], "staging", "staging", "staging")
	if strings.Join(contexts, ",") != strings.Join(want, ",") {
		t.Errorf("row contexts %v, want %v", contexts, want)
	}
	// --sort-by applies within each context: staging's rows by name.
	if !strings.Contains(lines[8], "batch-exporter") || !strings.Contains(lines[10], "recommender") {
		t.Errorf("staging's rows are not by name:\n%s", buf.String())
	}
}

func TestFleetYAMLIsTheJSONDocument(t *testing.T) {
	var j, y bytes.Buffer
	jp, _ := NewFleetPrinter("json", Options{})
	yp, _ := NewFleetPrinter("yaml", Options{})
	if err := jp.PrintFleet(&j, sampleFleet()); err != nil {
		t.Fatal(err)
	}
	if err := yp.PrintFleet(&y, sampleFleet()); err != nil {
		t.Fatal(err)
	}
	fromYAML, err := yaml.YAMLToJSON(y.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := yaml.YAMLToJSON(j.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fromYAML, fromJSON) {
		t.Errorf("yaml and json differ:\n%s\n%s", fromYAML, fromJSON)
	}
	if !bytes.Contains(fromJSON, []byte(`"kind":"ReportList"`)) || !bytes.Contains(fromJSON, []byte(`"workloads":[]`)) {
		t.Errorf("want a ReportList whose unread item has workloads []:\n%s", fromJSON)
	}
}

func TestNameCannotPrintAFleet(t *testing.T) {
	if _, err := NewFleetPrinter(FormatName, Options{}); err == nil || FleetFormat(FormatName) {
		t.Error("-o name of a fleet: want an error, its lines cannot name the context")
	}
	if _, err := NewFleetPrinter("jsonpath={.items[*].source.context}", Options{}); err != nil {
		t.Error(err)
	}
}

// TestFleetMarkdownCountsWaivedApart: the contexts table counts a waived broken workload among
// the broken, and says how many of them are waived: shown, never hidden.
func TestFleetMarkdownCountsWaivedApart(t *testing.T) {
	secs := sampleFleet()
	prod := secs[0].Report
	waived := 0
	for i := range prod.Workloads {
		if prod.Workloads[i].Shape.Broken() && waived == 0 {
			prod.Workloads[i].Waived = &diagnose.Waiver{What: string(prod.Workloads[i].Shape), Reason: "known"}
			waived++
		}
	}
	if waived == 0 {
		t.Fatal("the sample fleet has no broken workload to waive")
	}
	p, err := NewFleetPrinter("markdown", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.PrintFleet(&buf, secs); err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.HasPrefix(l, "| prod |") {
			row = l
		}
	}
	if !strings.Contains(row, " (1 waived) |") {
		t.Errorf("prod's row %q does not count its waived workload apart", row)
	}
}

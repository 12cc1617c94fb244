package tui

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
)

// cellGap is what the audit table puts between its cells (tabwriter padding 3); a short name
// has single spaces only.
var cellGap = regexp.MustCompile(`\s{3,}`)

// auditSuspects prints r as the audit table in format (table or wide) and returns each row's
// SUSPECT cell by namespace and kind/name.
func auditSuspects(t *testing.T, r *diagnose.Report, format string) map[[2]string]string {
	t.Helper()
	p, err := report.NewPrinter(format, report.Options{WithNamespace: true})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.PrintReport(&buf, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	header := cellGap.Split(lines[0], -1)
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	out := map[[2]string]string{}
	for _, l := range lines[1:] {
		if l == "" {
			// The rows end here; the report's shared dependencies follow, one line each.
			break
		}
		cells := cellGap.Split(strings.TrimRight(l, " "), -1)
		if len(cells) < len(header)-1 {
			t.Fatalf("%s row %q has %d cells for %d columns", format, l, len(cells), len(header))
		}
		out[[2]string{cells[col["NAMESPACE"]], cells[col["WORKLOAD"]]}] = cells[col["SUSPECT"]]
	}
	return out
}

// TestOneShortFormOfASuspect: over every scenario, fixture and the demo, each workload's
// suspects are named alike by the audit table, -o wide, the console's row, its Diagnosis tab
// and the summary Y copies. A Job's env var reads `env LEDGER_DB_ADDR` everywhere, never
// `env[0]` in one and its name in another.
func TestOneShortFormOfASuspect(t *testing.T) {
	var dirs []string
	for _, pattern := range []string{"../testdata/scenarios/*/dump", "../testdata/fixtures/*/dump", "../internal/demo/dump"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, m...)
	}
	if len(dirs) < 60 {
		t.Fatalf("found %d dumps, want every scenario and fixture", len(dirs))
	}
	st := testStyles()
	named, compared := 0, 0
	for _, dir := range dirs {
		t.Run(filepath.Base(filepath.Dir(dir)), func(t *testing.T) {
			snap, err := dump.Read(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			rep := diagnose.Diagnose(snap)
			table, wide := auditSuspects(t, rep, "table"), auditSuspects(t, rep, "wide")
			ds := datasetOf(snap, rep)
			for i := range ds.rows {
				r := &ds.rows[i]
				d := r.diag
				key := [2]string{d.Namespace, report.WorkloadRef(d)}
				want := orDash(report.ShortSuspect(d))
				for format, cells := range map[string]map[[2]string]string{"table": table, "wide": wide} {
					if got, ok := cells[key]; !ok || got != want {
						t.Errorf("%s: %s says %q, want %q", key, format, got, want)
					}
				}
				if r.suspect != want {
					t.Errorf("%s: the console's row says %q, want %q", key, r.suspect, want)
				}
				if len(d.Suspects) == 0 {
					continue
				}
				compared++
				lines, _ := ds.diagnosisLines(st, d, nil, specView{suspect: -1}, 200)
				tab := ansi.Strip(strings.Join(lines, "\n"))
				for j := range d.Suspects {
					s := &d.Suspects[j]
					short := orDash(report.ShortSuspectOf(d, s))
					if line := itoa(j+1) + ". " + short + "  " + string(s.Confidence); !strings.Contains(tab, "\n"+line+"\n") {
						t.Errorf("%s: the Diagnosis tab does not list suspect %d as %q:\n%s", key, j+1, line, tab)
					}
					if s.Element != "" {
						named++
					}
				}
				sc := diagnosisScreen{ds: ds, diag: d}
				if sum := sc.Summary(); !strings.Contains(sum, "\nsuspect: "+want+" (") {
					t.Errorf("%s: the summary does not name the suspect %q:\n%s", key, want, sum)
				}
				if d.Kind == "Job" && d.Name == "ledger-reconcile" && want != "env LEDGER_DB_ADDR" {
					t.Errorf("the Job's env var is %q, want env LEDGER_DB_ADDR", want)
				}
			}
		})
	}
	if compared == 0 || named == 0 {
		t.Fatalf("compared %d suspects, %d named by their element: the test saw nothing to compare", compared, named)
	}
}

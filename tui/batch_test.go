package tui

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
)

// TestCronJobRowAndSpec: a CronJob from a dump the tool wrote on a control plane is a row of its
// own, and its Spec tab renders the job template with the top suspect's line found under
// spec.jobTemplate.spec.template.
func TestCronJobRowAndSpec(t *testing.T) {
	snap, err := dump.Read(filepath.Join("..", "testdata", "fixtures", "cronjob-template-change", "dump"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ds := datasetOf(snap, diagnose.Diagnose(snap))
	if len(ds.rows) != 1 || ds.rows[0].workload != "cj/nightly-billing" {
		var got []string
		for _, r := range ds.rows {
			got = append(got, r.workload)
		}
		t.Fatalf("rows = %v, want cj/nightly-billing alone: its Jobs are its revisions", got)
	}
	v := ds.newSpecView(ds.rows[0].diag, nil)
	if v.suspect < 0 || !strings.Contains(v.lines[v.suspect], "--rates=/etc/billing/rates-2027.yaml") {
		t.Errorf("suspect line %d of %d lines, want the args line:\n%s", v.suspect, len(v.lines), strings.Join(v.lines, "\n"))
	}
}

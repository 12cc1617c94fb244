package tui

import (
	"strings"

	"github.com/kubediagnose/kubectl-diagnose/internal/report"
)

// Summary is what Y copies, for a ticket or a chat: the workload and its shape, the headline,
// the cause, the top suspect with its values, and the fix, a line each. The suspect is named as
// the table and the Diagnosis tab name it (report.ShortSuspectOf), its field as explain does.
func (s *diagnosisScreen) Summary() string {
	d := s.diag
	if d == nil {
		return ""
	}
	lines := []string{
		Sanitize(report.WorkloadRef(d)) + " in namespace " + Sanitize(d.Namespace) + ": " + report.ShapeCell(d),
		headline(d),
	}
	if d.Waived != nil {
		lines = append(lines, report.WaivedMark+": "+report.WaiverText(d.Waived))
	}
	if c := report.CauseLabel(d); c != "-" {
		lines = append(lines, "cause: "+c+" ("+report.CauseMeaning(d)+")")
	}
	if len(d.Suspects) > 0 {
		sp := &d.Suspects[0]
		line := "suspect: " + orDash(report.ShortSuspectOf(d, sp))
		if ref := Sanitize(report.SuspectRef(d)); ref != "" {
			line += " (" + ref + ")"
		}
		if sp.Value != "" {
			line += ` is "` + Sanitize(sp.Value) + `"`
		}
		if sp.PreviousValue != "" && sp.PreviousValue != sp.Value {
			line += `, was "` + Sanitize(sp.PreviousValue) + `"`
		}
		lines = append(lines, line)
	}
	if d.Fix != "" {
		lines = append(lines, "fix: "+Sanitize(d.Fix))
	}
	return strings.Join(lines, "\n")
}

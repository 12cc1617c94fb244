package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// maxObjects bounds how many copies an evidence line names before it says "+N more".
const maxObjects = 3

// PrintExplain writes one workload's diagnosis in full as plain text.
func PrintExplain(w io.Writer, d *diagnose.Diagnosis) error {
	ew := &errWriter{w: w}
	ew.printf("%s in namespace %s\n", WorkloadRef(d), d.Namespace)
	ew.printf("Shape:     %s (%s)\n", d.Shape, ShapeMeaning(d.Shape))
	if d.Headline != "" {
		ew.printf("Headline:  %s\n", Clean(d.Headline))
	}
	ew.printf("Copies:    %d existing of %d declared, %d serving, %d restarts\n",
		d.Counts.Existing, d.Counts.Declared, d.Counts.Serving, d.Counts.Restarts)
	ew.printf("Ages:      youngest %s, oldest %s\n", Age(d.YoungestCopySeconds), Age(d.OldestCopySeconds))
	if c := CauseLabel(d); c != none {
		ew.printf("Cause:     %s\n", Clean(CauseSentence(d)))
		if a := d.Argument; a != nil {
			ew.printf("  for:     %s\n", Clean(a.For))
			if a.Against != "" {
				ew.printf("  against: %s\n", Clean(a.Against))
			}
		}
	}

	if len(d.Suspects) > 0 {
		ew.printf("\nSuspects, most likely first:\n")
		for i := range d.Suspects {
			s := &d.Suspects[i]
			path := PathText(s.Path)
			ew.printf("  %d. %s %s  [%s]\n", i+1, Clean(s.Object), path, s.Confidence)
			ew.printf("     value:     %s\n", quoted(s.Value))
			switch {
			case s.PreviousValue != "" && s.PreviousValue == s.Value && d.Revisions != nil && d.Revisions.LastServing != "":
				ew.printf("     previous:  the same, unchanged since revision %s served\n", d.Revisions.LastServing)
			case s.PreviousValue == "" && s.Object != d.Kind+"/"+d.Name:
				// Only the workload's own revisions record earlier values.
				ew.printf("     previous:  not recorded (the cluster keeps no earlier %s)\n", Clean(s.Object))
			default:
				ew.printf("     previous:  %s\n", quoted(s.PreviousValue))
			}
			if s.Reason != "" {
				ew.printf("     why:       %s\n", Clean(s.Reason))
			}
		}
	}

	if len(d.Evidence) > 0 {
		ew.printf("\nEvidence:\n")
		for _, e := range d.Evidence {
			ew.printf("  - [%s] %s: %s\n", e.Source, Clean(e.Kind), Clean(e.Message))
			if more := evidenceFacts(e); more != "" {
				ew.printf("      %s\n", more)
			}
		}
	}

	if d.Revisions != nil || (d.Detail != nil && len(d.Detail.Changes) > 0) {
		ew.printf("\nRevisions:\n")
		if d.Revisions != nil {
			ew.printf("  current:       %s\n", orNone(d.Revisions.Current))
			ew.printf("  last serving:  %s\n", orNone(d.Revisions.LastServing))
		}
		switch {
		case d.Detail != nil && len(d.Detail.Changes) > 0:
			ew.printf("  changed since it last served:\n")
			for _, c := range d.Detail.Changes {
				path := PathText(c.Path)
				ew.printf("    %s: %s -> %s\n", path, quoted(c.Previous), quoted(c.Current))
			}
		case d.Revisions != nil && len(d.Revisions.ChangedPaths) > 0:
			ew.printf("  changed since it last served:\n")
			for _, p := range d.Revisions.ChangedPaths {
				ew.printf("    %s\n", p)
			}
		case d.Revisions != nil && d.Revisions.LastServing != "" && d.Revisions.LastServing == d.Revisions.Current:
			ew.printf("  the spec has not changed since it last served\n")
		}
	}

	if len(d.Timeline) > 0 {
		ew.printf("\nTimeline (what the snapshot can date, oldest first):\n")
		for _, e := range d.Timeline {
			ew.printf("  %s  %-10s %s\n", e.At.UTC().Format("2006-01-02 15:04:05"), e.Kind, Clean(e.Message))
		}
	}

	var copies []diagnose.Copy
	if d.Detail != nil {
		copies = d.Detail.Copies()
	}
	if len(copies) > 0 {
		ew.printf("\nCopies:\n")
		tw := tabwriter.NewWriter(ew, 0, 8, 2, ' ', 0)
		rows := &errWriter{w: tw}
		rows.printf("  NAME\tREVISION\tPHASE\tREADY\tSERVING\tRESTARTS\tAGE\tREASON\tNODE\n")
		for _, c := range copies {
			rows.printf("  %s\t%s\t%s\t%t\t%t\t%d\t%s\t%s\t%s\n", Clean(c.Name), orNone(c.Revision),
				orNone(c.Phase), c.Ready, c.Serving, c.Restarts, CopyAge(c.AgeSeconds), orNone(Clean(c.Reason)), orNone(Clean(c.Node)))
		}
		if err := flushTable(tw, rows); err != nil {
			return err
		}
	}

	if len(d.SignalGaps) > 0 {
		ew.printf("\nSignal gaps (what the platform cannot see for this workload):\n")
		for _, g := range d.SignalGaps {
			ew.printf("  - %s %s: %s\n", Clean(g.Object), g.Path, Clean(g.Message))
		}
	}

	if d.Fix != "" {
		ew.printf("\nSuggested fix:\n  %s\n", Clean(d.Fix))
	}
	return ew.err
}

// PrintDiagnosis writes one workload's diagnosis in one of ExplainFormats.
func PrintDiagnosis(w io.Writer, d *diagnose.Diagnosis, format string) error {
	switch format {
	case "text", "":
		return PrintExplain(w, d)
	case "json":
		n := normalizeDiagnosis(*d)
		return writeJSON(w, &n)
	case "yaml":
		n := normalizeDiagnosis(*d)
		return writeYAML(w, &n)
	case "markdown":
		return writeExplainMarkdown(w, d)
	}
	return fmt.Errorf("unknown output format %q; use one of %s", format, strings.Join(ExplainFormats, ", "))
}

// evidenceFacts is the line under an evidence item: which copies, how often, when last.
func evidenceFacts(e diagnose.Evidence) string {
	var parts []string
	if len(e.Objects) > 0 {
		parts = append(parts, "on "+ObjectList(e.Objects))
	}
	if e.Count > 1 {
		parts = append(parts, fmt.Sprintf("seen %d times", e.Count))
	}
	if e.LastSeen != nil {
		parts = append(parts, "last "+e.LastSeen.UTC().Format(time.RFC3339))
	}
	return strings.Join(parts, ", ")
}

// ObjectList names the first few objects an evidence line covers, cleaned, and counts the
// rest: "pod-a, pod-b, pod-c (+2 more)". The console writes evidence lines with it too.
func ObjectList(objs []string) string {
	shown := objs
	if len(shown) > maxObjects {
		shown = shown[:maxObjects]
	}
	s := make([]string, len(shown))
	for i, o := range shown {
		s[i] = Clean(o)
	}
	out := strings.Join(s, ", ")
	if n := len(objs) - len(shown); n > 0 {
		out += fmt.Sprintf(" (+%d more)", n)
	}
	return out
}

// quoted shows a value so an empty one is visibly empty.
func quoted(v string) string {
	if v == "" {
		return "(unset)"
	}
	return Clean(v)
}

// errWriter keeps the first write error so a long sequence of prints is checked once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// printf writes unless an earlier write failed, and keeps the error.
func (e *errWriter) printf(format string, args ...any) {
	if e.err != nil {
		return
	}
	_, e.err = fmt.Fprintf(e.w, format, args...)
}

// flushTable ends a table whose rows went through rows: the first failed row write wins over a
// failed flush, since tabwriter may write some rows before Flush.
func flushTable(tw *tabwriter.Writer, rows *errWriter) error {
	err := tw.Flush()
	if rows.err != nil {
		return rows.err
	}
	return err
}

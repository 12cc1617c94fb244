package report

import (
	"io"
	"strings"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// markdownPrinter writes an audit document: where the data came from, totals per shape, one
// table row per workload, then a section per broken workload with its evidence and suspects.
type markdownPrinter struct {
	opts Options
}

func (p *markdownPrinter) PrintReport(w io.Writer, r *diagnose.Report) error {
	ew := &errWriter{w: w}
	ew.printf("# kubectl-diagnose audit\n\n")
	writeMarkdownReport(ew, r, 0)
	return ew.err
}

// writeMarkdownReport writes one report's audit after its title, its headings depth levels
// below a single audit's (a fleet puts each context one level down).
func writeMarkdownReport(ew *errWriter, r *diagnose.Report, depth int) {
	ds := WorstFirst(r)
	h2 := heading(2, depth)
	ew.printf("- Reference time: %s\n", r.ReferenceTime.UTC().Format(time.RFC3339))
	ew.printf("- Source: %s\n", mdText(sourceLabel(r)))
	ew.printf("- Workloads: %d\n", len(ds))

	if len(r.Visibility) > 0 {
		ew.printf("\n%s Not seen\n\n", h2)
		for _, v := range r.Visibility {
			where := v.Kind
			if v.Namespace != "" {
				where += " in " + v.Namespace
			}
			if where == "" {
				// The source as a whole: an unreachable cluster, a dump of mixed moments.
				ew.printf("- %s\n", mdText(v.Reason))
				continue
			}
			ew.printf("- %s: %s\n", mdText(where), mdText(v.Reason))
		}
	}

	ew.printf("\n%s Summary\n\n| Shape | Workloads |\n|---|---:|\n", h2)
	for _, s := range diagnose.Shapes {
		if n := r.Summary[s]; n > 0 {
			ew.printf("| %s | %d |\n", s, n)
		}
	}

	if len(ds) > 0 {
		ew.printf("\n%s Workloads\n\n", h2)
		ew.printf("| Shape | Namespace | Workload | Copies | Serving | Youngest | Restarts | Suspect | Cause |\n")
		ew.printf("|---|---|---|---:|---:|---:|---:|---|---|\n")
		for _, d := range ds {
			ew.printf("| %s | %s | %s | %d/%d | %d | %s | %d | %s | %s |\n", ShapeCell(d), mdCell(d.Namespace),
				mdCell(WorkloadRef(d)), d.Counts.Existing, d.Counts.Declared, d.Counts.Serving,
				Age(d.YoungestCopySeconds), d.Counts.Restarts,
				mdCell(orNone(ShortSuspect(d))), CauseLabel(d))
		}
	}

	if len(r.SharedDependencies) > 0 {
		// Named once, before the workloads' sections, each of which says it is a victim.
		ew.printf("\n%s Shared dependencies\n\n", h2)
		for i := range r.SharedDependencies {
			sd := &r.SharedDependencies[i]
			ew.printf("- %s\n  - failing line: %s\n", mdText(SharedDependencyLine(sd, true)), mdCode(sd.Failure))
		}
	}

	for _, d := range ds {
		if d.Shape.Broken() {
			writeMarkdownSection(ew, d, depth)
		}
	}
}

func writeMarkdownSection(ew *errWriter, d *diagnose.Diagnosis, depth int) {
	h3 := heading(3, depth)
	ew.printf("\n%s %s in %s: %s\n\n", heading(2, depth), mdText(WorkloadRef(d)), mdText(d.Namespace), d.Shape)
	if d.Headline != "" {
		ew.printf("%s\n\n", mdText(d.Headline))
	}
	ew.printf("- Shape: %s (%s)\n", d.Shape, ShapeMeaning(d.Shape))
	if d.Waived != nil {
		ew.printf("- Waived: %s\n", mdText(WaiverText(d.Waived)))
	}
	ew.printf("- Copies: %d existing of %d declared, %d serving, %d restarts; youngest %s, oldest %s\n",
		d.Counts.Existing, d.Counts.Declared, d.Counts.Serving, d.Counts.Restarts,
		Age(d.YoungestCopySeconds), Age(d.OldestCopySeconds))
	if d.Shape.Broken() {
		ew.printf("- Cause: %s\n", mdText(CauseSentence(d)))
	} else {
		ew.printf("- Cause: %s (%s)\n", orNone(string(d.Cause)), CauseMeaning(d))
	}
	if a := d.Argument; a != nil {
		ew.printf("  - for: %s\n", mdText(a.For))
		if a.Against != "" {
			ew.printf("  - against: %s\n", mdText(a.Against))
		}
	}
	if d.Revisions != nil {
		ew.printf("- Revisions: current %s, last serving %s\n", mdCode(orNone(d.Revisions.Current)), mdCode(orNone(d.Revisions.LastServing)))
		for _, p := range d.Revisions.ChangedPaths {
			ew.printf("  - changed: %s\n", mdCode(p))
		}
	}

	if len(d.Suspects) > 0 {
		ew.printf("\n%s Suspects\n\n| # | Object | Path | Value | Previous | Confidence | Reason |\n|---:|---|---|---|---|---|---|\n", h3)
		for i := range d.Suspects {
			s := &d.Suspects[i]
			path := PathText(s.Path)
			ew.printf("| %d | %s | %s | %s | %s | %s | %s |\n", i+1, mdCell(s.Object), mdCode(path),
				mdCode(s.Value), mdCode(s.PreviousValue), s.Confidence, mdCell(s.Reason))
		}
	}
	if len(d.Evidence) > 0 {
		ew.printf("\n%s Evidence\n\n", h3)
		for _, e := range d.Evidence {
			ew.printf("- **%s** (%s): %s", mdText(e.Kind), e.Source, mdText(e.Message))
			if f := evidenceFacts(e); f != "" {
				ew.printf(" (%s)", mdText(f))
			}
			ew.printf("\n")
		}
	}
	if len(d.SignalGaps) > 0 {
		ew.printf("\n%s Signal gaps\n\n", h3)
		for _, g := range d.SignalGaps {
			ew.printf("- %s %s: %s\n", mdText(g.Object), mdCode(g.Path), mdText(g.Message))
		}
	}
	if d.Fix != "" {
		fix := mdText(d.Fix)
		if strings.HasPrefix(d.Fix, "kubectl ") {
			fix = mdCode(d.Fix) // a command to copy, not prose
		}
		ew.printf("\n%s Suggested fix\n\n%s\n", h3, fix)
	}
}

func sourceLabel(r *diagnose.Report) string {
	s := string(r.Source.Type)
	switch {
	case r.Source.Path != "":
		s += " " + r.Source.Path
	case r.Source.Context != "":
		s += " context " + r.Source.Context
	}
	if s == "" {
		return "unknown"
	}
	return s
}

// mdText makes cluster text safe as markdown prose: one line, no HTML, no accidental markup.
func mdText(s string) string {
	r := strings.NewReplacer("\\", "\\\\", "<", "&lt;", ">", "&gt;", "*", "\\*", "_", "\\_", "`", "\\`", "[", "\\[", "]", "\\]", "|", "\\|")
	return r.Replace(Clean(s))
}

// mdCell is mdText for a table cell.
func mdCell(s string) string {
	return mdText(s)
}

// mdCode writes s as inline code. A code span ends at the first run of as many backticks as
// opened it (CommonMark 6.1), so a value holding backticks is fenced with a run longer than any
// inside it, and spaced, since one may begin or end it: a value cannot close its span early and
// have the HTML or links after it rendered in the ticket the report is pasted into.
func mdCode(s string) string {
	if s == "" {
		return ""
	}
	s = strings.ReplaceAll(Clean(s), "|", "\\|")
	longest, run := 0, 0
	for _, c := range s {
		if c != '`' {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	if longest == 0 {
		return "`" + s + "`"
	}
	fence := strings.Repeat("`", longest+1)
	return fence + " " + s + " " + fence
}

package preflight

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kubediagnose/kubectl-diagnose/internal/report"
)

// Formats are the -o values of the preflight command, the audit's document formats.
var Formats = []string{"table", "json", "yaml", "markdown"}

// Print writes the report in one of Formats.
func Print(w io.Writer, r *Report, format string) error {
	switch format {
	case "json":
		return report.WriteJSON(w, r)
	case "yaml":
		return report.WriteYAML(w, r)
	case "table", "":
		return printTable(w, r)
	case "markdown":
		return printMarkdown(w, r)
	}
	return fmt.Errorf("unknown output format %q", format)
}

func ref(wr *WorkloadReport) string { return strings.ToLower(wr.Kind) + "/" + wr.Name }

// printTable writes one row per finding, then each workload's changes and signal gaps.
func printTable(w io.Writer, r *Report) error {
	c := report.Clean
	var rows, b strings.Builder
	rows.WriteString("RESULT\tNAMESPACE\tWORKLOAD\tCHECK\tPATH\tMESSAGE\n")
	for i := range r.Workloads {
		wr := &r.Workloads[i]
		for _, f := range wr.Findings {
			fmt.Fprintf(&rows, "%s\t%s\t%s\t%s\t%s\t%s\n", f.Result, c(wr.Namespace), c(ref(wr)), f.Check, orDash(c(f.Path)), c(f.Message))
		}
	}
	if err := aligned(&b, rows.String()); err != nil {
		return err
	}
	for i := range r.Workloads {
		wr := &r.Workloads[i]
		if len(wr.Changes) > 0 {
			fmt.Fprintf(&b, "\nChanges of %s in %s against the live revision, riskiest first:\n", c(ref(wr)), c(wr.Namespace))
			rows.Reset()
			rows.WriteString("RISK\tPATH\tPREVIOUS\tNEW\n")
			for _, ch := range wr.Changes {
				fmt.Fprintf(&rows, "%s\t%s\t%s\t%s\n", ch.Risk, c(ch.Path), orDash(c(ch.PreviousValue)), orDash(c(ch.Value)))
			}
			if err := aligned(&b, rows.String()); err != nil {
				return err
			}
		}
		if len(wr.SignalGaps) > 0 {
			fmt.Fprintf(&b, "\nSignal gaps of %s in %s:\n", c(ref(wr)), c(wr.Namespace))
			for _, g := range wr.SignalGaps {
				fmt.Fprintf(&b, "  %s: %s\n", c(g.Path), c(g.Message))
			}
		}
	}
	fmt.Fprintf(&b, "\n%s\n", summaryLine(r))
	_, err := io.WriteString(w, b.String())
	return err
}

// aligned writes tab-separated rows as columns.
func aligned(b *strings.Builder, rows string) error {
	tw := tabwriter.NewWriter(b, 0, 0, 3, ' ', 0)
	if _, err := io.WriteString(tw, rows); err != nil {
		return err
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// summaryLine counts the findings: "2 failed, 1 warning, 9 passed, 1 skipped".
func summaryLine(r *Report) string {
	return fmt.Sprintf("%s: %d failed, %d warnings, %d passed, %d skipped",
		plural(len(r.Workloads), "workload", "workloads"),
		r.Summary[ResultFail], r.Summary[ResultWarn], r.Summary[ResultPass], r.Summary[ResultSkipped])
}

func printMarkdown(w io.Writer, r *Report) error {
	md, code := report.MarkdownText, report.MarkdownCode
	var b strings.Builder
	b.WriteString("# Preflight\n\n")
	b.WriteString(md(summaryLine(r)) + ".")
	if !r.CheckReferences {
		b.WriteString(" ConfigMap and Secret references were not checked (`--check-references`).")
	}
	b.WriteString("\n")
	for i := range r.Workloads {
		wr := &r.Workloads[i]
		fmt.Fprintf(&b, "\n## %s %s in %s: %s\n\n", resultMark(wr.Result), code(ref(wr)), code(wr.Namespace), wr.Result)
		fmt.Fprintf(&b, "From %s.\n\n| Result | Check | Path | Message |\n|---|---|---|---|\n", code(wr.Origin))
		for _, f := range wr.Findings {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", f.Result, f.Check, code(f.Path), md(f.Message))
		}
		if len(wr.Changes) > 0 {
			b.WriteString("\n### Changes against the live revision, riskiest first\n\n| Risk | Path | Previous | New |\n|---|---|---|---|\n")
			for _, ch := range wr.Changes {
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", ch.Risk, code(ch.Path), code(ch.PreviousValue), code(ch.Value))
			}
		}
		if len(wr.SignalGaps) > 0 {
			b.WriteString("\n### Signal gaps\n\n")
			for _, g := range wr.SignalGaps {
				fmt.Fprintf(&b, "- %s: %s\n", code(g.Path), md(g.Message))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func resultMark(r Result) string {
	switch r {
	case ResultFail:
		return "✗"
	case ResultWarn:
		return "!"
	}
	return "✓"
}

package report

import (
	"bytes"
	"io"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// writeExplainMarkdown writes one workload's explanation as a Markdown document for an incident
// ticket: the audit's section of a workload (headline, counts, cause, suspects, evidence, signal
// gaps, fix) one heading level up, so it stands as the title, then what changed since it last
// served, its timeline and its copies. Cluster text is escaped as the audit's is (mdText, mdCell,
// mdCode).
func writeExplainMarkdown(w io.Writer, d *diagnose.Diagnosis) error {
	// Written whole, then without the blank line a section starts with after the audit's table.
	var b bytes.Buffer
	ew := &errWriter{w: &b}
	const depth = -1
	writeMarkdownSection(ew, d, depth)
	h2 := heading(3, depth)
	if d.Detail != nil && len(d.Detail.Changes) > 0 {
		ew.printf("\n%s Changed since it last served\n\n| Path | Previous | Current |\n|---|---|---|\n", h2)
		for _, c := range d.Detail.Changes {
			ew.printf("| %s | %s | %s |\n", mdCode(PathText(c.Path)), mdCode(c.Previous), mdCode(c.Current))
		}
	}
	if len(d.Timeline) > 0 {
		ew.printf("\n%s Timeline\n\n| Time (UTC) | Moment | Message |\n|---|---|---|\n", h2)
		for _, e := range d.Timeline {
			ew.printf("| %s | %s | %s |\n", e.At.UTC().Format("2006-01-02 15:04:05"), mdCell(string(e.Kind)), mdCell(e.Message))
		}
	}
	var copies []diagnose.Copy
	if d.Detail != nil {
		copies = d.Detail.Copies()
	}
	if len(copies) > 0 {
		ew.printf("\n%s Copies\n\n| Name | Revision | Phase | Ready | Serving | Restarts | Age | Reason | Node |\n|---|---|---|---|---|---:|---:|---|---|\n", h2)
		for _, c := range copies {
			ew.printf("| %s | %s | %s | %t | %t | %d | %s | %s | %s |\n", mdCell(c.Name), mdCell(orNone(c.Revision)),
				mdCell(orNone(c.Phase)), c.Ready, c.Serving, c.Restarts, CopyAge(c.AgeSeconds), mdCell(orNone(c.Reason)), mdCell(orNone(c.Node)))
		}
	}
	if ew.err != nil {
		return ew.err
	}
	_, err := w.Write(bytes.TrimPrefix(b.Bytes(), []byte("\n")))
	return err
}

package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// errNoWatch is returned for a source that cannot be followed; Validate keeps dumps out, so
// only a source built without a watch reaches it.
var errNoWatch = errors.New("this source cannot be watched")

// watch prints the first report (narrowed to the arguments' workloads) in full, as `kubectl get -w` prints its list, then follows the
// cluster and prints again the rows whose verdict changed. A row's verdict is its shape,
// counts, cause and top suspect: ages alone move every second and would reprint every row. With
// --fail-on it returns as soon as a printed report holds a matching workload; an interrupt ends
// it with an *InterruptedError (exit 130), as the signal ends `kubectl get -w`.
func (o *AuditOptions) watch(ctx context.Context, src *openedSource, snap *snapshot.Snapshot, r *diagnose.Report) error {
	if src.watch == nil {
		return errNoWatch
	}
	opts := o.printOptions(snap)
	// Rows come a few at a time: every print keeps the first one's columns.
	opts.WithNamespace = src.namespaceLabel(o.Source) == ""
	seen := map[string]string{}
	warned := map[string]bool{}
	if len(r.Workloads) == 0 {
		if _, err := fmt.Fprintln(o.ErrOut, noWorkloadsNotice(src.namespaceLabel(o.Source))); err != nil {
			return fmt.Errorf("write notice: %w", err)
		}
	}
	if err := o.printChanged(r, snap, opts, seen, warned); err != nil {
		return err
	}
	opts.NoHeaders = true
	snaps, errs := src.watch(ctx)
	for {
		select {
		case <-ctx.Done():
			return &InterruptedError{}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			// The informers retry; the rows resume when the server is back.
			if msg := err.Error(); !warned[msg] {
				warned[msg] = true
				if _, werr := fmt.Fprintf(o.ErrOut, "warning: %s\n", report.Clean(msg)); werr != nil {
					return fmt.Errorf("write warning: %w", werr)
				}
			}
		case s, ok := <-snaps:
			if !ok {
				if ctx.Err() != nil {
					return &InterruptedError{}
				}
				return nil
			}
			s = s.FilterWorkloads(o.Source.Selector)
			if o.Source.At != nil {
				s.ReferenceTime = *o.Source.At
			}
			p := pick(s, src.redact.Report(diagnose.Diagnose(s), s), o.Targets, src.namespaceLabel(o.Source))
			for _, n := range p.notes {
				if !warned[n] {
					warned[n] = true
					if err := o.printNotes("", []string{n}); err != nil {
						return err
					}
				}
			}
			if err := o.printChanged(p.report, s, opts, seen, warned); err != nil {
				return err
			}
		}
	}
}

// printChanged prints the workloads of r whose verdict differs from seen's, records them, and
// applies --fail-on to the whole report.
func (o *AuditOptions) printChanged(r *diagnose.Report, snap *snapshot.Snapshot, opts report.Options, seen map[string]string, warned map[string]bool) error {
	for _, v := range r.Visibility {
		key := v.Kind + "/" + v.Namespace + ": " + v.Reason
		if !warned[key] {
			warned[key] = true
			if err := warnVisibility(o.ErrOut, []snapshot.Visibility{v}); err != nil {
				return err
			}
		}
	}
	changed := *r
	changed.Workloads = nil
	present := map[string]bool{}
	for _, d := range r.Workloads {
		key := d.Kind + "/" + d.Namespace + "/" + d.Name
		present[key] = true
		if v := verdict(&d); seen[key] != v {
			seen[key] = v
			changed.Workloads = append(changed.Workloads, d)
		}
	}
	// A workload deleted and made again prints as new.
	for key := range seen {
		if !present[key] {
			delete(seen, key)
		}
	}
	if len(changed.Workloads) > 0 {
		if o.ShowLabels || len(o.LabelColumns) > 0 {
			opts.Labels = report.LabelsOf(snap)
		}
		p, err := report.NewPrinter(o.Output, opts)
		if err != nil {
			return err
		}
		if err := p.PrintReport(o.Out, &changed); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	return failOn(r, o.FailOn)
}

// verdict is what a watch compares to decide whether a row changed.
func verdict(d *diagnose.Diagnosis) string {
	return fmt.Sprintf("%s %d/%d/%d/%d %s %s", report.ShapeCell(d), d.Counts.Existing, d.Counts.Declared, d.Counts.Serving, d.Counts.Restarts, d.Cause, report.SuspectRef(d))
}

package tui

import (
	"errors"
	"fmt"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// ContextSnapshot is one context's read of a console over several contexts.
type ContextSnapshot struct {
	Context  string
	Snapshot *snapshot.Snapshot
	// Err is why the context could not be read; Snapshot is then nil.
	Err error
}

// loadFleet reads every context in a Cmd, as load reads one source.
func (m *Model) loadFleet() tea.Cmd {
	m.seqNext++
	ctx, read, at, gen, seq, diag := m.ctx, m.opts.ReadFleet, m.opts.At, m.gen, m.seqNext, m.diagnose
	m.seq = seq
	return func() tea.Msg {
		reads := read(ctx)
		var errs []error
		for _, r := range reads {
			if r.Err != nil {
				errs = append(errs, fmt.Errorf("context %s: %w", r.Context, r.Err))
			}
		}
		if len(errs) == len(reads) {
			// Nothing to show: the error state says what failed, and r retries.
			return loadedMsg{gen: gen, seq: seq, err: errors.Join(errs...)}
		}
		return loadedMsg{gen: gen, seq: seq, data: fleetDataset(reads, at, diag)}
	}
}

// fleetDataset diagnoses each context's snapshot and lists every context's rows together,
// worst shape first and, within a shape, in the order the contexts were named. A context that
// could not be read is a visibility entry of the whole.
func fleetDataset(reads []ContextSnapshot, at *time.Time, diag diagnoseFn) *dataset {
	whole := &snapshot.Snapshot{Source: snapshot.SourceInfo{Type: snapshot.SourceLive}}
	ds := &dataset{snap: whole, report: &diagnose.Report{}, counts: map[diagnose.Shape]int{}, parts: map[string]*dataset{}}
	seenNS := map[string]bool{}
	for _, r := range reads {
		ds.contexts = append(ds.contexts, Sanitize(r.Context))
		if r.Err != nil {
			whole.Visibility = append(whole.Visibility, snapshot.Visibility{Reason: "context " + r.Context + ": " + r.Err.Error()})
			continue
		}
		part := newDataset(r.Snapshot, at, diag)
		ds.parts[Sanitize(r.Context)] = part
		if part.snap.ReferenceTime.After(whole.ReferenceTime) {
			whole.ReferenceTime = part.snap.ReferenceTime
		}
		whole.Visibility = append(whole.Visibility, part.snap.Visibility...)
		for _, row := range part.rows {
			row.context = Sanitize(r.Context)
			row.filterText = row.context + "/" + row.filterText
			ds.rows = append(ds.rows, row)
			ds.counts[row.shape]++
		}
		for _, ns := range part.namespaces {
			if !seenNS[ns] {
				seenNS[ns] = true
				ds.namespaces = append(ds.namespaces, ns)
			}
		}
		ds.throughput = ds.throughput || part.throughput
	}
	slices.SortStableFunc(ds.rows, func(a, b row) int { return a.shape.Severity() - b.shape.Severity() })
	slices.Sort(ds.namespaces)
	ds.multiNS = len(ds.namespaces) > 1
	return ds
}

// fleet reports whether the console reads several contexts.
func (m *Model) fleet() bool { return m.opts.ReadFleet != nil }

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
	following := m.fleetw != nil
	return func() tea.Msg {
		reads := read(ctx)
		if following {
			// The watches' pictures are per context: each read joins its own.
			parts := make([]*dataset, len(reads))
			for i, r := range reads {
				if r.Err == nil {
					parts[i] = newDataset(r.Snapshot, at, diag)
				}
			}
			return fleetLoadedMsg{gen: gen, seq: seq, reads: reads, parts: parts}
		}
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

// fleetDataset diagnoses each context's snapshot and lists every context's rows together
// (combineFleet).
func fleetDataset(reads []ContextSnapshot, at *time.Time, diag diagnoseFn) *dataset {
	parts := make([]fleetPart, len(reads))
	for i, r := range reads {
		parts[i] = fleetPart{context: r.Context, err: r.Err}
		if r.Err == nil {
			parts[i].part = newDataset(r.Snapshot, at, diag)
		}
	}
	return combineFleet(parts)
}

// fleetPart is one context's share of a console over several: its diagnosed picture, or why
// there is none, or both when the picture is its last before its watch failed.
type fleetPart struct {
	context string
	part    *dataset
	err     error
	// staleSince, with err and part, is when the context's watch began to fail.
	staleSince time.Time
	// pending marks a context whose first read is under way.
	pending bool
}

// combineFleet lists every context's rows together, worst shape first and, within a shape, in
// the order the contexts were named. A context without a picture is a visibility entry of the
// whole, and so is a stale one, beside its rows. The parts are not changed.
func combineFleet(reads []fleetPart) *dataset {
	whole := &snapshot.Snapshot{Source: snapshot.SourceInfo{Type: snapshot.SourceLive}}
	ds := &dataset{snap: whole, report: &diagnose.Report{}, counts: map[diagnose.Shape]int{}, parts: map[string]*dataset{}}
	seenNS := map[string]bool{}
	for _, r := range reads {
		ds.contexts = append(ds.contexts, Sanitize(r.context))
		if r.part == nil {
			reason := "context " + r.context + ": "
			switch {
			case r.err != nil:
				reason += r.err.Error()
			default:
				reason += "still reading"
			}
			whole.Visibility = append(whole.Visibility, snapshot.Visibility{Reason: reason})
			continue
		}
		part := r.part
		ds.parts[Sanitize(r.context)] = part
		if r.err != nil {
			whole.Visibility = append(whole.Visibility, snapshot.Visibility{Reason: fmt.Sprintf("context %s: stale since %s: %s",
				r.context, r.staleSince.UTC().Format("15:04:05Z"), r.err.Error())})
		}
		if part.snap.ReferenceTime.After(whole.ReferenceTime) {
			whole.ReferenceTime = part.snap.ReferenceTime
		}
		whole.Visibility = append(whole.Visibility, part.snap.Visibility...)
		ds.partial = ds.partial || part.partial
		for _, row := range part.rows {
			row.context = Sanitize(r.context)
			row.filterText = row.context + "/" + row.filterText
			ds.rows = append(ds.rows, row)
			ds.counts[row.shape]++
			if row.waived {
				ds.waived++
			}
		}
		for _, ns := range part.namespaces {
			if !seenNS[ns] {
				seenNS[ns] = true
				ds.namespaces = append(ds.namespaces, ns)
			}
		}
		ds.throughput = ds.throughput || part.throughput
		for _, f := range part.shared {
			ds.shared = append(ds.shared, Sanitize(r.context)+": "+f)
		}
	}
	slices.SortStableFunc(ds.rows, func(a, b row) int { return a.shape.Severity() - b.shape.Severity() })
	slices.Sort(ds.namespaces)
	ds.multiNS = len(ds.namespaces) > 1
	return ds
}

// fleet reports whether the console reads several contexts.
func (m *Model) fleet() bool { return m.opts.ReadFleet != nil || m.opts.WatchFleet != nil }

// fleetLoadedMsg is sent by a refresh of a console that follows every context's watch: each
// context's read, diagnosed (parts), joins that context's picture.
type fleetLoadedMsg struct {
	gen, seq int
	reads    []ContextSnapshot
	parts    []*dataset
}

func (m *Model) onFleetLoaded(msg fleetLoadedMsg) tea.Cmd {
	fw := m.fleetw
	if msg.gen != m.gen || msg.seq != m.seq || fw == nil {
		return nil
	}
	m.refreshing = false
	m.progress = ""
	now := m.now()
	for i, r := range msg.reads {
		if i >= len(fw.parts) || r.Context != fw.contexts[i].Context {
			continue
		}
		if r.Err != nil {
			m.contextFailed(i, r.Err, now)
			continue
		}
		fw.parts[i], fw.errs[i], fw.updated[i] = msg.parts[i], nil, now
	}
	m.showFleet()
	return nil
}

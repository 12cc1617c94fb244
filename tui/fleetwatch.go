package tui

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// ContextWatch is how one context of a console over several is followed: its live watch, as
// Options.Watch follows one cluster.
type ContextWatch struct {
	Context string
	Watch   WatchFunc
}

// fleetWatch is what the console knows of each context it follows, in the order the contexts
// were named. Each context is its own watch: one that fails keeps its last picture, marked
// stale, and holds up none of the others.
type fleetWatch struct {
	contexts []ContextWatch
	// parts are each context's newest dataset, nil until its first read is in.
	parts []*dataset
	// errs are why each context's watch fails now, with when it began to; nil when it runs.
	errs  []error
	errAt []time.Time
	// updated is when each context's newest snapshot arrived.
	updated []time.Time
	ctx     context.Context
}

// fleetWatchMsg is sent by a context's watch Cmd: what waitWatch said (watchMsg, rowsMsg
// or watchProgressMsg), for context i.
type fleetWatchMsg struct {
	gen, i int
	msg    tea.Msg
}

// restartContextMsg is sent after a back-off when a context's watch ended, to start it again.
type restartContextMsg struct{ gen, i int }

// startFleetWatch starts every context's watch under one context the model can cancel.
func (m *Model) startFleetWatch() tea.Cmd {
	m.stopWatch()
	ctx, cancel := context.WithCancel(m.ctx)
	m.cancelWatch = cancel
	m.live.watching = true
	n := len(m.opts.WatchFleet)
	m.fleetw = &fleetWatch{
		contexts: m.opts.WatchFleet, parts: make([]*dataset, n), errs: make([]error, n),
		errAt: make([]time.Time, n), updated: make([]time.Time, n), ctx: ctx,
	}
	cmds := make([]tea.Cmd, 0, n+1)
	for i := range n {
		cmds = append(cmds, m.startContextWatch(i))
	}
	return tea.Batch(append(cmds, tick(m.gen))...)
}

// startContextWatch starts the watch of context i; its messages come wrapped for i.
func (m *Model) startContextWatch(i int) tea.Cmd {
	fw := m.fleetw
	gen, at, diag, watch := m.gen, m.opts.At, m.diagnose, fw.contexts[i].Watch
	inc := &incremental{diagnose: m.diagnose, rediag: m.rediagnose, now: m.now}
	ctx := fw.ctx
	return func() tea.Msg {
		st := &watchStream{progress: newReadCounter(), rows: make(chan *snapshot.Snapshot, 1), inc: inc}
		st.snaps, st.errs = watch(ctx, snapshot.WatchHooks{
			Progress: st.progress.report,
			Rows:     func(s *snapshot.Snapshot) { offerLatest(st.rows, s) },
		})
		return wrapContext(gen, i, waitWatch(ctx, gen, st, at, diag))()
	}
}

// wrapContext tags what a context's watch Cmd says with the context.
func wrapContext(gen, i int, cmd tea.Cmd) tea.Cmd {
	return func() tea.Msg {
		msg := cmd()
		if msg == nil {
			return nil
		}
		return fleetWatchMsg{gen: gen, i: i, msg: msg}
	}
}

// onFleetWatch takes what context i's watch said and shows every context's newest picture.
func (m *Model) onFleetWatch(msg fleetWatchMsg) tea.Cmd {
	fw := m.fleetw
	if msg.gen != m.gen || fw == nil || msg.i >= len(fw.parts) {
		return nil
	}
	i, now := msg.i, m.now()
	m.clock = now
	rearm := func(st *watchStream) tea.Cmd {
		return wrapContext(msg.gen, i, waitWatch(fw.ctx, msg.gen, st, m.opts.At, m.diagnose))
	}
	switch w := msg.msg.(type) {
	case watchProgressMsg:
		return rearm(w.stream)
	case rowsMsg:
		// Rows without shapes stand in for a context not yet diagnosed, never replace a picture.
		if fw.parts[i] == nil || fw.parts[i].partial {
			fw.parts[i] = w.data
			m.showFleet()
		}
		return rearm(w.stream)
	case watchMsg:
		switch {
		case w.closed:
			m.contextFailed(i, errors.New("watch ended"), now)
			m.showFleet()
			gen := m.gen
			return tea.Tick(watchBackoff, func(time.Time) tea.Msg { return restartContextMsg{gen: gen, i: i} })
		case w.err != nil:
			m.contextFailed(i, w.err, now)
			m.showFleet()
		default:
			fw.parts[i], fw.errs[i], fw.updated[i] = w.data, nil, now
			m.showFleet()
		}
		return rearm(w.stream)
	}
	return nil
}

// contextFailed records that context i's watch fails; the first error dates the outage.
func (m *Model) contextFailed(i int, err error, now time.Time) {
	fw := m.fleetw
	if fw.errs[i] == nil {
		fw.errAt[i] = now
	}
	fw.errs[i] = err
}

// showFleet shows every context's newest picture together. Before any context has been read,
// the console keeps loading, or shows the error state once every context has failed.
func (m *Model) showFleet() {
	fw := m.fleetw
	reads := make([]fleetPart, len(fw.contexts))
	anyData, allFailed := false, true
	var errs []error
	for i, c := range fw.contexts {
		reads[i] = fleetPart{context: c.Context, part: fw.parts[i], err: fw.errs[i]}
		if fw.parts[i] != nil {
			anyData = true
			reads[i].staleSince = fw.errAt[i]
		} else if fw.errs[i] == nil {
			reads[i].pending = true
		}
		if fw.errs[i] == nil {
			allFailed = false
		} else {
			errs = append(errs, fmt.Errorf("context %s: %w", c.Context, fw.errs[i]))
		}
	}
	m.live.err, m.live.updatedAt = nil, time.Time{}
	for i := range fw.contexts {
		if fw.updated[i].After(m.live.updatedAt) {
			m.live.updatedAt = fw.updated[i]
		}
	}
	if len(errs) > 0 {
		m.live.err = errors.Join(errs...)
	}
	switch {
	case !anyData && allFailed:
		m.loadErr = errors.Join(errs...)
		m.state = stateError
		return
	case !anyData:
		return
	}
	m.setData(combineFleet(reads))
}

// staleContexts counts the contexts whose watch fails while their last picture is shown.
func (fw *fleetWatch) staleContexts() (stale, failing int) {
	for i := range fw.contexts {
		if fw.errs[i] != nil {
			failing++
			if fw.parts[i] != nil {
				stale++
			}
		}
	}
	return stale, failing
}

// fleetHeader is the header's live part for a console following several contexts: live, or
// how many contexts are stale or could not be read and the first one's error.
func (m *Model) fleetHeader() string {
	st, fw := m.styles, m.fleetw
	stale, failing := fw.staleContexts()
	if failing == 0 {
		if m.live.updatedAt.IsZero() {
			return st.Dim.Render("○ reading…")
		}
		return st.Live.Render("● live") + st.Dim.Render(" updated "+since(m.clock, m.live.updatedAt)+" ago")
	}
	first := ""
	for i := range fw.contexts {
		if fw.errs[i] != nil {
			first = "context " + Sanitize(fw.contexts[i].Context) + ": " + Sanitize(fw.errs[i].Error())
			break
		}
	}
	label := fmt.Sprintf("▲ %d of %d contexts stale", stale, len(fw.contexts))
	if stale < failing {
		label = fmt.Sprintf("▲ %d of %d contexts failing", failing, len(fw.contexts))
	}
	return st.Stale.Render(label) + " " + st.Dim.Render(first)
}

package tui

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"maps"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// WatchFunc streams a live source's snapshots and errors until ctx ends, with the reader's hooks
// (snapshot.WatchHooks: its first read's progress and early rows, and a hold on following
// changes). The hooks must not block.
type WatchFunc = func(ctx context.Context, hooks snapshot.WatchHooks) (<-chan *snapshot.Snapshot, <-chan error)

// diagnoseFn is the engine's entry point.
type diagnoseFn = func(*snapshot.Snapshot) *diagnose.Report

// loadProgressMsg is sent by a load Cmd while the source reads: what was counted last, and
// the counts of every kind so far.
type loadProgressMsg struct {
	gen, seq int
	what     string
	n        int
	counts   map[string]int
	// diagnosing is true once the read is done and the engine runs.
	diagnosing bool
	wait       *loadWait
}

// loadWait is what one load says: its progress, its early rows and its result.
type loadWait struct {
	gen, seq int
	at       *time.Time
	prog     *readCounter
	rows     chan *snapshot.Snapshot
	done     <-chan loadedMsg
}

// readCounter gathers a read's progress reports, which arrive from the read's goroutines, for
// the Cmd that waits on it: the counts of every kind survive, however late the Cmd looks.
type readCounter struct {
	mu         sync.Mutex
	counts     map[string]int
	what       string
	diagnosing bool
	changed    chan struct{}
}

func newReadCounter() *readCounter {
	return &readCounter{counts: map[string]int{}, changed: make(chan struct{}, 1)}
}

func (c *readCounter) report(what string, n int) {
	c.mu.Lock()
	c.counts[what], c.what = n, what
	c.mu.Unlock()
	c.signal()
}

// diagnosed says the read is done and the engine runs on what it read.
func (c *readCounter) diagnosed() {
	c.mu.Lock()
	c.diagnosing = true
	c.mu.Unlock()
	c.signal()
}

func (c *readCounter) signal() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// read returns the last kind counted, its count and a copy of every count.
func (c *readCounter) read() (string, int, map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.what, c.counts[c.what], maps.Clone(c.counts)
}

// watchProgressMsg is sent by a watch Cmd while the watch's first read runs.
type watchProgressMsg struct {
	gen    int
	what   string
	n      int
	counts map[string]int
	stream *watchStream
}

// rowsMsg is sent by a watch Cmd when its first read has listed the workloads, and by a load
// Cmd when the source has read them (a dump's workload lists): rows to show, without shapes,
// until the snapshot is diagnosed. One of stream and load is set: what to wait on next.
type rowsMsg struct {
	gen    int
	data   *dataset
	stream *watchStream
	load   *loadWait
}

// watchStream is what one watch says: snapshots and errors, and before the first snapshot its
// read's progress and early rows.
type watchStream struct {
	snaps    <-chan *snapshot.Snapshot
	errs     <-chan error
	progress *readCounter
	rows     chan *snapshot.Snapshot
	// inc diagnoses the snapshots against the last one.
	inc *incremental
	// diagnosed lets the watch follow changes (it ends the hold, snapshot.WatchHooks.Hold);
	// nil when the watch does not wait or was let go. Only Update touches it.
	diagnosed func()
}

// loadedMsg is sent by a load Cmd when the snapshot is read and diagnosed, or failed.
type loadedMsg struct {
	gen, seq int
	data     *dataset
	err      error
}

// watchMsg is sent by a watch Cmd for each snapshot, error or end of the watch.
type watchMsg struct {
	gen    int
	data   *dataset
	err    error
	closed bool
	stream *watchStream
}

// restartWatchMsg is sent after a back-off when a watch ended, to start it again.
type restartWatchMsg struct{ gen int }

// tickMsg is sent every second while live, so staleness is shown as it grows.
type tickMsg struct {
	at  time.Time
	gen int
}

// copiedMsg is sent by the clipboard Cmd.
type copiedMsg struct {
	text string
	err  error
}

// toastExpiredMsg is sent when a toast has been shown long enough.
type toastExpiredMsg struct{}

// load reads and diagnoses the current source in a Cmd. A load before it is abandoned: only the
// latest one's result is shown.
func (m *Model) load() tea.Cmd {
	if m.fleet() {
		return m.loadFleet()
	}
	m.seqNext++
	m.stopLoad()
	ctx, cancel := context.WithCancel(m.ctx)
	m.cancelLoad = cancel
	src, at, gen, seq, diag := m.source, m.opts.At, m.gen, m.seqNext, m.diagnose
	m.seq = seq
	return func() tea.Msg {
		done := make(chan loadedMsg, 1)
		w := &loadWait{gen: gen, seq: seq, at: at, prog: newReadCounter(), rows: make(chan *snapshot.Snapshot, 1), done: done}
		go func() {
			var (
				snap *snapshot.Snapshot
				err  error
			)
			switch s := src.(type) {
			case RowsSource:
				snap, err = s.SnapshotWithRows(ctx, w.prog.report, func(early *snapshot.Snapshot) { offerLatest(w.rows, early) })
			case ProgressSource:
				snap, err = s.SnapshotWithProgress(ctx, w.prog.report)
			default:
				snap, err = src.Snapshot(ctx)
			}
			if err != nil {
				done <- loadedMsg{gen: gen, seq: seq, err: err}
				return
			}
			w.prog.diagnosed()
			done <- loadedMsg{gen: gen, seq: seq, data: newDataset(snap, at, diag)}
		}()
		return waitLoad(w)()
	}
}

// offerLatest puts s in ch, a channel of one, replacing what the reader has not taken yet: a
// read that lists the workloads again (a retried read, a dump of several namespaces) makes
// the newer list win, and the read never blocks on the console.
func offerLatest(ch chan *snapshot.Snapshot, s *snapshot.Snapshot) {
	for {
		select {
		case ch <- s:
			return
		default:
		}
		select {
		case <-ch:
		default:
		}
	}
}

func waitLoad(w *loadWait) tea.Cmd {
	return func() tea.Msg {
		select {
		case d := <-w.done:
			return d
		case s := <-w.rows:
			return rowsMsg{gen: w.gen, data: rowsDataset(s, w.at), load: w}
		case <-w.prog.changed:
			w.prog.mu.Lock()
			diagnosing := w.prog.diagnosing
			w.prog.mu.Unlock()
			what, n, counts := w.prog.read()
			return loadProgressMsg{gen: w.gen, seq: w.seq, what: what, n: n, counts: counts, diagnosing: diagnosing, wait: w}
		}
	}
}

// startWatch starts a watch under a context the model can cancel.
func (m *Model) startWatch(watch WatchFunc) tea.Cmd {
	m.stopWatch()
	ctx, cancel := context.WithCancel(m.ctx)
	m.cancelWatch = cancel
	m.live.watching = true
	gen, at, diag := m.gen, m.opts.At, m.diagnose
	inc := &incremental{diagnose: m.diagnose, rediag: m.rediagnose, now: m.now}
	// The first diagnosis is the one the user waits for: the watch's informers fill their
	// caches (and the watch collects its read's garbage) once it is on screen, not on the same
	// cores at the same time (onWatch releases them).
	hold := make(chan struct{})
	var release sync.Once
	diagnosed := func() { release.Do(func() { close(hold) }) }
	return func() tea.Msg {
		st := &watchStream{progress: newReadCounter(), rows: make(chan *snapshot.Snapshot, 1), inc: inc, diagnosed: diagnosed}
		st.snaps, st.errs = watch(ctx, snapshot.WatchHooks{
			Progress: st.progress.report,
			Rows:     func(s *snapshot.Snapshot) { offerLatest(st.rows, s) },
			Hold:     hold,
		})
		return waitWatch(ctx, gen, st, at, diag)()
	}
}

// waitWatch waits for the next thing a watch says. The stream travels in the message so Update
// re-arms the wait without keeping goroutines of its own.
func waitWatch(ctx context.Context, gen int, st *watchStream, at *time.Time, diag diagnoseFn) tea.Cmd {
	return func() tea.Msg {
		snaps, errs := st.snaps, st.errs
		for snaps != nil || errs != nil {
			select {
			case <-ctx.Done():
				return nil
			case s, ok := <-snaps:
				if !ok {
					snaps = nil
					continue
				}
				var data *dataset
				if st.inc != nil {
					data = st.inc.next(s, at)
				} else {
					data = newDataset(s, at, diag)
				}
				return watchMsg{gen: gen, data: data, stream: st}
			case err, ok := <-errs:
				if !ok {
					errs = nil
					continue
				}
				return watchMsg{gen: gen, err: err, stream: st}
			case s := <-st.rows:
				return rowsMsg{gen: gen, data: rowsDataset(s, at), stream: st}
			case <-st.progress.changed:
				what, n, counts := st.progress.read()
				return watchProgressMsg{gen: gen, what: what, n: n, counts: counts, stream: st}
			}
		}
		return watchMsg{gen: gen, closed: true}
	}
}

// tick re-arms the clock of generation gen; a namespace switch starts a new generation, so only
// one clock runs.
func tick(gen int) tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg{at: t, gen: gen} })
}

// copyToClipboard writes text to the terminal's clipboard with OSC 52, which works over SSH and
// inside tmux (with set-clipboard on) where no local clipboard tool can.
func copyToClipboard(out io.Writer, text string) tea.Cmd {
	return func() tea.Msg {
		if out == nil {
			return copiedMsg{text: text, err: fmt.Errorf("no terminal to copy to")}
		}
		seq := "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(text)) + "\x07"
		_, err := io.WriteString(out, seq)
		return copiedMsg{text: text, err: err}
	}
}

// namespacesMsg carries the cluster's namespace names for the n prompt.
type namespacesMsg struct {
	names []string
	err   error
}

func listNamespaces(ctx context.Context, list func(context.Context) ([]string, error)) tea.Cmd {
	return func() tea.Msg {
		names, err := list(ctx)
		return namespacesMsg{names: names, err: err}
	}
}

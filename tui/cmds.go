package tui

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// watchFn streams snapshots and errors until its context ends.
type watchFn = func(ctx context.Context) (<-chan *snapshot.Snapshot, <-chan error)

// diagnoseFn is the engine's entry point.
type diagnoseFn = func(*snapshot.Snapshot) *diagnose.Report

// loadProgressMsg is sent by a load Cmd while the source reads.
type loadProgressMsg struct {
	gen, seq int
	what     string
	n        int
	prog     <-chan loadProgressMsg
	done     <-chan loadedMsg
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
	snaps  <-chan *snapshot.Snapshot
	errs   <-chan error
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

// load reads and diagnoses the current source in a Cmd.
func (m *Model) load() tea.Cmd {
	if m.fleet() {
		return m.loadFleet()
	}
	m.seqNext++
	ctx, src, at, gen, seq, diag := m.ctx, m.source, m.opts.At, m.gen, m.seqNext, m.diagnose
	m.seq = seq
	return func() tea.Msg {
		prog := make(chan loadProgressMsg, 1)
		done := make(chan loadedMsg, 1)
		go func() {
			var (
				snap *snapshot.Snapshot
				err  error
			)
			if ps, ok := src.(ProgressSource); ok {
				snap, err = ps.SnapshotWithProgress(ctx, func(what string, n int) {
					select {
					case prog <- loadProgressMsg{gen: gen, seq: seq, what: what, n: n}:
					default: // the screen shows the latest count; dropping one is fine
					}
				})
			} else {
				snap, err = src.Snapshot(ctx)
			}
			if err != nil {
				done <- loadedMsg{gen: gen, seq: seq, err: err}
				return
			}
			done <- loadedMsg{gen: gen, seq: seq, data: newDataset(snap, at, diag)}
		}()
		return waitLoad(prog, done)()
	}
}

func waitLoad(prog <-chan loadProgressMsg, done <-chan loadedMsg) tea.Cmd {
	return func() tea.Msg {
		select {
		case d := <-done:
			return d
		case p := <-prog:
			p.prog, p.done = prog, done
			return p
		}
	}
}

// startWatch starts a watch under a context the model can cancel.
func (m *Model) startWatch(watch watchFn) tea.Cmd {
	m.stopWatch()
	ctx, cancel := context.WithCancel(m.ctx)
	m.cancelWatch = cancel
	m.live.watching = true
	gen, at, diag := m.gen, m.opts.At, m.diagnose
	return func() tea.Msg {
		snaps, errs := watch(ctx)
		return waitWatch(ctx, gen, snaps, errs, at, diag)()
	}
}

// waitWatch waits for the next thing a watch says. The channels travel in the message so Update
// re-arms the wait without keeping goroutines of its own.
func waitWatch(ctx context.Context, gen int, snaps <-chan *snapshot.Snapshot, errs <-chan error, at *time.Time, diag diagnoseFn) tea.Cmd {
	return func() tea.Msg {
		for snaps != nil || errs != nil {
			select {
			case <-ctx.Done():
				return nil
			case s, ok := <-snaps:
				if !ok {
					snaps = nil
					continue
				}
				return watchMsg{gen: gen, data: newDataset(s, at, diag), snaps: snaps, errs: errs}
			case err, ok := <-errs:
				if !ok {
					errs = nil
					continue
				}
				return watchMsg{gen: gen, err: err, snaps: snaps, errs: errs}
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

package tui

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/kubediagnose/kubectl-diagnose/internal/report"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// watchBackoff is how long the console waits before restarting a watch that ended.
const watchBackoff = 5 * time.Second

// Update handles a message. It does no I/O: reading, watching and copying are returned as Cmds.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.setSize(msg.Width, msg.Height)
		return m, nil
	case spinner.TickMsg:
		if !m.busy() {
			return m, nil
		}
		// The progress line's elapsed time moves with the spinner.
		m.clock = m.now()
		var cmd tea.Cmd
		m.spinner, cmd = m.spinner.Update(msg)
		return m, cmd
	case loadProgressMsg:
		if msg.gen != m.gen || msg.seq != m.seq {
			return m, nil
		}
		m.counted(msg.what, msg.n, msg.counts)
		m.reading.diagnosing = msg.diagnosing
		return m, waitLoad(msg.wait)
	case watchProgressMsg:
		if msg.gen != m.gen {
			return m, nil
		}
		if m.data == nil || m.data.partial {
			m.counted(msg.what, msg.n, msg.counts)
		}
		return m, waitWatch(m.ctx, msg.gen, msg.stream, m.opts.At, m.diagnose)
	case rowsMsg:
		if msg.gen != m.gen || (msg.load != nil && msg.load.seq != m.seq) {
			return m, nil
		}
		// Rows without shapes only stand in for a picture not yet diagnosed, never replace one.
		if m.data == nil || m.data.partial {
			m.setData(msg.data)
		}
		if msg.load != nil {
			return m, waitLoad(msg.load)
		}
		return m, waitWatch(m.ctx, msg.gen, msg.stream, m.opts.At, m.diagnose)
	case loadedMsg:
		return m, m.onLoaded(msg)
	case fleetLoadedMsg:
		return m, m.onFleetLoaded(msg)
	case fleetWatchMsg:
		return m, m.onFleetWatch(msg)
	case restartContextMsg:
		if msg.gen != m.gen || m.fleetw == nil || msg.i >= len(m.fleetw.contexts) || m.fleetw.ctx.Err() != nil {
			return m, nil
		}
		return m, m.startContextWatch(msg.i)
	case watchMsg:
		return m, m.onWatch(msg)
	case restartWatchMsg:
		if msg.gen != m.gen {
			return m, nil
		}
		if w := m.watchFunc(); w != nil {
			return m, m.startWatch(w)
		}
		return m, nil
	case tickMsg:
		if msg.gen != m.gen {
			return m, nil
		}
		m.clock = msg.at
		if !m.live.watching {
			return m, nil
		}
		return m, tick(m.gen)
	case namespacesMsg:
		// Listing is a courtesy: an identity that may not list namespaces keeps the snapshot's.
		if msg.err == nil && m.nsPrompt {
			m.nsInput.SetSuggestions(m.knownNamespaces(msg.names))
		}
		return m, nil
	case copiedMsg:
		if msg.err != nil {
			return m, m.showToast("copy failed: " + msg.err.Error())
		}
		// The toast is one line: a summary is named by its first and counted by the rest.
		first, rest, several := strings.Cut(msg.text, "\n")
		if several {
			first += fmt.Sprintf(" (+%d lines)", strings.Count(rest, "\n")+1)
		}
		return m, m.showToast("copied: " + first)
	case toastExpiredMsg:
		if !m.now().Before(m.toastExpiry) {
			m.toast = ""
		}
		return m, nil
	case tea.MouseMsg:
		if m.state == stateReady {
			return m, m.onMouse(msg)
		}
		return m, nil
	case tea.KeyMsg:
		return m, m.onKeys(msg)
	}
	return m, nil
}

func (m *Model) onLoaded(msg loadedMsg) tea.Cmd {
	if msg.gen != m.gen || msg.seq != m.seq || m.quitting {
		// After q the load was abandoned: its error is the cancel's, not the source's.
		return nil
	}
	refreshed := m.refreshing
	m.refreshing = false
	m.progress = ""
	if msg.err != nil {
		if m.live.watching && m.data != nil {
			// The watch keeps the picture current and says when it is stale; a failed
			// refresh is only news.
			return m.showToast("refresh failed: " + Sanitize(msg.err.Error()))
		}
		m.loadErr = msg.err
		m.state = stateError
		if m.live.watching && m.live.updatedAt.IsZero() {
			// The header says what fails until something is read.
			if m.live.err == nil {
				m.live.errAt = m.now()
			}
			m.live.err = msg.err
		}
		return nil
	}
	m.setData(msg.data)
	if m.live.watching {
		m.live.updatedAt = m.now()
		m.live.err = nil
	}
	if notice := m.unchanging(); refreshed && notice != "" {
		// A refresh of a fixed source is too quick to see and shows the same rows: say why.
		return m.showToast(notice)
	}
	return nil
}

func (m *Model) onWatch(msg watchMsg) tea.Cmd {
	if msg.gen != m.gen {
		return nil
	}
	now := m.now()
	m.clock = now
	switch {
	case msg.closed:
		if m.live.err == nil {
			m.live.err = errors.New("watch ended")
			m.live.errAt = now
		}
		gen := m.gen
		return tea.Tick(watchBackoff, func(time.Time) tea.Msg { return restartWatchMsg{gen: gen} })
	case msg.err != nil:
		// Keep the last snapshot on screen and say how stale it is; the watch recovers itself.
		if m.live.err == nil {
			m.live.errAt = now
		}
		m.live.err = msg.err
		switch {
		case m.data == nil:
			// Nothing to keep: the first read failed, and says why until the watch's next
			// attempt is in.
			m.loadErr = msg.err
			m.state = stateError
		case m.data.partial:
			// The rows stay; nothing was diagnosed yet, which the exit status says.
			m.loadErr = msg.err
		}
	default:
		m.live.updatedAt = now
		m.live.err = nil
		// A snapshot from the watch supersedes a load still running.
		m.refreshing = false
		m.seq = -1
		m.setData(msg.data)
		if st := msg.stream; st != nil && st.diagnosed != nil {
			release := st.diagnosed
			st.diagnosed = nil
			return afterFrame(release, waitWatch(m.ctx, msg.gen, msg.stream, m.opts.At, m.diagnose))
		}
	}
	return waitWatch(m.ctx, msg.gen, msg.stream, m.opts.At, m.diagnose)
}

// afterFrame is cmd that also calls release once the frame of the Update that returned it is
// on the terminal: a command starts as Update returns, View runs right then, and the renderer
// writes what it drew within one frame interval. Released at the first diagnosis instead, the
// watch's informers filled their caches from its read and the watch marked its whole heap
// while that frame was drawn, on the same cores.
func afterFrame(release func(), cmd tea.Cmd) tea.Cmd {
	return func() tea.Msg {
		time.AfterFunc(2*time.Second/frameRate, release)
		return cmd()
	}
}

// watchFunc returns how the current source is watched, or nil: the first source through
// Options.Watch (which may add to what the source says), another through its own watch.
func (m *Model) watchFunc() WatchFunc {
	if !m.switched && m.opts.Watch != nil {
		return m.opts.Watch
	}
	if w, ok := m.source.(Watcher); ok {
		return w.WatchWith
	}
	return nil
}

// busy reports whether something is being read that the screen waits for.
func (m *Model) busy() bool {
	return m.state == stateLoading || m.refreshing || (m.data != nil && m.data.partial)
}

// counted records a read's progress.
func (m *Model) counted(what string, n int, counts map[string]int) {
	m.reading.what, m.reading.n, m.reading.counts = what, n, counts
	m.clock = m.now()
	m.progress = fmt.Sprintf("reading %s… %s", what, report.Thousands(n))
}

func (m *Model) onKey(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	if msg.String() == "ctrl+c" {
		return m.quit()
	}
	if m.nsPrompt {
		return m.onNamespaceKey(msg)
	}
	if m.state != stateError && m.screen == screenWorkloads && m.workloads.filtering {
		return m.workloads.Update(msg)
	}
	switch m.state {
	case stateLoading:
		// Keys typed before anything is read act on the table they will see: a filter, the
		// healthy toggle, help; moves are kept within the rows there are (none yet).
		switch {
		case key.Matches(msg, k.Quit):
			return m.quit()
		case key.Matches(msg, k.Help):
			if m.screen == screenHelp {
				m.screen = m.back
			} else {
				m.back, m.screen = m.screen, screenHelp
			}
			return nil
		case m.screen == screenHelp:
			if key.Matches(msg, k.Back) {
				m.screen = m.back
				return nil
			}
			return m.help.Update(msg)
		case key.Matches(msg, k.Enter), key.Matches(msg, k.Refresh), key.Matches(msg, k.Namespace):
			return m.showToast("still reading: " + m.readingLine())
		}
		return m.workloads.Update(msg)
	case stateError:
		switch {
		case key.Matches(msg, k.Quit):
			return m.quit()
		case key.Matches(msg, k.Refresh):
			return m.refresh()
		case key.Matches(msg, k.Back) && m.data != nil:
			m.state = stateReady
			m.loadErr = nil
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		return m.quit()
	case key.Matches(msg, k.Help):
		if m.screen == screenHelp {
			m.screen = m.back
		} else {
			m.back, m.screen = m.screen, screenHelp
		}
		return nil
	case key.Matches(msg, k.Refresh):
		return m.refresh()
	case key.Matches(msg, k.Namespace) && m.screen != screenHelp:
		if m.fleet() {
			return m.showToast("with several contexts, pick the namespace with -n when you start")
		}
		if m.opts.SwitchNamespace == nil {
			return m.showToast("namespace switch needs a live cluster")
		}
		m.nsPrompt = true
		m.nsInput.SetValue("")
		m.nsInput.SetSuggestions(m.knownNamespaces(nil))
		if m.opts.ListNamespaces == nil {
			return m.nsInput.Focus()
		}
		return tea.Batch(m.nsInput.Focus(), listNamespaces(m.ctx, m.opts.ListNamespaces))
	}
	switch m.screen {
	case screenHelp:
		if key.Matches(msg, k.Back) {
			m.screen = m.back
			return nil
		}
		return m.help.Update(msg)
	case screenDiagnosis:
		switch {
		case key.Matches(msg, k.Back):
			m.screen = screenWorkloads
			return nil
		case key.Matches(msg, k.Copy):
			text := m.diagnosis.CopyText()
			if text == "" {
				return m.showToast("nothing to copy")
			}
			return copyToClipboard(m.opts.Out, text)
		case key.Matches(msg, k.CopySummary):
			text := m.diagnosis.Summary()
			if text == "" {
				return m.showToast("nothing to copy")
			}
			return copyToClipboard(m.opts.Out, text)
		}
		return m.diagnosis.Update(msg)
	default:
		if key.Matches(msg, k.Enter) {
			return m.openSelected()
		}
		return m.workloads.Update(msg)
	}
}

// quit ends the program; no key after it is routed, and a read under way is abandoned.
func (m *Model) quit() tea.Cmd {
	m.quitting = true
	m.stopLoad()
	return tea.Quit
}

func (m *Model) openSelected() tea.Cmd {
	r := m.workloads.Selected()
	if r == nil || m.data == nil {
		return nil
	}
	if r.diag == nil {
		// A row listed before its copies were read has no diagnosis yet.
		return m.showToast("still reading: " + m.readingLine())
	}
	m.workloads.picked = true
	m.openContext = r.context
	m.diagnosis.Open(m.data.part(r.context), r.diag)
	m.screen = screenDiagnosis
	return nil
}

func (m *Model) onNamespaceKey(msg tea.KeyMsg) tea.Cmd {
	switch msg.String() {
	case "esc":
		m.nsPrompt = false
		m.nsInput.Blur()
		return nil
	case "enter":
		ns := strings.TrimSpace(m.nsInput.Value())
		m.nsPrompt = false
		m.nsInput.Blur()
		if ns == "" {
			return nil
		}
		return m.switchNamespace(ns)
	}
	var cmd tea.Cmd
	m.nsInput, cmd = m.nsInput.Update(msg)
	return cmd
}

// switchNamespace points the console at another namespace of a live cluster.
func (m *Model) switchNamespace(ns string) tea.Cmd {
	src := m.opts.SwitchNamespace(ns)
	if src == nil {
		return m.showToast("cannot switch to namespace " + Sanitize(ns))
	}
	m.stopWatch()
	m.live = liveStatus{}
	m.gen++
	m.source, m.switched = src, true
	m.opts.Namespaces = []string{ns}
	m.opts.AllNamespaces = false
	m.data = nil
	m.state = stateLoading
	m.screen = screenWorkloads
	m.progress = ""
	// A row picked in the last namespace picks none in this one.
	m.workloads.picked = false
	return tea.Batch(m.read(), m.spinner.Tick)
}

// unchanging says why a refresh of the shown source shows the same picture, or "" when it may
// not: a dump and the demo are fixed, a live cluster is not.
func (m *Model) unchanging() string {
	if m.data == nil || m.watchFunc() != nil {
		return ""
	}
	switch m.data.snap.Source.Type {
	case snapshot.SourceDump:
		return "read the dump again: a dump does not change, only a live cluster does"
	case snapshot.SourceDemo:
		return "read the demo again: it does not change, only a live cluster does"
	}
	return ""
}

// refresh reads the source again, keeping what is on screen until the new snapshot is in.
func (m *Model) refresh() tea.Cmd {
	if m.fleet() && m.opts.ReadFleet == nil {
		return m.showToast("every context follows its watch; there is no other read to refresh from")
	}
	if m.data == nil {
		m.state = stateLoading
	} else {
		m.refreshing = true
	}
	return tea.Batch(m.load(), m.spinner.Tick)
}

func (m *Model) onMouse(msg tea.MouseMsg) tea.Cmd {
	if msg.Action != tea.MouseActionPress {
		return nil
	}
	delta := 0
	switch msg.Button {
	case tea.MouseButtonWheelUp:
		delta = -3
	case tea.MouseButtonWheelDown:
		delta = 3
	default:
		return nil
	}
	switch m.screen {
	case screenWorkloads:
		m.workloads.Scroll(delta)
	case screenDiagnosis:
		m.diagnosis.Scroll(delta)
	case screenHelp:
		m.help.Scroll(delta)
	}
	return nil
}

// knownNamespaces is the snapshot's namespaces and extra, sorted, without repeats.
func (m *Model) knownNamespaces(extra []string) []string {
	var names []string
	if m.data != nil {
		names = append(names, m.data.namespaces...)
	}
	names = append(names, extra...)
	slices.Sort(names)
	return slices.Compact(names)
}

package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/redact"
)

// The diagnosis screen's tabs, in order; keys 1-6 select them.
const (
	tabDiagnosis = iota
	tabCopies
	tabEvents
	tabLogs
	tabSpec
	tabTimeline
	tabCount
)

var tabNames = [tabCount]string{"Diagnosis", "Copies", "Events", "Logs", "Spec", "Timeline"}

// diagnosisScreen shows one workload's diagnosis in tabs. Its content is built when it opens or
// the size or data change, never in View.
type diagnosisScreen struct {
	common
	width, height int

	key   workloadKey
	ds    *dataset
	diag  *diagnose.Diagnosis
	tab   int
	panes [tabCount]pane
	spec  specView
	// cited are the log lines the diagnosis cites, found when it opens or is refreshed with
	// another diagnosis (citedFor is the one they were found for: a watch's update keeps most).
	cited    map[tailKey]map[int]bool
	citedFor *diagnose.Detail
	// unwrapped is set when w turned the Logs tab's wrapping off: its lines stay whole and
	// it scrolls sideways.
	unwrapped bool
	// redact hides credentials in the raw data the tabs show; nil shows them.
	redact *redact.Redactor
}

func newDiagnosisScreen(c common) diagnosisScreen {
	s := diagnosisScreen{common: c}
	for i := range s.panes {
		s.panes[i] = newPane()
	}
	return s
}

// diagnosisChrome is the title and tab lines above the tab's content.
const diagnosisChrome = 2

// SetSize resizes the tabs and re-wraps their content, keeping a marked line on screen.
func (s *diagnosisScreen) SetSize(w, h int) {
	s.width, s.height = w, h
	for i := range s.panes {
		s.panes[i].setSize(max(w, 1), max(h-diagnosisChrome, 1))
	}
	if s.diag != nil {
		s.build(false)
	}
}

// Open shows a workload on the Diagnosis tab, scrolled to the top.
func (s *diagnosisScreen) Open(ds *dataset, d *diagnose.Diagnosis) {
	s.ds, s.diag = ds, d
	s.key = workloadKey{d.Kind, d.Namespace, d.Name}
	s.tab = tabDiagnosis
	s.cited, s.citedFor = ds.citedLines(d), d.Detail
	s.build(true)
}

// Refresh shows the same workload from a new dataset, keeping the tab and scroll positions.
func (s *diagnosisScreen) Refresh(ds *dataset, d *diagnose.Diagnosis) {
	s.ds, s.diag = ds, d
	if d.Detail == nil || d.Detail != s.citedFor {
		// Detail.Observations writes the workload's facts out anew: only for a new diagnosis.
		s.cited, s.citedFor = ds.citedLines(d), d.Detail
	}
	s.build(false)
}

func (s *diagnosisScreen) build(reset bool) {
	ds, d, w := s.ds, s.diag, max(s.width, 1)
	pods := ds.podsOf(d)
	sc := s.redact.Scope(ds.snap, d.Kind, d.Namespace, d.Name)
	copies := shownCopies(sc, ds.copiesOf(d, pods))
	s.spec = ds.newSpecView(d, sc)
	diagnosis, excerpt := ds.diagnosisLines(s.styles, d, copies, s.spec, w)
	content := [tabCount][]paneLine{
		tabDiagnosis: fixedLines(diagnosis),
		tabCopies:    copiesLines(s.styles, copies, w),
		tabEvents:    fixedLines(ds.eventsLines(s.styles, shownEvents(sc, ds.eventsOf(d, pods)), w)),
		tabLogs:      ds.logsLines(s.styles, sc, pods, s.cited, w, !s.unwrapped),
		tabSpec:      s.spec.paneLines(s.styles, 0, len(s.spec.lines)),
		tabTimeline:  fixedLines(ds.timelineLines(s.styles, d, w)),
	}
	marks := [tabCount]int{-1, -1, -1, -1, s.spec.suspect, -1}
	// The Diagnosis tab's excerpt of the pod template has the suspect's line too; it is not
	// put a third of the way down on opening, where the verdict would scroll away.
	marks[tabDiagnosis] = excerpt
	for i := range s.panes {
		s.panes[i].set(content[i], marks[i], reset)
	}
	if reset {
		s.panes[tabDiagnosis].vp.SetYOffset(0)
	}
}

// Update handles keys on the diagnosis screen.
func (s *diagnosisScreen) Update(msg tea.KeyMsg) tea.Cmd {
	k := s.keys
	p := &s.panes[s.tab]
	vp := &p.vp
	switch {
	case key.Matches(msg, k.NextTab):
		s.tab = (s.tab + 1) % tabCount
	case key.Matches(msg, k.PrevTab):
		s.tab = (s.tab + tabCount - 1) % tabCount
	case key.Matches(msg, k.Tabs):
		s.tab = int(msg.String()[0] - '1')
	case key.Matches(msg, k.Up):
		vp.ScrollUp(1)
	case key.Matches(msg, k.Down):
		vp.ScrollDown(1)
	case key.Matches(msg, k.PageUp):
		vp.PageUp()
	case key.Matches(msg, k.PageDown):
		vp.PageDown()
	case key.Matches(msg, k.Top):
		vp.GotoTop()
	case key.Matches(msg, k.Bottom):
		vp.GotoBottom()
	case key.Matches(msg, k.Left):
		p.scrollX(-p.step())
	case key.Matches(msg, k.Right):
		p.scrollX(p.step())
	case key.Matches(msg, k.Wrap) && s.tab == tabLogs:
		s.toggleWrap()
	}
	return nil
}

// toggleWrap turns the Logs tab's wrapping on or off, keeping the log line at the top of the
// screen at the top.
func (s *diagnosisScreen) toggleWrap() {
	p := &s.panes[tabLogs]
	top := logLineAt(p.lines, p.vp.YOffset)
	s.unwrapped = !s.unwrapped
	sc := s.redact.Scope(s.ds.snap, s.diag.Kind, s.diag.Namespace, s.diag.Name)
	lines := s.ds.logsLines(s.styles, sc, s.ds.podsOf(s.diag), s.cited, max(s.width, 1), !s.unwrapped)
	p.set(lines, -1, false)
	p.x = 0
	p.render()
	p.vp.SetYOffset(logLineRow(lines, top))
}

// logLineAt is the index of the log line on row, counting lines and not their wrapped
// continuations.
func logLineAt(lines []paneLine, row int) int {
	n := -1
	for i := 0; i <= min(row, len(lines)-1); i++ {
		if !lines[i].continued {
			n++
		}
	}
	return max(n, 0)
}

// logLineRow is the row of the n-th log line.
func logLineRow(lines []paneLine, n int) int {
	for i, l := range lines {
		if !l.continued {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return len(lines)
}

// Scroll moves the current tab by delta lines (mouse wheel).
func (s *diagnosisScreen) Scroll(delta int) {
	if delta < 0 {
		s.panes[s.tab].vp.ScrollUp(-delta)
	} else {
		s.panes[s.tab].vp.ScrollDown(delta)
	}
}

// CopyText is what y copies: the suggested fix, else the top suspect's path.
func (s *diagnosisScreen) CopyText() string {
	if s.diag == nil {
		return ""
	}
	if s.diag.Fix != "" {
		return Sanitize(s.diag.Fix)
	}
	for _, sp := range s.diag.Suspects {
		if sp.Path != nil {
			return sp.Path.String()
		}
	}
	return ""
}

// View draws the title, the tabs and the visible part of the current tab.
func (s *diagnosisScreen) View() string {
	if s.diag == nil {
		return ""
	}
	d := s.diag
	title := s.styles.BadgeOf(d.Shape, d.Waived != nil, s.width < 60) + " " + s.styles.Bold.Render(kindShort(d.Kind)+"/"+Sanitize(d.Name)) +
		s.styles.Dim.Render("  "+Sanitize(d.Namespace))
	var tabs strings.Builder
	for i, name := range tabNames {
		label := itoa(i+1) + " " + name
		if s.width < 60 {
			label = itoa(i+1) + name[:min(3, len(name))]
		}
		if i == s.tab {
			tabs.WriteString(s.styles.TabActive.Render(" " + label + " "))
		} else {
			tabs.WriteString(s.styles.TabInactive.Render(" " + label + " "))
		}
	}
	bar := tabs.String()
	if pos := s.panes[s.tab].position(); pos != "" && ansi.StringWidth(bar)+2+ansi.StringWidth(pos) <= s.width {
		// Where the tab is scrolled sideways, at the right of the tabs when it fits.
		bar += strings.Repeat(" ", s.width-ansi.StringWidth(bar)-ansi.StringWidth(pos)) + s.styles.Dim.Render(pos)
	}
	return ansi.Truncate(title, s.width, "…") + "\n" + ansi.Truncate(bar, s.width, "…") + "\n" + s.panes[s.tab].vp.View()
}

// ShortHelp implements help.KeyMap for the footer: the current tab's own keys first.
func (s *diagnosisScreen) ShortHelp() []key.Binding {
	k := s.keys
	var b []key.Binding
	if s.tab == tabLogs {
		b = append(b, k.Wrap)
	}
	if s.panes[s.tab].maxX() > 0 {
		b = append(b, k.Sideways)
	}
	// In the order they are left out of a narrow footer, the last first; help and quit stay.
	return append(b, k.NextTab, k.Back, k.Copy, k.CopySummary, k.Tabs, k.Help, k.Quit)
}

// FullHelp implements help.KeyMap.
func (s *diagnosisScreen) FullHelp() [][]key.Binding { return s.keys.FullHelp() }

// Init implements screen; the screen starts nothing of its own.
func (s *diagnosisScreen) Init() tea.Cmd { return nil }

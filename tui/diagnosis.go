package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
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

	key  workloadKey
	ds   *dataset
	diag *diagnose.Diagnosis
	tab  int
	vps  [tabCount]viewport.Model
	spec specView
	// redact hides credentials in the raw data the tabs show; nil shows them.
	redact *redact.Redactor
}

func newDiagnosisScreen(c common) diagnosisScreen {
	s := diagnosisScreen{common: c}
	for i := range s.vps {
		s.vps[i] = viewport.New(1, 1)
	}
	return s
}

// diagnosisChrome is the title and tab lines above the tab's content.
const diagnosisChrome = 2

// SetSize resizes the tabs and re-wraps their content.
func (s *diagnosisScreen) SetSize(w, h int) {
	s.width, s.height = w, h
	for i := range s.vps {
		s.vps[i].Width = w
		s.vps[i].Height = max(h-diagnosisChrome, 1)
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
	s.build(true)
}

// Refresh shows the same workload from a new dataset, keeping the tab and scroll positions.
func (s *diagnosisScreen) Refresh(ds *dataset, d *diagnose.Diagnosis) {
	s.ds, s.diag = ds, d
	s.build(false)
}

func (s *diagnosisScreen) build(reset bool) {
	ds, d, w := s.ds, s.diag, max(s.width, 1)
	pods := ds.podsOf(d)
	sc := s.redact.Scope(ds.snap, d.Kind, d.Namespace, d.Name)
	copies := shownCopies(sc, ds.copiesOf(d, pods))
	s.spec = ds.newSpecView(d, sc)
	content := [tabCount][]string{
		tabDiagnosis: ds.diagnosisLines(s.styles, d, copies, s.spec, w),
		tabCopies:    copiesLines(s.styles, copies, w),
		tabEvents:    ds.eventsLines(s.styles, shownEvents(sc, ds.eventsOf(d, pods)), w),
		tabLogs:      ds.logsLines(s.styles, sc, pods, w),
		tabSpec:      s.spec.render(s.styles, 0, len(s.spec.lines), w),
		tabTimeline:  ds.timelineLines(s.styles, d, w),
	}
	for i := range s.vps {
		off := s.vps[i].YOffset
		s.vps[i].SetContent(strings.Join(content[i], "\n"))
		if reset {
			off = 0
		}
		s.vps[i].SetYOffset(off)
	}
	if reset && s.spec.suspect >= 0 {
		// Put the suspect line a third of the way down, where the eye lands.
		s.vps[tabSpec].SetYOffset(s.spec.suspect - s.vps[tabSpec].Height/3)
	}
}

// Update handles keys on the diagnosis screen.
func (s *diagnosisScreen) Update(msg tea.KeyMsg) tea.Cmd {
	k := s.keys
	vp := &s.vps[s.tab]
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
	}
	return nil
}

// Scroll moves the current tab by delta lines (mouse wheel).
func (s *diagnosisScreen) Scroll(delta int) {
	if delta < 0 {
		s.vps[s.tab].ScrollUp(-delta)
	} else {
		s.vps[s.tab].ScrollDown(delta)
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
	title := s.styles.Badge(d.Shape, s.width < 60) + " " + s.styles.Bold.Render(kindShort(d.Kind)+"/"+Sanitize(d.Name)) +
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
	return ansi.Truncate(title, s.width, "…") + "\n" + ansi.Truncate(tabs.String(), s.width, "…") + "\n" + s.vps[s.tab].View()
}

// ShortHelp implements help.KeyMap for the footer.
func (s *diagnosisScreen) ShortHelp() []key.Binding {
	k := s.keys
	return []key.Binding{k.NextTab, k.Tabs, k.Copy, k.Back, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (s *diagnosisScreen) FullHelp() [][]key.Binding { return s.keys.FullHelp() }

// Init implements screen; the screen starts nothing of its own.
func (s *diagnosisScreen) Init() tea.Cmd { return nil }

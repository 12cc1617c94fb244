package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// helpScreen lists every key, grouped, from the one KeyMap.
type helpScreen struct {
	common
	width, height int
	vp            viewport.Model
}

func newHelpScreen(c common) helpScreen {
	return helpScreen{common: c, vp: viewport.New(1, 1)}
}

// SetSize resizes the screen and lays the groups out again.
func (s *helpScreen) SetSize(w, h int) {
	s.width, s.height = w, h
	s.vp.Width, s.vp.Height = w, max(h, 1)
	s.vp.SetContent(strings.Join(s.lines(), "\n"))
}

func (s *helpScreen) lines() []string {
	groups, titles := s.keys.FullHelp(), s.keys.HelpGroups()
	keyW := 0
	for _, g := range groups {
		for _, b := range g {
			if shown(b) {
				keyW = max(keyW, ansi.StringWidth(b.Help().Key))
			}
		}
	}
	// Two groups side by side when they fit, else one column.
	colW := keyW + 2 + 22
	cols := 1
	if s.width >= 2*colW+4 {
		cols = 2
	}
	var blocks [][]string
	for i, g := range groups {
		block := []string{s.styles.Section.Render(titles[i])}
		for _, b := range g {
			if !shown(b) {
				continue
			}
			h := b.Help()
			block = append(block, s.styles.HelpKey.Render(fmt.Sprintf("%-*s", keyW, h.Key))+"  "+s.styles.HelpDesc.Render(h.Desc))
		}
		blocks = append(blocks, block)
	}
	var out []string
	for i := 0; i < len(blocks); i += cols {
		row := blocks[i:min(i+cols, len(blocks))]
		height := 0
		for _, b := range row {
			height = max(height, len(b))
		}
		for l := 0; l < height; l++ {
			var line string
			for c, b := range row {
				cell := ""
				if l < len(b) {
					cell = b[l]
				}
				if c < len(row)-1 {
					cell = pad(cell, colW+4)
				}
				line += cell
			}
			out = append(out, ansi.Truncate("  "+line, s.width, "…"))
		}
		out = append(out, "")
	}
	names := make([]string, len(diagnose.Shapes))
	for i, sh := range diagnose.Shapes {
		names[i] = string(sh)
	}
	out = append(out, s.styles.Dim.Render(ansi.Truncate("  Shapes, worst first: "+strings.Join(names, " · "), s.width, "…")),
		s.styles.Dim.Render(ansi.Truncate("  A grey badge (never-starts,waived; lower case when short) is waived by the workload's "+diagnose.WaiveAnnotation+" annotation.", s.width, "…")))
	return out
}

// shown reports whether help lists a binding: not one switched off (the context key with one
// context); a binding of help text alone, such as the mouse wheel, has no keys and is listed.
func shown(b key.Binding) bool { return len(b.Keys()) == 0 || b.Enabled() }

// Update scrolls the help when it does not fit.
func (s *helpScreen) Update(msg tea.KeyMsg) tea.Cmd {
	k := s.keys
	switch {
	case key.Matches(msg, k.Up):
		s.vp.ScrollUp(1)
	case key.Matches(msg, k.Down):
		s.vp.ScrollDown(1)
	case key.Matches(msg, k.PageUp):
		s.vp.PageUp()
	case key.Matches(msg, k.PageDown):
		s.vp.PageDown()
	}
	return nil
}

// Scroll moves the help by delta lines (mouse wheel).
func (s *helpScreen) Scroll(delta int) {
	if delta < 0 {
		s.vp.ScrollUp(-delta)
	} else {
		s.vp.ScrollDown(delta)
	}
}

// View draws the visible part of the help.
func (s *helpScreen) View() string { return s.vp.View() }

// ShortHelp implements help.KeyMap for the footer.
func (s *helpScreen) ShortHelp() []key.Binding {
	return []key.Binding{s.keys.Back, s.keys.Quit}
}

// FullHelp implements help.KeyMap.
func (s *helpScreen) FullHelp() [][]key.Binding { return s.keys.FullHelp() }

// Init implements screen; the screen starts nothing of its own.
func (s *helpScreen) Init() tea.Cmd { return nil }

package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
)

// ShapeColor is the one mapping from shape to colour; the badges, the header totals and the
// per-copy strip all take their colour from it.
func ShapeColor(s diagnose.Shape) lipgloss.AdaptiveColor {
	switch s {
	case diagnose.ShapeNeverStarts:
		return lipgloss.AdaptiveColor{Light: "#B71C1C", Dark: "#FF5F5F"}
	case diagnose.ShapeStartsAndDies:
		return lipgloss.AdaptiveColor{Light: "#BF360C", Dark: "#FF8700"}
	case diagnose.ShapeLiveButIdle:
		return lipgloss.AdaptiveColor{Light: "#8D6E00", Dark: "#FFD75F"}
	case diagnose.ShapeProgressing:
		return lipgloss.AdaptiveColor{Light: "#1565C0", Dark: "#5FAFFF"}
	case diagnose.ShapeNoEligibleNodes:
		return lipgloss.AdaptiveColor{Light: "#00695C", Dark: "#5FD7AF"}
	case diagnose.ShapeSuspended:
		return lipgloss.AdaptiveColor{Light: "#6A1B9A", Dark: "#D787FF"}
	case diagnose.ShapeHealthy:
		return lipgloss.AdaptiveColor{Light: "#2E7D32", Dark: "#5FD75F"}
	default:
		return lipgloss.AdaptiveColor{Light: "#616161", Dark: "#A8A8A8"}
	}
}

// waivedColor is the background of a waived workload's badge: its verdict stands, muted.
var waivedColor = lipgloss.AdaptiveColor{Light: "#9E9E9E", Dark: "#6C6C6C"}

// ShapeLabel is the badge text of a shape; short is for narrow terminals.
func ShapeLabel(s diagnose.Shape, short bool) string {
	if !short {
		return string(s)
	}
	switch s {
	case diagnose.ShapeNeverStarts:
		return "NEVER"
	case diagnose.ShapeStartsAndDies:
		return "DIES"
	case diagnose.ShapeLiveButIdle:
		return "IDLE"
	case diagnose.ShapeProgressing:
		return "ROLL"
	case diagnose.ShapeNoEligibleNodes:
		return "POOL"
	case diagnose.ShapeSuspended:
		return "PAUSE"
	case diagnose.ShapeHealthy:
		return "OK"
	default:
		return "?"
	}
}

// Styles holds every style of the console. It is built once by DefaultStyles from a renderer, so
// NO_COLOR and the terminal's colour profile apply everywhere.
type Styles struct {
	r *lipgloss.Renderer

	Title, Dim, Bold, Selected, Cursor      lipgloss.Style
	Section, Error, Warn, OK, Live, Stale   lipgloss.Style
	TabActive, TabInactive                  lipgloss.Style
	Highlight, DiffAdd, DiffDel, LineNumber lipgloss.Style
	// Mark is the ▶ beside a log line the diagnosis cites.
	Mark                     lipgloss.Style
	HelpKey, HelpDesc, Toast lipgloss.Style

	// Glyphs are the symbols of the Timeline's picture: UnicodeGlyphs, or ASCIIGlyphs where
	// the font may lack them.
	Glyphs Glyphs

	badge, badgeShort, text map[diagnose.Shape]string
	// waived and waivedShort are the badges of waived workloads: grey, and marked as the audit
	// table marks them (never-starts,waived), or in lower case where the badge is short.
	waived, waivedShort map[diagnose.Shape]string
}

// Glyphs are the symbols the Timeline tab draws its picture with.
type Glyphs struct {
	// Marks are the marks of the moments, one per kind.
	Marks map[diagnose.TimelineKind]rune
	// Levels draw a level from nothing (the first, a dotted floor rather than a blank a
	// reader takes for "no data") to full (the last).
	Levels []rune
}

// UnicodeGlyphs are glyphs that the fonts terminals ship with have: JetBrains Mono (the
// screenshots' font), DejaVu Sans Mono and the fonts derived from it. The restart mark was ↻,
// which JetBrains Mono lacks and drew as an empty box.
var UnicodeGlyphs = Glyphs{
	Marks: map[diagnose.TimelineKind]rune{
		diagnose.TimelineRevision:   'R',
		diagnose.TimelineOnset:      '!',
		diagnose.TimelineRestart:    '×',
		diagnose.TimelineDependency: '◆',
		diagnose.TimelineServing:    '▼',
	},
	Levels: []rune("·▁▂▃▄▅▆▇█"),
}

// ASCIIGlyphs stand in for UnicodeGlyphs on the Linux console (TERM=linux), whose fonts hold
// a few hundred glyphs, and without colour (NO_COLOR, a dumb terminal).
var ASCIIGlyphs = Glyphs{
	Marks: map[diagnose.TimelineKind]rune{
		diagnose.TimelineRevision:   'R',
		diagnose.TimelineOnset:      '!',
		diagnose.TimelineRestart:    'x',
		diagnose.TimelineDependency: '*',
		diagnose.TimelineServing:    'v',
	},
	Levels: []rune(".:-=+*#%@"),
}

// Legend names the marks in the order the Timeline lists them.
func (g Glyphs) Legend() string {
	return fmt.Sprintf("%c revision  %c onset  %c serving fell  %c restart  %c dependency changed",
		g.Marks[diagnose.TimelineRevision], g.Marks[diagnose.TimelineOnset], g.Marks[diagnose.TimelineServing],
		g.Marks[diagnose.TimelineRestart], g.Marks[diagnose.TimelineDependency])
}

// DefaultStyles builds the console's styles with adaptive colours on r.
func DefaultStyles(r *lipgloss.Renderer) Styles {
	subtle := lipgloss.AdaptiveColor{Light: "#757575", Dark: "#8A8A8A"}
	accent := lipgloss.AdaptiveColor{Light: "#5E35B1", Dark: "#AF87FF"}
	s := Styles{
		r:           r,
		Title:       r.NewStyle().Bold(true).Foreground(accent),
		Dim:         r.NewStyle().Foreground(subtle),
		Bold:        r.NewStyle().Bold(true),
		Selected:    r.NewStyle().Reverse(true),
		Cursor:      r.NewStyle().Bold(true).Foreground(accent),
		Section:     r.NewStyle().Bold(true).Underline(true),
		Error:       r.NewStyle().Bold(true).Foreground(ShapeColor(diagnose.ShapeNeverStarts)),
		Warn:        r.NewStyle().Foreground(ShapeColor(diagnose.ShapeLiveButIdle)),
		OK:          r.NewStyle().Foreground(ShapeColor(diagnose.ShapeHealthy)),
		Live:        r.NewStyle().Bold(true).Foreground(ShapeColor(diagnose.ShapeHealthy)),
		Stale:       r.NewStyle().Bold(true).Foreground(ShapeColor(diagnose.ShapeLiveButIdle)),
		TabActive:   r.NewStyle().Bold(true).Reverse(true),
		TabInactive: r.NewStyle().Foreground(subtle),
		Highlight:   r.NewStyle().Bold(true).Reverse(true).Foreground(ShapeColor(diagnose.ShapeLiveButIdle)),
		DiffAdd:     r.NewStyle().Foreground(ShapeColor(diagnose.ShapeHealthy)),
		DiffDel:     r.NewStyle().Foreground(ShapeColor(diagnose.ShapeNeverStarts)),
		LineNumber:  r.NewStyle().Foreground(subtle),
		Mark:        r.NewStyle().Bold(true).Foreground(ShapeColor(diagnose.ShapeLiveButIdle)),
		HelpKey:     r.NewStyle().Bold(true).Foreground(accent),
		HelpDesc:    r.NewStyle().Foreground(subtle),
		Toast:       r.NewStyle().Bold(true).Foreground(accent),
		badge:       map[diagnose.Shape]string{},
		badgeShort:  map[diagnose.Shape]string{},
		text:        map[diagnose.Shape]string{},
		waived:      map[diagnose.Shape]string{},
		waivedShort: map[diagnose.Shape]string{},
		Glyphs:      ASCIIGlyphs,
	}
	if r.ColorProfile() != termenv.Ascii {
		s.Glyphs = UnicodeGlyphs
		// Explicit backgrounds rather than reverse video: they read the same in every terminal
		// and in the rendered screenshots. Without colour, reverse video is all there is.
		selBg := lipgloss.AdaptiveColor{Light: "#D7D7FF", Dark: "#3A3A5E"}
		s.Selected = r.NewStyle().Background(selBg).Bold(true)
		s.TabActive = r.NewStyle().Bold(true).Foreground(lipgloss.AdaptiveColor{Light: "#FFFFFF", Dark: "#000000"}).Background(accent)
		s.Highlight = r.NewStyle().Bold(true).Foreground(lipgloss.AdaptiveColor{Light: "#FFFFFF", Dark: "#000000"}).
			Background(ShapeColor(diagnose.ShapeLiveButIdle))
	}
	// Badges are rendered once: the workloads screen draws thousands of them per second while
	// scrolling, and lipgloss rendering is the expensive part of a frame.
	for _, sh := range diagnose.Shapes {
		b := r.NewStyle().Bold(true).Foreground(lipgloss.AdaptiveColor{Light: "#FFFFFF", Dark: "#000000"}).
			Background(ShapeColor(sh))
		s.badge[sh] = b.Render(" " + ShapeLabel(sh, false) + " ")
		s.badgeShort[sh] = b.Render(" " + ShapeLabel(sh, true) + " ")
		s.text[sh] = r.NewStyle().Bold(true).Foreground(ShapeColor(sh)).Render(string(sh))
		wb := r.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "#FFFFFF", Dark: "#000000"}).Background(waivedColor)
		s.waived[sh] = wb.Render(" " + WaivedLabel(sh, false) + " ")
		s.waivedShort[sh] = wb.Render(" " + WaivedLabel(sh, true) + " ")
	}
	return s
}

// WaivedLabel is the badge text of a waived workload's shape: the audit table's SHAPE cell
// (report.ShapeCell), or the short label in lower case.
func WaivedLabel(s diagnose.Shape, short bool) string {
	if short {
		return strings.ToLower(ShapeLabel(s, true))
	}
	return ShapeLabel(s, false) + "," + report.WaivedMark
}

// BadgeOf renders a workload's badge: its shape's, or the grey one of a waived verdict.
func (s Styles) BadgeOf(sh diagnose.Shape, waived, short bool) string {
	if !waived {
		return s.Badge(sh, short)
	}
	m := s.waived
	if short {
		m = s.waivedShort
	}
	if b, ok := m[sh]; ok {
		return b
	}
	return " " + WaivedLabel(sh, short) + " "
}

// Badge renders a shape as a coloured badge, two cells wider than its label.
func (s Styles) Badge(sh diagnose.Shape, short bool) string {
	m := s.badge
	if short {
		m = s.badgeShort
	}
	if b, ok := m[sh]; ok {
		return b
	}
	return " " + ShapeLabel(sh, short) + " "
}

// ShapeText renders a shape's name in its colour.
func (s Styles) ShapeText(sh diagnose.Shape) string {
	if t, ok := s.text[sh]; ok {
		return t
	}
	return string(sh)
}

// Fg renders text in a colour.
func (s Styles) Fg(c lipgloss.TerminalColor, text string) string {
	return s.r.NewStyle().Foreground(c).Render(text)
}

package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// TestGlyphsForTheTerminal: a terminal with colour gets the Unicode marks; the Linux console
// (colours, a small font) and a terminal without colour (NO_COLOR) get ASCII ones.
func TestGlyphsForTheTerminal(t *testing.T) {
	for _, tc := range []struct {
		term    string
		profile termenv.Profile
		ascii   bool
	}{
		{"xterm-256color", termenv.ANSI256, false},
		{"tmux-256color", termenv.TrueColor, false},
		{"linux", termenv.ANSI, true},
		{"xterm-256color", termenv.Ascii, true},
	} {
		r := lipgloss.NewRenderer(nil)
		r.SetColorProfile(tc.profile)
		g := consoleStyles(r, tc.term).Glyphs
		restart := g.Marks[diagnose.TimelineRestart]
		if got := restart < 0x80; got != tc.ascii {
			t.Errorf("TERM=%s, profile %v: restart mark %q, want ASCII %v", tc.term, tc.profile, restart, tc.ascii)
		}
	}
	for _, g := range []Glyphs{UnicodeGlyphs, ASCIIGlyphs} {
		if len(g.Marks) != 5 || len(g.Levels) < 2 {
			t.Errorf("a glyph set lacks marks or levels: %+v", g)
		}
	}
	for k, r := range ASCIIGlyphs.Marks {
		if r >= 0x80 {
			t.Errorf("ASCII mark of %s is %q", k, r)
		}
	}
	for _, r := range ASCIIGlyphs.Levels {
		if r >= 0x80 {
			t.Errorf("ASCII level %q", r)
		}
	}
	// ↻ is what JetBrains Mono, the screenshots' font, lacks.
	for _, r := range UnicodeGlyphs.Marks {
		if r == '↻' || r == '↺' {
			t.Errorf("the Unicode marks hold %q, which common terminal fonts lack", r)
		}
	}
}

// TestTimelineWithoutColourDrawsASCII: under NO_COLOR the Timeline's picture, marks and legend
// are ASCII.
func TestTimelineWithoutColourDrawsASCII(t *testing.T) {
	m := timelineModel(t, 100, 30)
	m.diagnosis.styles = testStyles()
	m.diagnosis.SetSize(100, 27)
	v := seen(m)
	for _, want := range []string{"x restart", "v serving fell", "* dependency changed"} {
		if !strings.Contains(v, want) {
			t.Errorf("the legend lacks %q:\n%s", want, v)
		}
	}
	for _, l := range strings.Split(v, "\n") {
		if strings.HasPrefix(l, "serve ") || strings.HasPrefix(l, "marks") {
			for _, r := range l {
				if r >= 0x80 {
					t.Errorf("a non-ASCII %q on %q", r, l)
				}
			}
		}
	}
}

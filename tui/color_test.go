package tui

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// frameOnTTY renders the fixture's workloads screen with styles detected as Run detects them,
// for a terminal that claims 256 colours.
func frameOnTTY(t *testing.T) string {
	t.Helper()
	t.Setenv("TERM", "xterm-256color")
	t.Setenv("COLORTERM", "")
	var buf bytes.Buffer
	r := lipgloss.NewRenderer(&buf, termenv.WithTTY(true))
	r.SetHasDarkBackground(true)
	snap, rep := fixture()
	m := New(context.Background(), Options{Source: staticSource{snap: snap}}, DefaultStyles(r), func() time.Time { return refTime })
	m.Update(windowSize(100, 20))
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	return m.View()
}

func TestColourWithoutNoColor(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	if v := frameOnTTY(t); colourSGR(v) == "" {
		t.Fatalf("a 256-colour terminal got no colour:\n%q", v)
	}
}

func TestNoColorRespected(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	v := frameOnTTY(t)
	if c := colourSGR(v); c != "" {
		t.Fatalf("NO_COLOR frame sets colour with %q:\n%q", c, v)
	}
	// Without colour the selection must still be visible.
	if !strings.Contains(v, "›") {
		t.Fatal("no selection marker without colour")
	}
}

var sgr = regexp.MustCompile(`\x1b\[([0-9;]*)m`)

// colourSGR returns the first escape sequence in s that sets a colour, or "".
func colourSGR(s string) string {
	for _, m := range sgr.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.Split(m[1], ";") {
			n, err := strconv.Atoi(p)
			if err == nil && (n >= 30 && n <= 38 || n >= 40 && n <= 48 || n >= 90 && n <= 97 || n >= 100 && n <= 107) {
				return m[0]
			}
		}
	}
	return ""
}

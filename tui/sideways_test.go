package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubediagnose/kubectl-diagnose/internal/demo"
)

// demoModel is the console on the embedded demo and the real engine at w×h, its rows listed.
func demoModel(t *testing.T, w, h int) *Model {
	t.Helper()
	src := demo.Source()
	snap, err := src.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := New(context.Background(), Options{Source: src, SourceLabel: "demo", AllNamespaces: true},
		testStyles(), func() time.Time { return refTime })
	m.Update(windowSize(w, h))
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: newDataset(snap, nil, m.diagnose)})
	return m
}

// open filters the workloads for name and opens the first match.
func open(m *Model, name string) {
	press(m, "/")
	for _, r := range name {
		press(m, string(r))
	}
	press(m, "enter", "enter")
}

// lineWith is the first line of the screen that contains s, or "".
func lineWith(screen, s string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// TestSpecScrollsSideways: the collector's image line, its suspect, is cut at 80 columns; the
// arrows and h/l move the YAML sideways to its end and back while the line numbers and the ▶
// stay put, and the tab bar says which columns are on screen.
func TestSpecScrollsSideways(t *testing.T) {
	m := demoModel(t, 80, 24)
	open(m, "collector")
	press(m, "5")
	v := seen(m)
	line := lineWith(v, "image: registry.internal/telemetry/collector@sha256:")
	if !strings.HasPrefix(line, "▶") || !strings.HasSuffix(line, "…") {
		t.Fatalf("the suspect's image line is not marked and cut at 80 columns:\n%s", v)
	}
	if !strings.Contains(v, "←→ 1-76 of") {
		t.Errorf("the tab bar does not say the first columns are on screen:\n%s", v)
	}
	for _, k := range []string{"right", "l", "right"} {
		m.Update(sideways(k))
	}
	v = seen(m)
	line = lineWith(v, "sha256:")
	if !strings.HasPrefix(line, "▶10 ") || strings.HasSuffix(line, "…") || strings.Contains(line, "image:") {
		t.Fatalf("scrolled right, the suspect's line does not show the digest's end beside its number:\n%s", v)
	}
	if ansi.StringWidth(line) > 80 {
		t.Fatalf("a line is wider than the screen: %q", line)
	}
	if m.diagnosis.tab != tabSpec {
		t.Fatalf("the arrows changed the tab to %d", m.diagnosis.tab)
	}
	for _, k := range []string{"left", "h", "left"} {
		m.Update(sideways(k))
	}
	if l := lineWith(seen(m), "sha256:"); !strings.Contains(l, "image: registry.internal") {
		t.Fatalf("scrolled back left, the line does not start at its start: %q", l)
	}
}

// TestCopiesScrollSideways: the Copies tab's rows stay whole, and the node at their end is
// reached by scrolling; the message under each copy stays wrapped where it is.
func TestCopiesScrollSideways(t *testing.T) {
	m := demoModel(t, 80, 24)
	open(m, "worker")
	press(m, "2")
	v := seen(m)
	if strings.Contains(v, ".compute.internal") || !strings.Contains(v, "container worker: Error (exit code 1)") {
		t.Fatalf("at 80 columns the node is on screen or the message is not:\n%s", v)
	}
	m.Update(sideways("right"))
	m.Update(sideways("right"))
	v = seen(m)
	if !strings.Contains(v, "eu-west-1.compute.internal") || !strings.Contains(v, "    container worker: Error (exit code 1)") {
		t.Fatalf("scrolled right, the node is not on screen or the message moved:\n%s", v)
	}
}

// TestSuspectLineStaysOnScreenAfterResize: the Spec tab's ▶ line, on screen, stays on screen
// as the terminal shrinks and grows, and so does the Diagnosis tab's excerpt of it.
func TestSuspectLineStaysOnScreenAfterResize(t *testing.T) {
	m := demoModel(t, 120, 50)
	open(m, "worker")
	press(m, "5")
	for _, size := range [][2]int{{120, 14}, {80, 9}, {60, 7}, {200, 60}, {90, 12}} {
		m.Update(windowSize(size[0], size[1]))
		if l := lineWith(seen(m), "▶"); !strings.Contains(l, "key: secret-access-key") {
			t.Fatalf("%dx%d: the suspect's line is off screen:\n%s", size[0], size[1], seen(m))
		}
	}
	m = demoModel(t, 100, 30)
	open(m, "worker")
	// Scroll down to the excerpt, however many lines of verdict come before it.
	for i := 0; i < 40 && lineWith(seen(m), "▶") == ""; i++ {
		press(m, "down")
	}
	if lineWith(seen(m), "▶") == "" {
		t.Fatalf("the Diagnosis tab's excerpt is not on screen:\n%s", seen(m))
	}
	for _, size := range [][2]int{{100, 16}, {70, 12}, {140, 20}} {
		m.Update(windowSize(size[0], size[1]))
		if lineWith(seen(m), "▶") == "" {
			t.Fatalf("%dx%d: the excerpt's suspect line is off screen:\n%s", size[0], size[1], seen(m))
		}
	}
}

// TestArrowsDoNotChangeTabs: tab, shift+tab and 1-6 change tabs; the arrows scroll sideways.
func TestArrowsDoNotChangeTabs(t *testing.T) {
	m := readyModel(80, 24)
	press(m, "down", "down", "enter")
	for _, k := range []string{"right", "left", "l", "h"} {
		m.Update(sideways(k))
		if m.diagnosis.tab != tabDiagnosis || m.screen != screenDiagnosis {
			t.Fatalf("%s moved to tab %d, screen %v", k, m.diagnosis.tab, m.screen)
		}
	}
}

func sideways(k string) tea.KeyMsg {
	switch k {
	case "right":
		return tea.KeyMsg{Type: tea.KeyRight}
	case "left":
		return tea.KeyMsg{Type: tea.KeyLeft}
	}
	return keyMsg(k)
}

package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// TestWordWrap: lines break after a space or a comma, never inside a word that fits a line;
// a word longer than a line is broken where the line ends; nothing is lost.
func TestWordWrap(t *testing.T) {
	for _, tc := range []struct {
		in          string
		first, rest int
		want        []string
	}{
		{"short", 20, 18, []string{"short"}},
		{"the telling part is at the end of this line", 20, 18, []string{"the telling part is", "at the end of this", "line"}},
		{`{"a":"x","msg":"upstream dial failed","b":1}`, 20, 18, []string{`{"a":"x",`, `"msg":"upstream`, `dial failed",`, `"b":1}`}},
		{"abcdefghijklmnopqrstuvwxyz tail", 10, 8, []string{"abcdefghij", "klmnopqr", "stuvwxyz", "tail"}},
		{"trying and failing", 12, 10, []string{"trying and", "failing"}},
	} {
		got := wordWrap(tc.in, tc.first, tc.rest)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("wordWrap(%q, %d, %d) = %q, want %q", tc.in, tc.first, tc.rest, got, tc.want)
		}
		for i, l := range got {
			limit := tc.rest
			if i == 0 {
				limit = tc.first
			}
			if ansi.StringWidth(l) > limit {
				t.Errorf("wordWrap(%q): line %q is wider than %d", tc.in, l, limit)
			}
		}
	}
}

// TestLogsMarkTheLinesTheDiagnosisCites: on the demo's worker, the lines its evidence cites
// (missing credential, exiting) are marked ▶ and its other lines are not; every marked line is
// the text of an observation the diagnosis cites.
func TestLogsMarkTheLinesTheDiagnosisCites(t *testing.T) {
	m := demoModel(t, 220, 60)
	open(m, "worker")
	press(m, "4")
	v := seen(m)
	if !strings.Contains(v, "▶ the lines the diagnosis cites as evidence") {
		t.Fatalf("the Logs tab does not say what ▶ marks:\n%s", v)
	}
	marked, plain := 0, 0
	for _, l := range strings.Split(v, "\n") {
		switch {
		case strings.Contains(l, "missing credential") || strings.Contains(l, `msg="exiting"`):
			if !strings.HasPrefix(l, "▶ time=") {
				t.Errorf("a cited line is not marked: %q", l)
			}
			marked++
		case strings.Contains(l, "starting telemetry-worker") || strings.Contains(l, "connected to store"):
			if !strings.HasPrefix(l, "  time=") {
				t.Errorf("a line the diagnosis does not cite is marked: %q", l)
			}
			plain++
		}
	}
	if marked == 0 || plain == 0 {
		t.Fatalf("want cited and other lines on screen, saw %d and %d:\n%s", marked, plain, v)
	}

	d := m.diagnosis.diag
	cited := map[string]bool{}
	obs := d.Detail.Observations()
	for _, e := range d.Evidence {
		for _, i := range e.Observations {
			if obs[i].Kind == diagnose.ObsLogLine {
				cited[obs[i].Text] = true
			}
		}
	}
	n := 0
	for k, lines := range m.diagnosis.cited {
		l := m.diagnosis.ds.snap.Log(d.Namespace, k.pod, k.container, k.previous)
		for i := range lines {
			n++
			if !cited[l.Lines[i]] {
				t.Errorf("%s/%s line %d is marked, and no evidence cites it: %q", k.pod, k.container, i, l.Lines[i])
			}
		}
	}
	if n != 6 {
		t.Errorf("%d lines marked, want the 6 the evidence cites (2 in each of 3 copies)", n)
	}
}

// TestLogsWrapBetweenWordsAndToggle: wrapped at 80 columns no word of the ingester's log is
// cut in two; w leaves each line whole on one row, cut at the edge, and the arrows scroll it;
// w again wraps, keeping the log line at the top of the screen.
func TestLogsWrapBetweenWordsAndToggle(t *testing.T) {
	m := demoModel(t, 80, 24)
	open(m, "ingester")
	press(m, "4")
	v := seen(m)
	if !strings.Contains(v, `"msg":"starting telemetry-ingester",`) {
		t.Fatalf("a wrapped log line is cut inside a word:\n%s", v)
	}
	for _, l := range strings.Split(v, "\n") {
		if strings.HasSuffix(strings.TrimRight(l, " "), "…") {
			t.Fatalf("a wrapped log line is cut: %q", l)
		}
	}
	press(m, "down", "down", "down", "down", "down", "down", "down", "down", "down", "down", "down", "down")
	// The log line at the top of the screen: the row's own, or the one it continues.
	p := &m.diagnosis.panes[tabLogs]
	row := p.vp.YOffset
	for row > 0 && p.lines[row].continued {
		row--
	}
	if row == p.vp.YOffset {
		t.Fatalf("the test wants the top row to continue a line; row %d does not", row)
	}
	top := p.lines[row]
	press(m, "w")
	v = seen(m)
	rows := 0
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, `{"level":`) {
			rows++
			if !strings.HasSuffix(l, "…") {
				t.Errorf("an unwrapped line is not cut at the edge: %q", l)
			}
		}
	}
	if rows < 15 {
		t.Fatalf("unwrapped, %d log lines on screen, want a row each:\n%s", rows, v)
	}
	unwrappedTop := m.diagnosis.panes[tabLogs].lines[m.diagnosis.panes[tabLogs].vp.YOffset]
	if !strings.HasPrefix(unwrappedTop.body, top.body) {
		t.Errorf("unwrapping moved the top line from %q to %q", top.body, unwrappedTop.body)
	}
	for range 10 {
		m.Update(sideways("right"))
	}
	if l := lineWith(seen(m), "connect: connection refused\"}"); !strings.HasPrefix(l, "▶ ") {
		t.Errorf("scrolled right, the end of a cited line is not on screen beside its mark:\n%s", seen(m))
	}
	press(m, "w")
	if got := m.diagnosis.panes[tabLogs].lines[m.diagnosis.panes[tabLogs].vp.YOffset]; !strings.HasPrefix(unwrappedTop.body, got.body) {
		t.Errorf("wrapping again moved the top line from %q to %q", unwrappedTop.body, got.body)
	}
	if m.diagnosis.panes[tabLogs].x != 0 || m.diagnosis.unwrapped {
		t.Errorf("wrapped again, the tab is still scrolled sideways or unwrapped")
	}
}

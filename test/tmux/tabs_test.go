package tmux

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/demo"
)

// tabContent matches what each tab of a diagnosis shows and the tab bar and the tab before it
// do not, to wait for.
var tabContent = map[string]*regexp.Regexp{
	"1": regexp.MustCompile(`Suspects`),
	"2": regexp.MustCompile(`RESTARTS|no copies`),
	"3": regexp.MustCompile(`Warning|no events`),
	"4": regexp.MustCompile(`── telemetry-|no logs`),
	"5": regexp.MustCompile(`▶\s*\d+ `),
	"6": regexp.MustCompile(`now at the right edge|dates nothing`),
}

// TestEveryTabAt80And220 walks the demo in a real terminal at 80x24 and 220x60: the table and
// every tab of three broken workloads. No line is wider than the terminal; nothing is cut that
// fits: at 220 columns no line is cut at all, and at 80 a line is cut only at the screen's edge
// (a longer line, which the tab scrolls to), save the table's SUSPECT cells; the table names
// every workload whole.
func TestEveryTabAt80And220(t *testing.T) {
	bin := build(t)
	clipped := engineEllipses(t)
	for _, size := range [][2]int{{80, 24}, {220, 60}} {
		w, h := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			tm := start(t, w, h, bin, "--demo")
			s := tm.waitFor("telemetry-ingester", "SUSPECT")
			checkWidth(t, "table", s, w)
			for _, name := range []string{
				"deploy/telemetry-collector", "deploy/telemetry-worker", "deploy/telemetry-api",
				"deploy/telemetry-ingester", "sts/telemetry-store", "env INGEST_ENDPOINT",
			} {
				if !strings.Contains(s, name) {
					t.Errorf("the table does not show %q whole:\n%s", name, s)
				}
			}
			if w >= 220 {
				checkNothingCut(t, "table", s, w, false, clipped)
				if !strings.Contains(s, "env ARCHIVE_S3_SECRET_ACCESS_KEY secret key") {
					t.Errorf("at %d columns the worker's suspect is cut:\n%s", w, s)
				}
			}
			for _, workload := range []string{"collector", "worker", "ingester"} {
				tm.keys(append([]string{"/"}, append(strings.Split(workload, ""), "Enter", "Enter")...)...)
				tm.waitFor("1 Diagnosis", "telemetry-"+workload)
				for _, tab := range []string{"1", "2", "3", "4", "5", "6"} {
					tm.keys(tab)
					s := tm.waitMatch(tabContent[tab], "tab "+tab)
					where := workload + " tab " + tab
					checkWidth(t, where, s, w)
					checkNothingCut(t, where, s, w, w < 220, clipped)
				}
				tm.keys("Escape", "Escape")
				tm.waitFor("SUSPECT")
			}
			tm.keys("q")
			if st := tm.waitExit(); st != "0" {
				t.Errorf("exit status %s after q, want 0", st)
			}
			tm.quietStderr()
		})
	}
}

// checkWidth fails for a line wider than the terminal.
func checkWidth(t *testing.T, where, screen string, w int) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimRight(screen, "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > w {
			t.Errorf("%s: line wider than the terminal (%d > %d): %q", where, n, w, l)
		}
	}
}

// checkNothingCut fails for a line cut with "…": any, or with atEdge one cut before the
// screen's edge, which a tab does only to a cell or a line that does not fit. A line that
// ends in an ellipsis of the engine's own (clipped) is not cut.
func checkNothingCut(t *testing.T, where, screen string, w int, atEdge bool, clipped []string) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimRight(screen, "\n"), "\n") {
		l = strings.TrimRight(l, " ")
		if !strings.HasSuffix(l, "…") || clippedByEngine(l, clipped) {
			continue
		}
		if !atEdge || utf8.RuneCountInString(l) != w {
			t.Errorf("%s: a line is cut that fits:\n%q\nscreen:\n%s", where, l, screen)
		}
	}
}

// engineEllipses are the texts of the demo's report that the engine clipped itself with
// "…", such as a quoted log line in a reason.
func engineEllipses(t *testing.T) []string {
	t.Helper()
	snap, err := demo.Source().Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	snap.Index()
	b, err := json.Marshal(diagnose.Diagnose(snap))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			if strings.Contains(v, "…") {
				out = append(out, v)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	return out
}

// clippedByEngine reports whether a line's "…" is the engine's: the line's last word, up to
// and with the "…", is in a text the engine clipped.
func clippedByEngine(line string, clipped []string) bool {
	word := line[strings.LastIndexByte(line, ' ')+1:]
	for _, c := range clipped {
		if strings.Contains(c, word) {
			return true
		}
	}
	return false
}

// TestLogsWrapBetweenWordsInATerminal: at 80 columns every word of the worker's logs (what lies
// between spaces and commas) that fits a line is on one line of the screen, none cut in two;
// w unwraps the lines and → brings a line's end into view.
func TestLogsWrapBetweenWordsInATerminal(t *testing.T) {
	snap, err := demo.Source().Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	for _, l := range snap.Logs {
		if !strings.HasPrefix(l.Pod, "telemetry-worker-") {
			continue
		}
		for _, line := range l.Lines {
			for _, w := range strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == ',' }) {
				if len(w) < 70 {
					words = append(words, w)
				}
			}
		}
	}
	if len(words) < 20 {
		t.Fatalf("the demo's worker logs have %d words; the test needs its logs", len(words))
	}
	bin := build(t)
	tm := start(t, 80, 60, bin, "--demo")
	tm.waitFor("telemetry-worker")
	tm.keys("/", "w", "o", "r", "k", "e", "r", "Enter", "Enter", "4")
	s := tm.waitFor("── telemetry-worker-", "▶ time=")
	checkWidth(t, "worker logs", s, 80)
	for _, w := range words {
		if !strings.Contains(s, w) {
			t.Errorf("the word %q is not whole on any line:\n%s", w, s)
			break
		}
	}
	tm.keys("w")
	s = tm.waitFor("── telemetry-worker-")
	if !strings.Contains(s, "bucket=s3://telemetry-archive-eu-west-1") {
		// Unwrapped, the missing-credential line runs past 80 columns.
		tm.keys("Right", "Right", "Right")
		tm.waitFor("bucket=s3://telemetry-archive-eu-west-1")
	} else {
		t.Errorf("unwrapped, the long line is not cut at 80 columns:\n%s", s)
	}
	tm.keys("q")
	if st := tm.waitExit(); st != "0" {
		t.Errorf("exit status %s after q, want 0", st)
	}
	tm.quietStderr()
}

// TestSpecKeepsTheSuspectInView: the collector's image line, its suspect, is cut at 80 columns
// and → brings its digest's end into view beside the ▶ and the line number; a resize to a
// short terminal keeps the worker's ▶ line on screen.
func TestSpecKeepsTheSuspectInView(t *testing.T) {
	bin := build(t)
	tm := start(t, 80, 24, bin, "--demo")
	tm.waitFor("telemetry-collector")
	tm.keys("/", "c", "o", "l", "l", "e", "c", "t", "o", "r", "Enter", "Enter", "5")
	tm.waitFor("▶10     image: registry.internal/telemetry/collector@sha256:")
	tm.keys("Right", "Right")
	s := tm.waitFor("▶10 ", "e2d1c74")
	checkWidth(t, "spec scrolled", s, 80)
	tm.keys("Escape", "Escape")
	tm.waitFor("SUSPECT")
	tm.keys("/", "w", "o", "r", "k", "e", "r", "Enter", "Enter", "5")
	tm.waitFor("key: secret-access-key")
	for _, size := range [][2]int{{80, 10}, {60, 8}, {220, 60}, {100, 12}} {
		tm.tmux("resize-window", "-t", "diag", "-x", fmt.Sprint(size[0]), "-y", fmt.Sprint(size[1]))
		s := tm.waitFor("key: secret-access-key")
		if !strings.Contains(lineOf(s, "key: secret-access-key"), "▶") {
			t.Errorf("%dx%d: the ▶ line is off screen:\n%s", size[0], size[1], s)
		}
	}
	tm.keys("q")
	if st := tm.waitExit(); st != "0" {
		t.Errorf("exit status %s after q, want 0", st)
	}
	tm.quietStderr()
}

func lineOf(screen, s string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

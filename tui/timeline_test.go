package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
)

// timelineModel opens the ready-then-fails fixture (a revision Ready for minutes that failed from
// its first second) with the real engine, on the Timeline tab.
func timelineModel(t *testing.T, w, h int) *Model {
	t.Helper()
	snap, err := dump.Read(filepath.Join("..", "testdata", "fixtures", "ready-then-fails", "dump"), nil)
	if err != nil {
		t.Fatal(err)
	}
	snap.ReferenceTime = time.Date(2026, 11, 30, 14, 6, 0, 0, time.UTC)
	rep := diagnose.Diagnose(snap)
	m := New(context.Background(), Options{Source: staticSource{snap: snap}, SourceLabel: "dump", AllNamespaces: true},
		testStyles(), func() time.Time { return snap.ReferenceTime })
	m.Update(windowSize(w, h))
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	press(m, "enter", "6")
	return m
}

func TestGoldenTimeline100x30(t *testing.T) {
	golden.RequireEqual(t, []byte(seen(timelineModel(t, 100, 30))))
}

func TestGoldenTimeline60x20(t *testing.T) {
	golden.RequireEqual(t, []byte(seen(timelineModel(t, 60, 20))))
}

// TestTimelineTabShowsTheStory: the picture falls from 3 to 0 after the revision mark and the
// onset, and the list names the moments, within the width.
func TestTimelineTabShowsTheStory(t *testing.T) {
	for _, size := range [][2]int{{100, 30}, {60, 20}, {30, 10}} {
		m := timelineModel(t, size[0], size[1])
		v := seen(m)
		if m.diagnosis.tab != tabTimeline {
			t.Fatalf("tab = %d, want the Timeline tab", m.diagnosis.tab)
		}
		for _, l := range strings.Split(v, "\n") {
			if ansi.StringWidth(l) > size[0] {
				t.Fatalf("%dx%d: line %q is wider than the terminal", size[0], size[1], l)
			}
		}
		if size[0] < 60 {
			continue
		}
		var strip, marks string
		for _, l := range strings.Split(v, "\n") {
			switch {
			case strings.HasPrefix(l, "serve 3"):
				strip = strings.TrimPrefix(l, "serve 3")
			case strings.HasPrefix(l, "marks"):
				marks = strings.TrimPrefix(l, "marks")
			}
		}
		strip = strings.TrimSpace(strip)
		if !strings.HasPrefix(strip, "█") || !strings.HasSuffix(strip, "·") || !strings.Contains(strip, "█·") {
			t.Errorf("%dx%d: the serving strip does not fall from full to nothing: %q", size[0], size[1], strip)
		}
		ri, oi, fi := strings.IndexRune(marks, 'R'), strings.IndexRune(marks, '!'), strings.IndexRune(marks, '▼')
		if ri < 0 || oi < 0 || fi < 0 || ri > oi || oi > fi {
			t.Errorf("%dx%d: marks %q, want the revision, then the onset, then the fall", size[0], size[1], marks)
		}
		content := strings.Join(m.diagnosis.ds.timelineLines(m.diagnosis.styles, m.diagnosis.diag, size[0]), "\n")
		for _, want := range []string{"revision 2 rolled out", "the failure began", "serving fell 3→0"} {
			if !strings.Contains(content, want) {
				t.Errorf("%dx%d: no %q on the tab", size[0], size[1], want)
			}
		}
	}
}

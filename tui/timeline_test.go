package tui

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/metrics"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// timelineModel opens the ready-then-fails fixture (a revision Ready for minutes that failed from
// its first second) with the real engine, on the Timeline tab.
func timelineModel(t *testing.T, w, h int) *Model {
	t.Helper()
	return timelineModelWith(t, w, h, nil)
}

// timelineModelWith is timelineModel with the snapshot changed by edit before the engine runs.
func timelineModelWith(t *testing.T, w, h int, edit func(*snapshot.Snapshot)) *Model {
	t.Helper()
	snap, err := dump.Read(filepath.Join("..", "testdata", "fixtures", "ready-then-fails", "dump"), nil)
	if err != nil {
		t.Fatal(err)
	}
	snap.ReferenceTime = time.Date(2026, 11, 30, 14, 6, 0, 0, time.UTC)
	if edit != nil {
		edit(snap)
	}
	rep := diagnose.Diagnose(snap)
	m := New(context.Background(), Options{Source: staticSource{snap: snap}, SourceLabel: "dump", AllNamespaces: true},
		unicodeTestStyles(), func() time.Time { return snap.ReferenceTime })
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

// withIngestMetrics gives the fixture's ingester the series a Prometheus would answer for its
// annotation's query: 1,240 readings/s every 30s from 13:50 until its copies began failing
// at 13:58:24, nothing since.
func withIngestMetrics(snap *snapshot.Snapshot) {
	start, end, step := time.Date(2026, 11, 30, 13, 50, 0, 0, time.UTC), snap.ReferenceTime, 30*time.Second
	var samples []snapshot.Sample
	for at := start; !at.After(end); at = at.Add(step) {
		v := 1240.0
		if at.After(time.Date(2026, 11, 30, 13, 58, 24, 0, time.UTC)) {
			v = 0
		}
		samples = append(samples, snapshot.Sample{Time: at, Value: v})
	}
	q := `sum(rate(readings_accepted_total{namespace="fixture-ready-then-fails",pod=~"telemetry-ingester-.*"}[2m]))`
	snap.Metrics = &snapshot.Metrics{Source: "http://127.0.0.1:9090", Series: []snapshot.MetricSeries{{
		Workload: snapshot.ObjectKey{Kind: "Deployment", Namespace: "fixture-ready-then-fails", Name: "telemetry-ingester"},
		Role:     snapshot.RoleThroughput, Origin: snapshot.OriginAnnotation,
		Template: `sum(rate(readings_accepted_total{namespace="$namespace",pod=~"$pods"}[2m]))`, Query: q,
		Unit: "readings/s", Start: start, End: end, Step: step, Samples: samples,
	}}}
}

func TestGoldenTimelineThroughput100x30(t *testing.T) {
	golden.RequireEqual(t, []byte(seen(timelineModelWith(t, 100, 30, withIngestMetrics))))
}

func TestGoldenTimelineThroughput60x20(t *testing.T) {
	golden.RequireEqual(t, []byte(seen(timelineModelWith(t, 60, 20, withIngestMetrics))))
}

func TestGoldenTimelineThroughput40x12(t *testing.T) {
	golden.RequireEqual(t, []byte(seen(timelineModelWith(t, 40, 12, withIngestMetrics))))
}

// TestTimelineThroughputAfterTheSnapshot: samples read after the snapshot's time (a live
// console reads Prometheus after the watch's snapshot) move the right edge to the newest one
// instead of piling up in the last column.
func TestTimelineThroughputAfterTheSnapshot(t *testing.T) {
	v := seen(timelineModelWith(t, 100, 30, func(s *snapshot.Snapshot) {
		withIngestMetrics(s)
		m := &s.Metrics.Series[0]
		for i := range 4 {
			m.Samples = append(m.Samples, snapshot.Sample{Time: m.End.Add(time.Duration(i+1) * 30 * time.Second), Value: 0})
		}
		m.End = m.Samples[len(m.Samples)-1].Time
	}))
	if !strings.Contains(v, "→ 11-30 14:08:00") {
		t.Errorf("the range does not end at the newest sample, 14:08:00:\n%s", v)
	}
}

// TestTimelineThroughputStrip: with a series, the Timeline tab draws it under the serving strip
// on the same time axis (full output before the revision mark, nothing at the right edge, the
// fall at the column of the first empty sample, 13:58:30, on the range the header states),
// names its unit, its query and where the query came from; without one there is no such strip.
func TestTimelineThroughputStrip(t *testing.T) {
	const label = 9
	for _, size := range [][2]int{{100, 30}, {60, 20}, {140, 40}} {
		w := size[0]
		v := seen(timelineModelWith(t, size[0], size[1], withIngestMetrics))
		lines := strings.Split(v, "\n")
		var out, marks []rune
		for _, l := range lines {
			if ansi.StringWidth(l) > w {
				t.Fatalf("%dx%d: line %q is wider than the terminal", w, size[1], l)
			}
			switch {
			case strings.HasPrefix(l, "out 1.2k "):
				out = []rune(l)[label:]
			case strings.HasPrefix(l, "marks"):
				marks = []rune(l)[label:]
			}
		}
		if out == nil {
			t.Fatalf("%dx%d: no throughput strip:\n%s", w, size[1], v)
		}
		var from, to string
		if _, err := fmt.Sscanf(lines[4], "11-30 %s → 11-30 %s", &from, &to); err != nil {
			t.Fatalf("%dx%d: no range on %q: %v", w, size[1], lines[4], err)
		}
		start, _ := time.Parse("15:04:05", from)
		end, _ := time.Parse("15:04:05", to)
		zeroAt, _ := time.Parse("15:04:05", "13:58:30")
		cols := w - label
		want := int(float64(zeroAt.Sub(start)) / float64(end.Sub(start)) * float64(cols-1))
		fall := strings.IndexRune(string(out), '·')
		fall = len([]rune(string(out)[:max(fall, 0)]))
		if fall < want-1 || fall > want+1 {
			t.Errorf("%dx%d: output falls at column %d, want %d (13:58:30 on %s → %s):\n%s", w, size[1], fall, want, from, to, string(out))
		}
		rev := strings.IndexRune(string(marks), 'R')
		rev = len([]rune(string(marks)[:max(rev, 0)]))
		if rev <= 0 || strings.Trim(string(out[:rev]), "█") != "" || strings.TrimRight(string(out[fall:]), "·") != "" {
			t.Errorf("%dx%d: want full output up to the revision mark (column %d) and nothing after the fall:\n%s\n%s", w, size[1], rev, string(out), string(marks))
		}
		for _, want := range []string{"readings/s", "the workload's annotation", "query    sum(rate(readings_accepted_total"} {
			if !strings.Contains(v, want) {
				t.Errorf("%dx%d: no %q on the tab:\n%s", w, size[1], want, v)
			}
		}
		if w >= 100 && !strings.Contains(v, "on http://127.0.0.1:9090") {
			t.Errorf("%dx%d: the server asked is not named:\n%s", w, size[1], v)
		}
	}
	if v := seen(timelineModel(t, 100, 30)); strings.Contains(v, "out ") || strings.Contains(v, "query ") {
		t.Errorf("a throughput strip without metrics:\n%s", v)
	}
}

// TestTimelineGrowsWithTheWatch: on a live cluster the Timeline tab redraws from each snapshot
// the watch publishes. The first shows the fixture's story; the second, a minute later, has a
// copy whose container exited and restarted, and the tab, left open, gains the restart, in
// words and as a mark, without a key pressed.
func TestTimelineGrowsWithTheWatch(t *testing.T) {
	read := func(at time.Time) *snapshot.Snapshot {
		snap, err := dump.Read(filepath.Join("..", "testdata", "fixtures", "ready-then-fails", "dump"), nil)
		if err != nil {
			t.Fatal(err)
		}
		snap.ReferenceTime = at
		return snap
	}
	first := read(time.Date(2026, 11, 30, 14, 6, 0, 0, time.UTC))
	second := read(time.Date(2026, 11, 30, 14, 7, 0, 0, time.UTC))
	restarted := false
	for i := range second.Pods {
		p := second.Pods[i]
		if p.Name != "telemetry-ingester-c575c6b7c-4thrw" {
			continue
		}
		cs := &p.Status.ContainerStatuses[0]
		was := cs.State.Running.StartedAt
		exited := metav1.NewTime(time.Date(2026, 11, 30, 14, 6, 40, 0, time.UTC))
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 1, Reason: "Error", StartedAt: was, FinishedAt: exited, ContainerID: cs.ContainerID,
		}}
		cs.State.Running.StartedAt = metav1.NewTime(exited.Add(time.Second))
		cs.RestartCount = 1
		restarted = true
	}
	if !restarted {
		t.Fatal("the fixture lost its pod telemetry-ingester-c575c6b7c-4thrw")
	}

	snaps := make(chan *snapshot.Snapshot, 1)
	watch := func(context.Context, snapshot.WatchHooks) (<-chan *snapshot.Snapshot, <-chan error) {
		return snaps, nil
	}
	m := New(context.Background(), Options{Source: staticSource{snap: first}, SourceLabel: "live", AllNamespaces: true, Watch: watch},
		unicodeTestStyles(), func() time.Time { return second.ReferenceTime })
	m.Update(windowSize(100, 30))
	next := m.startWatch(watch)
	deliver := func(s *snapshot.Snapshot) {
		t.Helper()
		snaps <- s
		msg, ok := next().(watchMsg)
		if !ok || msg.data == nil {
			t.Fatalf("the watch delivered %#v, want a snapshot", msg)
		}
		_, next = m.Update(msg)
	}
	markLine := func(v string) string {
		for _, l := range strings.Split(v, "\n") {
			if strings.HasPrefix(l, "marks") {
				return l
			}
		}
		t.Fatalf("no marks line:\n%s", v)
		return ""
	}

	deliver(first)
	press(m, "enter", "6")
	v := seen(m)
	if m.diagnosis.tab != tabTimeline || !strings.Contains(v, "the failure began") {
		t.Fatalf("the Timeline tab is not open on the first snapshot:\n%s", v)
	}
	restart := UnicodeGlyphs.Marks[diagnose.TimelineRestart]
	if strings.Contains(v, "newest termination") || strings.ContainsRune(markLine(v), restart) {
		t.Fatalf("a restart before any copy restarted:\n%s", v)
	}

	deliver(second)
	v = seen(m)
	if m.screen != screenDiagnosis || m.diagnosis.tab != tabTimeline {
		t.Fatalf("the new snapshot moved the console off the Timeline tab:\n%s", v)
	}
	if !strings.Contains(v, "11-30 14:06:40 restart") || !strings.Contains(v, "newest termination") {
		t.Errorf("the restart of the second snapshot is not on the tab:\n%s", v)
	}
	if !strings.ContainsRune(markLine(v), restart) {
		t.Errorf("no restart mark on the picture: %q", markLine(v))
	}
	if !strings.Contains(v, "→ 11-30 14:07:00") {
		t.Errorf("the range does not end at the new snapshot's time:\n%s", v)
	}
	m.stopWatch()
}

// TestTimelineSaysTheMetricsWereNotRead: with Prometheus unreachable the strip's place says so
// and why, so an absent strip is not read as "no output"; a namespace's entry is not the
// server's and leaves the place empty.
func TestTimelineSaysTheMetricsWereNotRead(t *testing.T) {
	down := "http://127.0.0.1:9090: Get \"http://127.0.0.1:9090/api/v1/query_range\": dial tcp 127.0.0.1:9090: connect: connection refused; throughput and backlog not read"
	v := seen(timelineModelWith(t, 100, 30, func(s *snapshot.Snapshot) {
		s.Visibility = append(s.Visibility, snapshot.Visibility{Kind: metrics.VisibilityKind, Reason: down})
	}))
	if !regexp.MustCompile(`(?m)^out      not read: http://127\.0\.0\.1:9090: .*…$`).MatchString(v) {
		t.Errorf("no notice where the throughput strip stands:\n%s", v)
	}
	v = seen(timelineModelWith(t, 100, 30, func(s *snapshot.Snapshot) {
		s.Visibility = append(s.Visibility, snapshot.Visibility{
			Kind: metrics.VisibilityKind, Namespace: "other",
			Reason: "throughput query of deployment/other refused: bad_data: parse error",
		})
	}))
	if strings.Contains(v, "out      not read") {
		t.Errorf("another workload's refused query is shown as this one's:\n%s", v)
	}
}

// TestTimelineThroughputLabelKeepsTheAxis: a peak too wide for the label column leaves the
// label, so the strip still starts in the serving strip's first column.
func TestTimelineThroughputLabelKeepsTheAxis(t *testing.T) {
	v := seen(timelineModelWith(t, 100, 30, func(s *snapshot.Snapshot) {
		withIngestMetrics(s)
		for i := range s.Metrics.Series[0].Samples {
			s.Metrics.Series[0].Samples[i].Value *= 800 // a peak of 992,000: "992.0k"
		}
	}))
	var serve, out []rune
	for _, l := range strings.Split(v, "\n") {
		switch {
		case strings.HasPrefix(l, "serve 3"):
			serve = []rune(l)
		case strings.HasPrefix(l, "out ") && out == nil:
			out = []rune(l)
		}
	}
	if serve == nil || out == nil || len(out) < 10 {
		t.Fatalf("no serving or throughput strip:\n%s", v)
	}
	if strings.TrimSpace(string(out[:9])) != "out" || out[8] != ' ' || out[9] != '█' || serve[9] != '█' {
		t.Errorf("the throughput strip does not start in the serving strip's first column:\n%s\n%s", string(serve), string(out))
	}
	if !strings.Contains(v, "peak 992.0k") {
		t.Errorf("the legend does not name the peak:\n%s", v)
	}
}

// TestTimelineBacklogStrip: a backlog series is drawn under the output, on the same axis:
// where the output stops, the queue starts to grow, and its legend says it is rising.
func TestTimelineBacklogStrip(t *testing.T) {
	v := seen(timelineModelWith(t, 100, 30, func(s *snapshot.Snapshot) {
		withIngestMetrics(s)
		tp := s.Metrics.Series[0]
		var samples []snapshot.Sample
		depth := 0.0
		for _, x := range tp.Samples {
			if x.Value == 0 {
				depth += 40
			}
			samples = append(samples, snapshot.Sample{Time: x.Time, Value: depth})
		}
		s.Metrics.Series = append(s.Metrics.Series, snapshot.MetricSeries{
			Workload: tp.Workload, Role: snapshot.RoleBacklog, Origin: snapshot.OriginAnnotation,
			Template: `sum(ingest_queue_depth{namespace="$namespace",pod=~"$pods"})`,
			Query:    `sum(ingest_queue_depth{namespace="fixture-ready-then-fails",pod=~"telemetry-ingester-.*"})`,
			Unit:     "readings", Start: tp.Start, End: tp.End, Step: tp.Step, Samples: samples,
		})
	}))
	var out, backlog []rune
	for _, l := range strings.Split(v, "\n") {
		switch {
		case strings.HasPrefix(l, "out 1.2k "):
			out = []rune(l)[9:]
		case strings.HasPrefix(l, "backlog  "):
			backlog = []rune(l)[9:]
		}
	}
	if out == nil || backlog == nil {
		t.Fatalf("want an output and a backlog strip:\n%s", v)
	}
	fall := strings.IndexRune(string(out), '·')
	fall = len([]rune(string(out)[:max(fall, 0)]))
	rise := strings.IndexFunc(string(backlog), func(r rune) bool { return r != '·' })
	rise = len([]rune(string(backlog)[:max(rise, 0)]))
	if fall <= 0 || rise != fall || backlog[len(backlog)-1] != '█' {
		t.Errorf("the output falls at column %d, the backlog rises at %d, want the same, growing to the top:\n%s\n%s", fall, rise, string(out), string(backlog))
	}
	for _, want := range []string{"backlog = readings, rising, from the workload's annotation", "query    sum(ingest_queue_depth"} {
		if !strings.Contains(v, want) {
			t.Errorf("no %q on the tab:\n%s", want, v)
		}
	}
}

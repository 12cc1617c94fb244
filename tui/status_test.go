package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// liveModel is a console on a live cluster whose first read has not come back.
func liveModel(t *testing.T) *Model {
	t.Helper()
	snap, _ := fixture()
	watch := func(context.Context, snapshot.WatchHooks) (<-chan *snapshot.Snapshot, <-chan error) {
		return nil, nil
	}
	m := fixtureModel(Options{Source: staticSource{snap: snap}, SourceLabel: "live", Watch: watch})
	m.Update(windowSize(120, 30))
	// Init starts the watch, which reads first; its Cmd is not run, as when the server hangs.
	_ = m.Init()
	return m
}

func TestLiveHeaderSaysConnectingUntilTheFirstRead(t *testing.T) {
	m := liveModel(t)
	s := seen(m)
	if strings.Contains(s, "● live") || strings.Contains(s, "stale") || !strings.Contains(s, "connecting") {
		t.Fatalf("while the first read hangs the header should say connecting, not live:\n%s", s)
	}
	m.Update(loadProgressMsg{gen: m.gen, seq: m.seq, what: "pods", n: 500})
	if s := seen(m); strings.Contains(s, "● live") || !strings.Contains(s, "○ reading") {
		t.Fatalf("while the first read runs the header should say reading:\n%s", s)
	}
	snap, rep := fixture()
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	if s := seen(m); !strings.Contains(s, "● live") || strings.Contains(s, "connecting") {
		t.Fatalf("after the first read the header should say live:\n%s", s)
	}
}

func TestLiveHeaderSaysWhatFailedWhenNothingWasRead(t *testing.T) {
	m := liveModel(t)
	m.Update(watchMsg{gen: m.gen, err: errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")})
	s := seen(m)
	if strings.Contains(s, "stale") || strings.Contains(s, "● live") {
		t.Fatalf("with nothing ever read the header should not say stale or live:\n%s", s)
	}
	if !strings.Contains(s, "✕ nothing read yet") || !strings.Contains(s, "connection refused") {
		t.Fatalf("the header does not say what failed:\n%s", s)
	}
	// The first load failing says so too, in the header as in the body.
	m = liveModel(t)
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, err: errors.New("the server has asked for the client to provide credentials")})
	if s := seen(m); !strings.Contains(s, "✕ nothing read yet") || strings.Contains(s, "connecting") {
		t.Fatalf("a failed first load leaves the header at:\n%s", s)
	}
	// Once a snapshot is in, a failure is staleness again.
	snap, rep := fixture()
	m.Update(watchMsg{gen: m.gen, data: datasetOf(snap, rep)})
	m.Update(watchMsg{gen: m.gen, err: errors.New("connection refused")})
	if s := seen(m); !strings.Contains(s, "▲ stale") {
		t.Fatalf("a failure after a snapshot is not shown as stale:\n%s", s)
	}
}

func TestRefreshOnADumpSaysADumpDoesNotChange(t *testing.T) {
	snap, rep := fixture()
	snap.Source = snapshot.SourceInfo{Type: snapshot.SourceDump, Path: "incident/"}
	m := New(context.Background(), Options{Source: staticSource{snap: snap}, SourceLabel: "dump"}, testStyles(),
		func() time.Time { return refTime })
	m.Update(windowSize(100, 24))
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	press(m, "r")
	// The re-read of a dump takes no time to see.
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	if s := seen(m); !strings.Contains(s, "a dump does not change") {
		t.Fatalf("r on a dump gave no notice:\n%s", s)
	}
	// A live console's r is a refresh, with no such notice.
	m = liveModel(t)
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	press(m, "r")
	if !m.refreshing {
		t.Fatal("r on a live cluster did not refresh")
	}
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	if s := seen(m); strings.Contains(s, "does not change") {
		t.Fatalf("r on a live cluster says it does not change:\n%s", s)
	}
}

// A refresh of a live cluster that fails (the server stopped halfway through its lists) keeps
// the picture: the watch says whether it is stale and brings it back by itself.
func TestFailedRefreshOfALiveClusterKeepsThePicture(t *testing.T) {
	m := liveModel(t)
	snap, rep := fixture()
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	press(m, "r")
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, err: errors.New("cannot reach the API server at 127.0.0.1:6443: unexpected EOF")})
	s := seen(m)
	if m.state != stateReady || !strings.Contains(s, "telemetry-ingester") || strings.Contains(s, "could not read the snapshot") {
		t.Fatalf("a failed live refresh replaced the picture (state %v):\n%s", m.state, s)
	}
	if !strings.Contains(s, "refresh failed") || !strings.Contains(s, "unexpected EOF") {
		t.Fatalf("a failed live refresh is not said:\n%s", s)
	}
}

// TestFooterSaysTheThroughputInterval: the footer names how often the throughput is read again
// only on a live cluster with metrics configured: never for a dump with metrics, never live
// without them; and on every screen of a live console with them.
func TestFooterSaysTheThroughputInterval(t *testing.T) {
	watch := func(context.Context, snapshot.WatchHooks) (<-chan *snapshot.Snapshot, <-chan error) {
		return nil, nil
	}
	footer := func(m *Model) string {
		lines := strings.Split(seen(m), "\n")
		return lines[len(lines)-1]
	}
	open := func(opts Options) *Model {
		m := fixtureModel(opts)
		m.Update(windowSize(120, 30))
		snap, rep := fixture()
		m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
		if !strings.Contains(seen(m), "telemetry-ingester") {
			t.Fatalf("the console shows no workloads:\n%s", seen(m))
		}
		return m
	}
	for _, tt := range []struct {
		name string
		opts Options
		want string
	}{
		{"live with metrics", Options{SourceLabel: "live", Watch: watch, MetricsRefresh: 30 * time.Second}, "throughput every 30s"},
		{"live, another interval", Options{SourceLabel: "live", Watch: watch, MetricsRefresh: 5 * time.Minute}, "throughput every 5m"},
		{"live without metrics", Options{SourceLabel: "live", Watch: watch}, ""},
		{"dump with metrics", Options{SourceLabel: "dump", MetricsRefresh: 30 * time.Second}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := open(tt.opts)
			for _, keys := range [][]string{nil, {"enter", "6"}, {"?"}} {
				press(m, keys...)
				f := footer(m)
				if tt.want == "" && strings.Contains(f, "throughput every") {
					t.Errorf("after %v the footer names an interval: %q", keys, f)
				}
				if tt.want != "" && (!strings.Contains(f, tt.want) || !strings.Contains(f, "q quit")) {
					t.Errorf("after %v the footer is %q, want the keys and %q", keys, f, tt.want)
				}
			}
		})
	}
	// A terminal too narrow for both keeps the keys.
	m := open(Options{SourceLabel: "live", Watch: watch, MetricsRefresh: 30 * time.Second})
	m.Update(windowSize(30, 10))
	if f := footer(m); strings.Contains(f, "throughput") || ansi.StringWidth(f) > 30 {
		t.Errorf("30 columns wide the footer is %q", f)
	}
}

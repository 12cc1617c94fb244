package tui

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// countingSource is a source that counts its reads; a watched console must not read it.
type countingSource struct {
	snap  *snapshot.Snapshot
	reads *atomic.Int32
}

func (c countingSource) Snapshot(context.Context) (*snapshot.Snapshot, error) {
	c.reads.Add(1)
	return c.snap, nil
}

// stagedWatch is a live watch whose first read the test steps through: progress, then the
// workloads alone, then the snapshot.
type stagedWatch struct {
	rows, snap chan struct{}
	full       *snapshot.Snapshot
}

func newStagedWatch(full *snapshot.Snapshot) *stagedWatch {
	return &stagedWatch{rows: make(chan struct{}), snap: make(chan struct{}), full: full}
}

func (w *stagedWatch) watch(ctx context.Context, hooks snapshot.WatchHooks) (<-chan *snapshot.Snapshot, <-chan error) {
	out := make(chan *snapshot.Snapshot, 1)
	go func() {
		select {
		case <-w.rows:
		case <-ctx.Done():
			return
		}
		hooks.Progress("deployments", len(w.full.Deployments))
		hooks.Progress("pods", 12400)
		hooks.Rows(&snapshot.Snapshot{ReferenceTime: w.full.ReferenceTime, Deployments: w.full.Deployments})
		select {
		case <-w.snap:
			out <- w.full
		case <-ctx.Done():
		}
	}()
	return out, nil
}

// On a live cluster the console reads through its watch alone: the first frame already says
// what it is reading and for how long, keys typed meanwhile apply to the table once rows come,
// rows come as soon as the workloads are listed, and the source is never read a second time.
func TestFlowLiveConsoleListsRowsBeforeTheirShapesAndTakesKeysMeanwhile(t *testing.T) {
	snap, _ := fixture()
	reads := &atomic.Int32{}
	w := newStagedWatch(snap)
	m := fixtureModel(Options{Source: countingSource{snap: snap, reads: reads}, SourceLabel: "live", Watch: w.watch})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 30))
	waitFor(t, tm, "reading… · 0s")
	// Typed before anything was read: a filter for the worker.
	tm.Type("/worker")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "/worker")
	close(w.rows)
	// The filter typed before the rows came applies to them. (The output is read once: each
	// wait looks for a line drawn after the previous one's.)
	waitFor(t, tm, "4 workloads listed · shapes follow their copies  1/1")
	// The header's progress line is redrawn with every spinner frame.
	waitFor(t, tm, "reading pods… 12,400 · 12,404 objects of 2 kinds")
	// Clearing the filter keeps the worker selected, last by name.
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
	waitFor(t, tm, "4/4")
	tm.Type("k")
	waitFor(t, tm, "3/4")
	// Enter on a row not diagnosed yet says so.
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "still reading")
	close(w.snap)
	waitFor(t, tm, "● live")
	tm.Type("q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(15*time.Second)).(*Model)
	if fm.data == nil || fm.data.partial {
		t.Fatal("the console ended without the diagnosed snapshot")
	}
	if sel := fm.workloads.Selected(); sel == nil || sel.diag == nil {
		t.Fatal("the selected row has no diagnosis after the snapshot")
	}
	if n := reads.Load(); n != 0 {
		t.Errorf("the source was read %d times besides the watch, want 0", n)
	}
}

// The watch's informers fill their caches after the console's first diagnosis, not on the
// same cores during it: the console holds them (snapshot.WatchHooks.Hold) until the first
// snapshot is diagnosed, then lets them go.
func TestTheWatchFollowsChangesOnceTheFirstSnapshotIsDiagnosed(t *testing.T) {
	snap, rep := fixture()
	var held <-chan struct{}
	out := make(chan *snapshot.Snapshot, 1)
	watch := func(_ context.Context, hooks snapshot.WatchHooks) (<-chan *snapshot.Snapshot, <-chan error) {
		held = hooks.Hold
		return out, nil
	}
	m := fixtureModel(Options{SourceLabel: "live", Watch: watch})
	diagnoses, releasedWhileDiagnosing := 0, false
	m.diagnose = func(*snapshot.Snapshot) *diagnose.Report {
		diagnoses++
		select {
		case <-held:
			releasedWhileDiagnosing = true
		default:
		}
		return rep
	}
	cmd := m.startWatch(watch)
	out <- snap
	msg, ok := cmd().(watchMsg)
	if !ok || msg.data == nil {
		t.Fatalf("the watch's first message is %#v, want its diagnosed snapshot", msg)
	}
	if held == nil {
		t.Fatal("the console's watch is not held: its informers would start during the first diagnosis")
	}
	if diagnoses != 1 || releasedWhileDiagnosing {
		t.Fatalf("%d diagnoses, released during one: %v; want the hold kept through the first", diagnoses, releasedWhileDiagnosing)
	}
	select {
	case <-held:
		t.Fatal("the hold was released before the console took the first diagnosis: the informers would fill their caches while its frame is drawn")
	default:
	}
	_, next := m.Update(msg)
	if next == nil {
		t.Fatal("no command after the first diagnosis: the watch is not waited on")
	}
	// The watch's next wait, which blocks (nothing more is sent), releases the hold meanwhile.
	go next()
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the hold was not released after the first diagnosis was on screen: the watch would never follow changes")
	}
	m.Update(watchMsg{gen: m.gen, data: msg.data, stream: msg.stream})
	if msg.stream.diagnosed != nil {
		t.Error("the stream still holds its release after the first diagnosis: every snapshot would arm another")
	}
}

func TestRowsBeforeTheSnapshotHaveNoShapeAndKeepTheSelection(t *testing.T) {
	snap, rep := fixture()
	m := fixtureModel(Options{SourceLabel: "live"})
	m.Update(windowSize(120, 30))
	early := rowsDataset(&snapshot.Snapshot{ReferenceTime: snap.ReferenceTime, Deployments: snap.Deployments}, nil)
	m.Update(rowsMsg{gen: m.gen, data: early, stream: &watchStream{progress: newReadCounter(), rows: make(chan *snapshot.Snapshot, 1)}})
	s := seen(m)
	if !strings.Contains(s, "reading…") || strings.Contains(s, "never-starts") || strings.Contains(s, "live-but-idle") {
		t.Fatalf("rows before the snapshot should have no shape:\n%s", s)
	}
	// The rows are in name order; select the worker.
	for i := 0; i < 4 && m.workloads.Selected().key.Name != "telemetry-worker"; i++ {
		press(m, "j")
	}
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	if sel := m.workloads.Selected(); sel == nil || sel.key.Name != "telemetry-worker" || sel.diag == nil {
		t.Fatalf("the selection did not follow the worker into the diagnosed rows: %+v", sel)
	}
	// Rows arriving late never replace a diagnosed picture.
	m.Update(rowsMsg{gen: m.gen, data: early, stream: &watchStream{progress: newReadCounter(), rows: make(chan *snapshot.Snapshot, 1)}})
	if m.data.partial {
		t.Fatal("early rows replaced the diagnosed snapshot")
	}
}

// A watch whose first read fails shows the error, as a failed load did, and the console exits
// non-zero when nothing was read.
func TestAFailedFirstWatchReadIsTheErrorState(t *testing.T) {
	m := fixtureModel(Options{SourceLabel: "live"})
	m.Update(windowSize(100, 20))
	m.Update(watchMsg{gen: m.gen, err: errors.New("cannot reach the API server at 10.0.0.1:6443: connection refused"), stream: &watchStream{progress: newReadCounter()}})
	if m.state != stateError || m.loadErr == nil {
		t.Fatalf("state %v, loadErr %v; want the error state", m.state, m.loadErr)
	}
	if s := seen(m); !strings.Contains(s, "could not read the snapshot") || !strings.Contains(s, "connection refused") {
		t.Fatalf("the error is not on screen:\n%s", s)
	}
}

// Rows listed before a failed read are no diagnosis: the failure is kept for the exit status,
// and the header says nothing was read.
func TestAFailedReadAfterTheRowsKeepsThemAndTheFailure(t *testing.T) {
	snap, _ := fixture()
	m := fixtureModel(Options{SourceLabel: "live", Watch: newStagedWatch(snap).watch})
	m.Update(windowSize(120, 30))
	_ = m.Init()
	st := &watchStream{progress: newReadCounter(), rows: make(chan *snapshot.Snapshot, 1)}
	m.Update(rowsMsg{gen: m.gen, data: rowsDataset(&snapshot.Snapshot{ReferenceTime: snap.ReferenceTime, Deployments: snap.Deployments}, nil), stream: st})
	m.Update(watchMsg{gen: m.gen, err: errors.New("cannot reach the API server at 10.0.0.1:6443: connection refused"), stream: st})
	if m.loadErr == nil || m.data == nil || m.state != stateReady {
		t.Fatalf("state %v, loadErr %v, rows %v; want the rows kept and the failure recorded", m.state, m.loadErr, m.data != nil)
	}
	if s := seen(m); !strings.Contains(s, "✕ nothing read yet") || !strings.Contains(s, "telemetry-worker") {
		t.Fatalf("the header should say nothing was read, over the rows:\n%s", s)
	}
}

// Help opens while nothing is read yet, and closes again onto the progress line.
func TestHelpOpensWhileTheFirstReadRuns(t *testing.T) {
	snap, _ := fixture()
	m := fixtureModel(Options{SourceLabel: "live", Watch: newStagedWatch(snap).watch})
	m.Update(windowSize(120, 30))
	_ = m.Init()
	press(m, "?")
	if s := seen(m); !strings.Contains(s, "General") || strings.Contains(s, "reading… ·") {
		t.Fatalf("? while reading should show the help:\n%s", s)
	}
	press(m, "esc")
	if s := seen(m); !strings.Contains(s, "reading… ·") {
		t.Fatalf("esc should close the help onto the progress line:\n%s", s)
	}
}

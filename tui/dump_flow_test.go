package tui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// gatedDump reads a real dump directory with the console's hooks, held at two points the test
// opens: before the read starts, and in the hand-over of the workloads, which holds the read
// as a dump far larger than the test's would hold it while its pods are read.
type gatedDump struct {
	src         dump.Source
	start, rest chan struct{}
	once        sync.Once
	mu          sync.Mutex
	ctx         context.Context
}

func newGatedDump(t *testing.T, path string) *gatedDump {
	g := &gatedDump{src: dump.Source{Path: path}, start: make(chan struct{}), rest: make(chan struct{})}
	t.Cleanup(g.release)
	return g
}

// release lets the read go on past the hand-over.
func (g *gatedDump) release() { g.once.Do(func() { close(g.rest) }) }

func (g *gatedDump) Snapshot(ctx context.Context) (*snapshot.Snapshot, error) {
	return g.SnapshotWithRows(ctx, nil, nil)
}

func (g *gatedDump) SnapshotWithProgress(ctx context.Context, progress func(string, int)) (*snapshot.Snapshot, error) {
	return g.SnapshotWithRows(ctx, progress, nil)
}

func (g *gatedDump) SnapshotWithRows(ctx context.Context, progress func(string, int), rows func(*snapshot.Snapshot)) (*snapshot.Snapshot, error) {
	g.mu.Lock()
	g.ctx = ctx
	g.mu.Unlock()
	select {
	case <-g.start:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.src.SnapshotWithRows(ctx, progress, func(s *snapshot.Snapshot) {
		rows(s)
		select {
		case <-g.rest:
		case <-ctx.Done():
		}
	})
}

// readContext is the context the console's load read under.
func (g *gatedDump) readContext() context.Context {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ctx
}

var _ RowsSource = (*gatedDump)(nil)

const mixedDump = "../testdata/scenarios/dev-mixed/dump"

// On a dump the console lists the workloads as soon as their lists are read, with the read's
// progress, takes every key meanwhile, and fills the shapes in once the pods and events are
// read and the engine (the real one) has run.
func TestFlowDumpConsoleListsRowsBeforeTheirShapesAndTakesKeysMeanwhile(t *testing.T) {
	g := newGatedDump(t, mixedDump)
	m := New(context.Background(), Options{Source: g, SourceLabel: "dump", AllNamespaces: true}, testStyles(), func() time.Time { return refTime })
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(140, 30))
	// The first frame says what is read and for how long.
	waitFor(t, tm, "reading… · 0s")
	tm.Type("/check")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "/check")
	close(g.start)
	// The filter typed before the rows came applies to them; the header counts what was read
	// when the workloads were handed over.
	waitFor(t, tm, "3 workloads listed · shapes follow their copies  1/1")
	waitFor(t, tm, "objects of")
	// Clearing the filter keeps checkout selected, second by name.
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
	waitFor(t, tm, "2/3")
	tm.Type("k")
	waitFor(t, tm, "1/3")
	tm.Type("j")
	waitFor(t, tm, "2/3")
	// Enter on a row not diagnosed yet says so.
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "still reading")
	tm.Type("h")
	waitFor(t, tm, "healthy hidden")
	tm.Type("h")
	tm.Type("?")
	waitFor(t, tm, "General")
	tm.Type("?")
	waitFor(t, tm, "2/3")
	g.release()
	// The engine's shapes replace "reading…", and the selection stays on its workload.
	waitFor(t, tm, "progressing")
	tm.Type("q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(15*time.Second)).(*Model)
	if fm.data == nil || fm.data.partial || len(fm.data.rows) != 3 {
		t.Fatal("the console ended without the diagnosed dump")
	}
	for _, r := range fm.data.rows {
		if r.diag == nil {
			t.Errorf("row %s has no diagnosis after the read", r.workload)
		}
	}
	if sel := fm.workloads.Selected(); sel == nil || sel.key.Name != "checkout" {
		t.Errorf("selection %+v, want checkout, selected while the dump was read", sel)
	}
}

// With no key typed while a dump is read, the diagnosed rows open on the worst workload: the
// rows listed meanwhile are in name order, and the first of them (batch-exporter, healthy) is
// not the one an on-call engineer must see first (recommender, progressing). The page holds
// one row, so a selection kept on batch-exporter would hide recommender.
func TestFlowDumpConsoleOpensOnTheWorstWorkloadWhenNoRowWasPicked(t *testing.T) {
	g := newGatedDump(t, mixedDump)
	m := New(context.Background(), Options{Source: g, SourceLabel: "dump", AllNamespaces: true}, testStyles(), func() time.Time { return refTime })
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(140, m.chromeHeight()+2))
	close(g.start)
	waitFor(t, tm, "batch-exporter")
	g.release()
	waitFor(t, tm, "recommender")
	tm.Type("q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(15*time.Second)).(*Model)
	if fm.data == nil || fm.data.partial {
		t.Fatal("the console ended without the diagnosed dump")
	}
	if sel := fm.workloads.Selected(); sel == nil || sel.key.Name != "recommender" || fm.workloads.offset != 0 {
		t.Fatalf("selection %+v at offset %d, want recommender, the worst, at the top", sel, fm.workloads.offset)
	}
	if s := seen(fm); !strings.Contains(s, "recommender") || strings.Contains(s, "batch-exporter") {
		t.Fatalf("the screen should hold recommender alone:\n%s", s)
	}
}

// q while a dump is read quits at once and abandons the read.
func TestFlowDumpConsoleQuitsAtOnceWhileReading(t *testing.T) {
	g := newGatedDump(t, mixedDump)
	m := New(context.Background(), Options{Source: g, SourceLabel: "dump", AllNamespaces: true}, testStyles(), func() time.Time { return refTime })
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 30))
	waitFor(t, tm, "reading… · 0s")
	close(g.start)
	waitFor(t, tm, "shapes follow their copies")
	tm.Type("q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if fm.data == nil || !fm.data.partial {
		t.Fatal("the console should have quit over the rows, before the read ended")
	}
	// The abandoned read's cancel is no failure of the dump's (exit status 0).
	if fm.loadErr != nil {
		t.Errorf("quitting recorded the abandoned read as a failure: %v", fm.loadErr)
	}
	ctx := g.readContext()
	if ctx == nil || ctx.Err() == nil {
		t.Fatal("the read goes on after the console quit")
	}
	if !strings.Contains(fm.readingLine(), "reading") {
		t.Errorf("reading line %q after quitting mid-read", fm.readingLine())
	}
}

// A dump that fails after its workloads were listed shows the error over them, and the
// failure is kept for the exit status: rows are no diagnosis.
func TestAFailedDumpReadAfterTheRowsIsTheErrorState(t *testing.T) {
	snap, _ := fixture()
	m := fixtureModel(Options{SourceLabel: "dump"})
	m.Update(windowSize(120, 30))
	_ = m.Init()
	w := &loadWait{gen: m.gen, seq: m.seq, prog: newReadCounter(), rows: make(chan *snapshot.Snapshot, 1)}
	m.Update(rowsMsg{gen: m.gen, data: rowsDataset(&snapshot.Snapshot{ReferenceTime: snap.ReferenceTime, Deployments: snap.Deployments}, nil), load: w})
	if m.data == nil || !m.data.partial {
		t.Fatal("the early rows were not shown")
	}
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, err: errors.New(`read dump "d/pods.json": line 3: unexpected end of JSON input`)})
	if m.state != stateError || m.loadErr == nil {
		t.Fatalf("state %v, loadErr %v; want the error state", m.state, m.loadErr)
	}
	if s := seen(m); !strings.Contains(s, "unexpected end of JSON input") {
		t.Fatalf("the error is not on screen:\n%s", s)
	}
	// Rows of an older load are dropped.
	m.Update(rowsMsg{gen: m.gen, data: rowsDataset(&snapshot.Snapshot{}, nil), load: &loadWait{gen: m.gen, seq: m.seq - 1}})
	if len(m.data.rows) != len(snap.Deployments) {
		t.Errorf("rows of an older load replaced the current ones: %d rows", len(m.data.rows))
	}
}

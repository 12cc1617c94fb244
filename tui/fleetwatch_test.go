package tui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// fakeWatch is one context's watch in a test: the test sends its snapshots and errors.
type fakeWatch struct {
	snaps chan *snapshot.Snapshot
	errs  chan error
}

func newFakeWatch() *fakeWatch {
	return &fakeWatch{snaps: make(chan *snapshot.Snapshot, 1), errs: make(chan error, 1)}
}

func (w *fakeWatch) watch(context.Context, snapshot.WatchHooks) (<-chan *snapshot.Snapshot, <-chan error) {
	return w.snaps, w.errs
}

// pump runs a model's Cmds as bubbletea would, each in its own goroutine, and hands their
// messages back to the test's goroutine, which alone calls Update. Clock ticks are dropped, so
// nothing re-arms forever.
type pump struct {
	t    *testing.T
	m    *Model
	msgs chan tea.Msg
	wg   sync.WaitGroup
}

func (p *pump) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, c := range b {
				p.run(c)
			}
			return
		}
		switch msg.(type) {
		case nil, tickMsg, spinner.TickMsg:
			return
		}
		p.msgs <- msg
	}()
}

// until feeds messages to the model until cond holds.
func (p *pump) until(what string, cond func() bool) {
	p.t.Helper()
	deadline := time.After(5 * time.Second)
	for !cond() {
		select {
		case msg := <-p.msgs:
			_, cmd := p.m.Update(msg)
			p.run(cmd)
		case <-deadline:
			p.t.Fatalf("%s: not reached; the console shows\n%s", what, seen(p.m))
		}
	}
}

func rowsOf(m *Model, context string) []string {
	var out []string
	for _, r := range m.workloads.rows {
		if r.context == context {
			out = append(out, r.name+"="+string(r.shape))
		}
	}
	return out
}

func visibilityOf(m *Model) string {
	if m.data == nil {
		return ""
	}
	var out []string
	for _, v := range m.data.snap.Visibility {
		out = append(out, v.Reason)
	}
	return strings.Join(out, "\n")
}

// TestFleetFollowsEachContextsWatch: every context is its own watch. The first picture comes
// as soon as one context is read, while another has said nothing; a change in one context shows
// without r and leaves the others as they were; a context whose watch fails keeps its rows,
// marked stale, and one that never read shows as unreadable.
func TestFleetFollowsEachContextsWatch(t *testing.T) {
	reports := map[*snapshot.Snapshot]*diagnose.Report{}
	var mu sync.Mutex
	snapWith := func(drop int) *snapshot.Snapshot {
		snap, rep := fixture()
		rep.Workloads = rep.Workloads[:len(rep.Workloads)-drop]
		mu.Lock()
		reports[snap] = rep
		mu.Unlock()
		return snap
	}
	prod, staging, dead := newFakeWatch(), newFakeWatch(), newFakeWatch()
	opts := Options{SourceLabel: "live", Context: "prod,staging,dead", WatchFleet: []ContextWatch{
		{Context: "prod", Watch: prod.watch}, {Context: "staging", Watch: staging.watch}, {Context: "dead", Watch: dead.watch},
	}}
	m := New(context.Background(), opts, testStyles(), func() time.Time { return refTime })
	m.diagnose = func(s *snapshot.Snapshot) *diagnose.Report {
		mu.Lock()
		defer mu.Unlock()
		return reports[s]
	}
	m.rediagnose = nil
	m.Update(windowSize(140, 30))
	p := &pump{t: t, m: m, msgs: make(chan tea.Msg, 16)}
	p.run(m.Init())

	prod.snaps <- snapWith(0)
	p.until("prod's first picture while staging and dead say nothing", func() bool {
		return m.state == stateReady && len(rowsOf(m, "prod")) == 4
	})
	if v := visibilityOf(m); !strings.Contains(v, "context staging: still reading") || !strings.Contains(v, "context dead: still reading") {
		t.Errorf("contexts not read yet are not said to be:\n%s", v)
	}

	staging.snaps <- snapWith(0)
	dead.errs <- errors.New("cannot reach the API server at 10.0.0.3:6443: connection refused")
	p.until("staging's picture and dead's error", func() bool {
		return len(rowsOf(m, "staging")) == 4 && strings.Contains(visibilityOf(m), "context dead: cannot reach")
	})
	if s := seen(m); !strings.Contains(s, "▲ 1 of 3 contexts failing") || !strings.Contains(s, "context dead: cannot reach") {
		t.Errorf("the header does not say which context fails:\n%s", s)
	}
	stagingRows := strings.Join(rowsOf(m, "staging"), " ")

	// A change in prod alone: one workload fewer there, without r.
	prod.snaps <- snapWith(1)
	p.until("prod's change", func() bool { return len(rowsOf(m, "prod")) == 3 })
	if got := strings.Join(rowsOf(m, "staging"), " "); got != stagingRows {
		t.Errorf("prod's change changed staging's rows: %s, was %s", got, stagingRows)
	}

	// staging's watch fails: its rows stay, stale; prod still follows.
	staging.errs <- errors.New("watch of pods: connection reset by peer")
	p.until("staging stale", func() bool { return strings.Contains(visibilityOf(m), "context staging: stale since") })
	if got := strings.Join(rowsOf(m, "staging"), " "); got != stagingRows {
		t.Errorf("a stale context's rows changed: %s, was %s", got, stagingRows)
	}
	if s := seen(m); !strings.Contains(s, "▲ 2 of 3 contexts failing") {
		t.Errorf("the header does not count the failing contexts:\n%s", s)
	}
	prod.snaps <- snapWith(2)
	p.until("prod's next change while staging is stale", func() bool { return len(rowsOf(m, "prod")) == 2 })

	// r reads every context once: staging's read brings it back, prod's replaces its picture,
	// and dead's failure keeps it failing.
	m.opts.ReadFleet = func(context.Context) []ContextSnapshot {
		return []ContextSnapshot{
			{Context: "prod", Snapshot: snapWith(3)},
			{Context: "staging", Snapshot: snapWith(0)},
			{Context: "dead", Err: errors.New("cannot reach the API server at 10.0.0.3:6443: connection refused")},
		}
	}
	p.run(press(m, "r"))
	p.until("the refresh", func() bool { return len(rowsOf(m, "prod")) == 1 && !m.refreshing })
	if v := visibilityOf(m); strings.Contains(v, "context staging") || !strings.Contains(v, "context dead: cannot reach") {
		t.Errorf("after r staging should be current and dead failing:\n%s", v)
	}

	// staging's watch goes on after the refresh, and so does prod's.
	staging.errs <- errors.New("watch of pods: connection reset by peer")
	p.until("staging stale again", func() bool { return strings.Contains(visibilityOf(m), "context staging: stale since") })
	staging.snaps <- snapWith(1)
	p.until("staging back by its watch", func() bool {
		return !strings.Contains(visibilityOf(m), "context staging") && len(rowsOf(m, "staging")) == 3
	})
	if s := seen(m); !strings.Contains(s, "▲ 1 of 3 contexts failing") {
		t.Errorf("after staging recovered the header says:\n%s", s)
	}
	m.stopWatch()
}

func TestFleetWatchWithoutAReadSaysRHasNothingToDo(t *testing.T) {
	a := newFakeWatch()
	m := fixtureModel(Options{SourceLabel: "live", WatchFleet: []ContextWatch{{Context: "a", Watch: a.watch}}})
	m.Update(windowSize(100, 24))
	p := &pump{t: t, m: m, msgs: make(chan tea.Msg, 16)}
	p.run(m.Init())
	snap, _ := fixture()
	a.snaps <- snap
	p.until("a's picture", func() bool { return m.state == stateReady })
	press(m, "r")
	if m.refreshing || !strings.Contains(seen(m), "every context follows its watch") {
		t.Errorf("r without a read to refresh from:\n%s", seen(m))
	}
	m.stopWatch()
}

// TestFleetWatchEveryContextFailingIsTheErrorState: with nothing read anywhere, the console says
// what failed in every context, and the first context to read leaves the error state.
func TestFleetWatchEveryContextFailingIsTheErrorState(t *testing.T) {
	a, b := newFakeWatch(), newFakeWatch()
	m := fixtureModel(Options{SourceLabel: "live", WatchFleet: []ContextWatch{{Context: "a", Watch: a.watch}, {Context: "b", Watch: b.watch}}})
	m.Update(windowSize(100, 24))
	p := &pump{t: t, m: m, msgs: make(chan tea.Msg, 16)}
	p.run(m.Init())
	a.errs <- errors.New("connection refused")
	b.errs <- errors.New("forbidden")
	p.until("the error state", func() bool { return m.state == stateError && strings.Contains(seen(m), "context b: forbidden") })
	if !strings.Contains(seen(m), "context a: connection refused") {
		t.Errorf("the error state does not name every context:\n%s", seen(m))
	}
	snap, _ := fixture()
	b.snaps <- snap
	p.until("b's picture", func() bool { return m.state == stateReady && len(rowsOf(m, "b")) == 4 })
	m.stopWatch()
}

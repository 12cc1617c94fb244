package tui

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// fixtureModel is a console that loads the fixture through its source, as Run does.
func fixtureModel(opts Options) *Model {
	snap, rep := fixture()
	if opts.Source == nil {
		opts.Source = staticSource{snap: snap}
	}
	m := New(context.Background(), opts, testStyles(), func() time.Time { return refTime })
	m.diagnose = func(*snapshot.Snapshot) *diagnose.Report { return rep }
	m.rediagnose = nil
	return m
}

func waitFor(t *testing.T, tm *teatest.TestModel, text string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(text)) },
		teatest.WithDuration(15*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

func TestFlowDrillIntoIngester(t *testing.T) {
	tm := teatest.NewTestModel(t, fixtureModel(Options{SourceLabel: "demo"}), teatest.WithInitialTermSize(100, 30))
	waitFor(t, tm, "telemetry-ingester")
	tm.Send(tea.KeyMsg{Type: tea.KeyDown})
	tm.Send(tea.KeyMsg{Type: tea.KeyDown})
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "the loop has converged")
	tm.Send(tea.KeyMsg{Type: tea.KeyTab})
	waitFor(t, tm, "RESTARTS")
	tm.Type("4")
	waitFor(t, tm, "previous instance")
	tm.Type("q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(15*time.Second)).(*Model)
	if fm.screen != screenDiagnosis || fm.diagnosis.tab != tabLogs || fm.diagnosis.key.Name != "telemetry-ingester" {
		t.Fatalf("ended on screen %v tab %d %v", fm.screen, fm.diagnosis.tab, fm.diagnosis.key)
	}
}

// progressSource reports progress and then waits to be released, so the loading screen can be
// seen.
type progressSource struct {
	snap    *snapshot.Snapshot
	release chan struct{}
}

func (p progressSource) Snapshot(ctx context.Context) (*snapshot.Snapshot, error) {
	return p.SnapshotWithProgress(ctx, func(string, int) {})
}

func (p progressSource) SnapshotWithProgress(ctx context.Context, progress func(string, int)) (*snapshot.Snapshot, error) {
	progress("pods", 12400)
	select {
	case <-p.release:
		return p.snap, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func TestFlowLoadingShowsProgressThenRows(t *testing.T) {
	snap, _ := fixture()
	src := progressSource{snap: snap, release: make(chan struct{})}
	tm := teatest.NewTestModel(t, fixtureModel(Options{Source: src}), teatest.WithInitialTermSize(80, 24))
	waitFor(t, tm, "reading pods… 12,400")
	close(src.release)
	waitFor(t, tm, "telemetry-worker")
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(15*time.Second))
}

// blockingReader is a terminal input nobody types on until the test closes it.
type blockingReader struct{ done chan struct{} }

func (r blockingReader) Read([]byte) (int, error) { <-r.done; return 0, io.EOF }

func TestRunQuitsOnQAndReturnsNil(t *testing.T) {
	snap, _ := fixture()
	in := strings.NewReader("q")
	var out bytes.Buffer
	err := Run(context.Background(), Options{In: in, Out: &out, Source: staticSource{snap: snap}, SourceLabel: "dump"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	// The alt screen is left again on exit: the terminal is restored.
	if s := out.String(); !strings.Contains(s, "\x1b[?1049h") || !strings.Contains(s, "\x1b[?1049l") {
		t.Fatalf("alt screen not entered and left: %q", s)
	}
}

func TestRunReturnsLoadErrorWhenNothingLoaded(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	sw := syncWriter{w: &out}
	errc := make(chan error, 1)
	pr, pw := io.Pipe()
	go func() {
		errc <- Run(ctx, Options{In: pr, Out: &sw, Source: staticSource{err: errors.New("open dump: no such file")}})
	}()
	// Quit once the error is on screen.
	deadline := time.Now().Add(15 * time.Second)
	for !outContains(&sw, "could not read the snapshot") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	_, _ = pw.Write([]byte("q"))
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "no such file") {
			t.Fatalf("Run = %v, want the load error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
}

func TestRunEndsWithContext(t *testing.T) {
	snap, _ := fixture()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	defer close(done)
	errc := make(chan error, 1)
	var out bytes.Buffer
	go func() {
		errc <- Run(ctx, Options{In: blockingReader{done}, Out: &syncWriter{w: &out}, Source: staticSource{snap: snap}})
	}()
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("Run after cancel = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run ignored the cancelled context")
	}
}

// outContains reads what a running program wrote so far.
func outContains(w *syncWriter, text string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Contains(w.w.(*bytes.Buffer).String(), text)
}

package cmd

import (
	"context"
	"math"
	"runtime/debug"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
	"github.com/kubediagnose/kubectl-diagnose/tui"
)

// gcPace is the collector's pace as set now.
func gcPace() int {
	latencyGC.Lock()
	defer latencyGC.Unlock()
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// waitReads waits until n first reads run at the latency pace.
func waitReads(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		latencyGC.Lock()
		reads := latencyGC.reads
		latencyGC.Unlock()
		if reads == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d first reads at the latency pace, want %d", reads, n)
		}
	}
}

func TestFirstReadForLatencyPacesTheCollectorUntilTheHoldGoes(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	called := 0
	w := firstReadForLatency(func(context.Context, snapshot.WatchHooks) (<-chan *snapshot.Snapshot, <-chan error) {
		called++
		return nil, nil
	})

	hold1, hold2 := make(chan struct{}), make(chan struct{})
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	w(context.Background(), snapshot.WatchHooks{Hold: hold1})
	if p := gcPace(); p != latencyGCPercent {
		t.Fatalf("pace %d during the first read, want %d", p, latencyGCPercent)
	}
	// A namespace switch: a second first read while the first has not ended.
	w(ctx2, snapshot.WatchHooks{Hold: hold2})
	close(hold1)
	waitReads(t, 1)
	if p := gcPace(); p != latencyGCPercent {
		t.Errorf("pace %d once the first read's hold went, the second's still held; want %d", p, latencyGCPercent)
	}
	cancel2()
	waitReads(t, 0)
	if p := gcPace(); p != 100 {
		t.Errorf("pace %d once both reads ended, want 100 back", p)
	}
	if called != 2 {
		t.Errorf("the watch was started %d times, want 2", called)
	}

	// No hold: the console does not wait on that watch's first diagnosis.
	w(context.Background(), snapshot.WatchHooks{})
	if p := gcPace(); p != 100 {
		t.Errorf("pace %d for a watch without a hold, want 100", p)
	}
	// A slower pace (GOGC=800) and a memory limit are the user's.
	debug.SetGCPercent(800)
	hold := make(chan struct{})
	defer close(hold)
	w(context.Background(), snapshot.WatchHooks{Hold: hold})
	if p := gcPace(); p != 800 {
		t.Errorf("pace %d with GOGC=800, want 800", p)
	}
	debug.SetGCPercent(100)
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 30))
	w(context.Background(), snapshot.WatchHooks{Hold: hold})
	if p := gcPace(); p != 100 {
		t.Errorf("pace %d under a memory limit, want 100", p)
	}
	waitReads(t, 0)
}

// The console of one live context makes its first read at the latency pace; the watch is the
// real one, against a server that refuses it, and ends with its context.
func TestRootConsoleReadsALiveClusterForLatency(t *testing.T) {
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Skip("a memory limit sets the pace")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	var got *tui.Options
	h := hooks{
		interactive: func() bool { return true },
		console:     func(_ context.Context, o tui.Options) error { got = &o; return nil },
	}
	if _, _, err := run(t, nil, h, "--kubeconfig", kubeconfig(t)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, errs := got.Watch(ctx, snapshot.WatchHooks{Hold: make(chan struct{})})
	if p := gcPace(); p != latencyGCPercent {
		t.Errorf("pace %d during the console's first live read, want %d", p, latencyGCPercent)
	}
	cancel()
	for range errs {
	}
	waitReads(t, 0)
	if p := gcPace(); p != 100 {
		t.Errorf("pace %d after the watch ended, want 100 back", p)
	}
}

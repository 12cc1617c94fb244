package serve

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

func snap(t *testing.T, id string) *snapshot.Snapshot {
	t.Helper()
	s, err := dump.Read(filepath.Join("..", "..", "testdata", "scenarios", id, "dump"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// syncBuffer is a log two goroutines share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 5s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestFollowDiagnosesSnapshotsAndRecordsFailures(t *testing.T) {
	p := &Picture{}
	log := &syncBuffer{}
	var mu sync.Mutex
	prepared := 0
	f := &Follower{Picture: p, Log: log, MinInterval: time.Millisecond, Prepare: func(s *snapshot.Snapshot) *snapshot.Snapshot {
		mu.Lock()
		prepared++
		mu.Unlock()
		return s
	}}
	snaps := make(chan *snapshot.Snapshot, 1)
	errs := make(chan error, 8)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.Follow(ctx, snaps, errs) }()

	errs <- errors.New("cannot reach the API server at 10.0.0.1:6443: connection refused")
	waitFor(t, "failure before the first read", func() bool { ok, why := p.Ready(); return !ok && strings.HasPrefix(why, "nothing read yet") })

	snaps <- snap(t, "dev-mixed")
	waitFor(t, "first report", func() bool { ok, _ := p.Ready(); return ok })
	if r := p.Report(); len(r.Workloads) != 3 {
		t.Fatalf("report %+v", r.Workloads)
	}
	errs <- errors.New("watch of pods: connection refused")
	errs <- errors.New("watch of pods: connection refused")
	waitFor(t, "failure after a read", func() bool { ok, why := p.Ready(); return !ok && strings.HasPrefix(why, "reads failing since") })
	// The metrics watch sends the last snapshot again with each Prometheus reading: that is
	// no sign the cluster's reads work again.
	first := p.Report()
	again := *snap(t, "dev-mixed")
	snaps <- &again
	waitFor(t, "the resent snapshot's report", func() bool { return p.Report() != first })
	if ok, _ := p.Ready(); ok {
		t.Error("a snapshot sent again cleared the failure")
	}
	// A live watch's snapshots are each read later than the one before; dev-ingester's dump
	// was taken after dev-mixed's.
	later := snap(t, "dev-ingester")
	if !later.ReferenceTime.After(again.ReferenceTime) {
		t.Fatalf("dev-ingester (%s) should be newer than dev-mixed (%s)", later.ReferenceTime, again.ReferenceTime)
	}
	snaps <- later
	waitFor(t, "recovery", func() bool { ok, _ := p.Ready(); return ok && len(p.Report().Workloads) == 1 })

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Follow after cancel: %v", err)
	}
	got := log.String()
	for _, want := range []string{"first read: 3 workloads, 0 broken, diagnosed in ", "warning: watch of pods: connection refused\n", "reads recovered: 1 workload, 1 broken"} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "warning: watch of pods"); n != 1 {
		t.Errorf("the same error logged %d times, want once:\n%s", n, got)
	}
	if prepared != 3 {
		t.Errorf("Prepare ran %d times, want once per snapshot (3)", prepared)
	}
}

func TestFollowDiagnosesAtMostOncePerInterval(t *testing.T) {
	p := &Picture{}
	var mu sync.Mutex
	var seen []*snapshot.Snapshot
	f := &Follower{Picture: p, MinInterval: 300 * time.Millisecond, Prepare: func(s *snapshot.Snapshot) *snapshot.Snapshot {
		mu.Lock()
		seen = append(seen, s)
		mu.Unlock()
		return s
	}}
	snaps := make(chan *snapshot.Snapshot, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Follow(ctx, snaps, nil) }()
	a, b, c := snap(t, "dev-ingester"), snap(t, "dev-mixed"), snap(t, "dev-web")
	snaps <- a
	waitFor(t, "first report", func() bool { return p.Report() != nil })
	start := time.Now()
	snaps <- b
	// While b waits out the interval, c arrives and supersedes it, as the watch's one-slot
	// channel would have it.
	time.Sleep(50 * time.Millisecond)
	snaps <- c
	waitFor(t, "the newest snapshot's report", func() bool { mu.Lock(); defer mu.Unlock(); return len(seen) >= 2 })
	took := time.Since(start)
	time.Sleep(50 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Follow after cancel: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != a || seen[1] != c {
		t.Errorf("diagnosed %d snapshots, want a then c (b superseded while it waited)", len(seen))
	}
	if took < 200*time.Millisecond {
		t.Errorf("the second diagnosis came %s after the first, want the interval (300ms) between them", took)
	}
}

func TestFollowRefreshesAQuietPictureWithoutClearingAFailure(t *testing.T) {
	p := &Picture{}
	s := snap(t, "dev-ingester")
	now := s.ReferenceTime
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	f := &Follower{Picture: p, MinInterval: time.Millisecond, Refresh: 20 * time.Millisecond, Now: clock}
	snaps := make(chan *snapshot.Snapshot, 1)
	errs := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Follow(ctx, snaps, errs) }()
	snaps <- s
	waitFor(t, "first report", func() bool { return p.Report() != nil })
	errs <- errors.New("watch of pods: connection refused")
	waitFor(t, "failure", func() bool { ok, _ := p.Ready(); return !ok })
	mu.Lock()
	now = now.Add(10 * time.Minute)
	mu.Unlock()
	waitFor(t, "a refreshed report", func() bool { return p.Report().ReferenceTime.Equal(s.ReferenceTime.Add(10 * time.Minute)) })
	if ok, _ := p.Ready(); ok {
		t.Error("a refresh of the last snapshot cleared the failure; nothing new was read")
	}
	if !s.ReferenceTime.Before(p.Report().ReferenceTime) {
		t.Error("the watch's snapshot was changed by the refresh")
	}
	close(snaps)
	if err := <-done; !errors.Is(err, errWatchEnded) {
		t.Errorf("Follow when the snapshots stop: %v, want %v", err, errWatchEnded)
	}
	cancel()
}

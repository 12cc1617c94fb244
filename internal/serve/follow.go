package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/redact"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// MinInterval is the least time between two diagnoses: the watch sends a snapshot after each
// burst of changes, and at 20,000 pods a diagnosis per burst would keep a core busy.
const MinInterval = time.Second

// errWatchEnded is a watch whose snapshots stopped while the server still runs.
var errWatchEnded = errors.New("the cluster's watch ended")

// Follower keeps a Picture current from a stream of snapshots, such as live.Source.Watch's.
type Follower struct {
	Picture *Picture
	// Prepare, when set, scopes each snapshot before the engine reads it (a workload selector).
	Prepare func(*snapshot.Snapshot) *snapshot.Snapshot
	// MinInterval is the least time between diagnoses; zero means the package's MinInterval.
	MinInterval time.Duration
	// Refresh, when positive, diagnoses the last snapshot again after this long without one,
	// its reference time moved to now: a verdict that ages (a probe's warm-up passing, a
	// rollout's deadline) changes although nothing in the cluster did.
	Refresh time.Duration
	// Now is the server's clock; nil means time.Now.
	Now func() time.Time
	// Log receives one line per event a person running the server wants to know of.
	Log io.Writer
	// Redact hides the credentials of every report the picture holds; nil means one of the
	// Follower's own (a server never shows them: what it answers is read by others).
	Redact *redact.Redactor
}

// Follow diagnoses each snapshot, at most one per MinInterval (a newer snapshot supersedes one
// that waits), and records each error, until ctx is done. It returns nil when ctx ends it, and
// an error when the snapshots stop before.
func (f *Follower) Follow(ctx context.Context, snaps <-chan *snapshot.Snapshot, errs <-chan error) error {
	now := f.Now
	if now == nil {
		now = time.Now
	}
	interval := f.MinInterval
	if interval <= 0 {
		interval = MinInterval
	}
	red := f.Redact
	if red == nil {
		red = redact.New()
	}
	var (
		last     *snapshot.Snapshot
		lastDiag time.Time
		warned   string
		refresh  <-chan time.Time
		timer    *time.Timer
	)
	if f.Refresh > 0 {
		timer = time.NewTimer(f.Refresh)
		defer timer.Stop()
		refresh = timer.C
	}
	run := func(s *snapshot.Snapshot, fresh bool) bool {
		if f.Prepare != nil {
			s = f.Prepare(s)
		}
		start := now()
		r, err := diagnose.Until(s, ctx.Done())
		if err != nil {
			return false
		}
		took := now().Sub(start)
		r = red.Report(r, s)
		lastDiag = now()
		if timer != nil {
			timer.Reset(f.Refresh)
		}
		if !fresh {
			f.Picture.Refresh(r, took)
			return true
		}
		first := f.Picture.Report() == nil
		f.Picture.Update(r, took)
		switch {
		case first:
			f.logf("first read: %s, diagnosed in %s", countWorkloads(r), took.Round(time.Millisecond))
		case warned != "":
			f.logf("reads recovered: %s", countWorkloads(r))
		}
		warned = ""
		return true
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			f.Picture.Fail(err, now())
			if msg := oneLine(err.Error()); msg != warned {
				warned = msg
				f.logf("warning: %s", msg)
			}
		case s, ok := <-snaps:
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return errWatchEnded
			}
			if wait := lastDiag.Add(interval).Sub(now()); wait > 0 {
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(wait):
				}
				// The watch keeps only its newest snapshot: one sent meanwhile replaces s.
				select {
				case newer, ok := <-snaps:
					if ok {
						s = newer
					}
				default:
				}
			}
			// A snapshot no newer than the last is that one sent again (with a new Prometheus
			// reading, by the metrics watch): diagnosed, but it says nothing of the cluster's reads.
			fresh := last == nil || s.ReferenceTime.After(last.ReferenceTime)
			last = s
			if !run(s, fresh) {
				return nil
			}
		case <-refresh:
			if last == nil {
				timer.Reset(f.Refresh)
				continue
			}
			again := *last
			again.ReferenceTime = now().UTC()
			if !run(&again, false) {
				return nil
			}
		}
	}
}

func (f *Follower) logf(format string, args ...any) {
	if f.Log != nil {
		// A log that cannot be written is no reason to stop serving.
		_, _ = fmt.Fprintf(f.Log, format+"\n", args...)
	}
}

// countWorkloads says how many workloads a report holds and how many are broken.
func countWorkloads(r *diagnose.Report) string {
	broken := 0
	for i := range r.Workloads {
		if r.Workloads[i].Shape.Broken() {
			broken++
		}
	}
	noun := "workloads"
	if len(r.Workloads) == 1 {
		noun = "workload"
	}
	return fmt.Sprintf("%d %s, %d broken", len(r.Workloads), noun, broken)
}

package rollout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/redact"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// DefaultTick is how often the gate re-reads the latest snapshot when nothing changed: warm-up
// windows and the settle period end on the clock, not on a cluster event.
const DefaultTick = time.Second

// Event is one change of the gate's decision, for a progress line.
type Event struct {
	// Elapsed is the time since the gate started.
	Elapsed   time.Duration
	Decision  Decision
	Status    Status
	Diagnosis *diagnose.Diagnosis
}

// Result is the gate's final answer.
type Result struct {
	Target   Target
	Decision Decision
	// Elapsed is how long the gate took to decide; Settle the settle period it applied.
	Elapsed, Settle time.Duration
	// Read says a snapshot of the workload was read; Status and Diagnosis are the last read.
	Read      bool
	Status    Status
	Diagnosis *diagnose.Diagnosis
	// Visibility is what the source could not read.
	Visibility []snapshot.Visibility
}

// ThroughputQuery measures whether the new revision's copies produce output; MetricsThroughput
// answers it from Prometheus. A Gate without one decides on the controller and the engine alone.
type ThroughputQuery interface {
	Output(ctx context.Context, t Target, since time.Time) (*Output, error)
}

// Gate follows one workload's rollout through a stream of snapshots.
type Gate struct {
	Target Target
	// Settle, when positive, replaces DefaultSettle.
	Settle time.Duration
	// Timeout bounds the whole run; zero means no bound.
	Timeout time.Duration
	// Tick, when positive, replaces DefaultTick.
	Tick time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Progress, when set, receives every change of the decision.
	Progress func(Event)
	// Warn, when set, receives errors of the watch after the first snapshot: the watch
	// retries by itself and the timeout still bounds the wait.
	Warn func(error)
	// Throughput, when set, must report output before the rollout succeeds.
	Throughput ThroughputQuery
	// Redact hides the credentials of the diagnosis the gate reports and decides on (its
	// headline is the reason of a failure); nil shows them.
	Redact *redact.Redactor
}

// ErrNotFound says the workload is not in the snapshot.
var ErrNotFound = errors.New("not found")

// Run reads snapshots until the rollout is decided, the timeout passes or ctx ends. It returns
// ctx's error when ctx ends first, and an error (before any verdict) when the watch fails
// before its first snapshot or the workload is missing or deleted.
func (g *Gate) Run(ctx context.Context, snaps <-chan *snapshot.Snapshot, errs <-chan error) (*Result, error) {
	now := g.Now
	if now == nil {
		now = time.Now
	}
	tick := g.Tick
	if tick <= 0 {
		tick = DefaultTick
	}
	start := now()
	var timeout <-chan time.Time
	if g.Timeout > 0 {
		t := time.NewTimer(g.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	ticker := time.NewTicker(tick)
	defer ticker.Stop()

	res := &Result{Target: g.Target}
	dec := &Decider{}
	var last *snapshot.Snapshot
	var prev Event
	var servingSince time.Time
	seen := false
	var uid types.UID
	step := func(s *snapshot.Snapshot) (bool, error) {
		st, found, err := ReadStatus(s, g.Target)
		if err != nil {
			return false, err
		}
		if !found {
			if last == nil {
				return false, fmt.Errorf("%s %w in namespace %s", g.Target.Ref(), ErrNotFound, g.Target.Namespace)
			}
			return false, fmt.Errorf("%s was deleted while its rollout was followed", g.Target.Ref())
		}
		// kubectl rollout status aborts on a deletion "not to silently watch the wrong (new)
		// object"; two snapshots may hide the deletion between them, the UID does not.
		if uid == "" {
			uid = st.UID
		} else if st.UID != uid {
			return false, fmt.Errorf("%s was deleted and created again while its rollout was followed (uid %s, now %s); run rollout again to follow the new object", g.Target.Ref(), uid, st.UID)
		}
		dec.Settle = g.Settle
		if dec.Settle <= 0 {
			dec.Settle = DefaultSettle(st.MinReadySeconds, st.Template)
		}
		d := g.Redact.Diagnosis(diagnose.Diagnose(s).Find(g.Target.Kind, g.Target.Namespace, g.Target.Name), s)
		obs := Observation{At: s.ReferenceTime, Status: st, Diagnosis: d}
		// The query measures from when the controller and the engine first agreed the rollout
		// was done: output before that came from copies still being replaced.
		if st.Done && d != nil && d.Shape == diagnose.ShapeHealthy {
			if servingSince.IsZero() {
				servingSince = s.ReferenceTime
			}
		} else {
			servingSince = time.Time{}
		}
		if g.Throughput != nil && !servingSince.IsZero() {
			out, err := g.Throughput.Output(ctx, g.Target, servingSince)
			if err != nil {
				return false, fmt.Errorf("query the output of %s: %w", g.Target.Ref(), err)
			}
			obs.Output = out
		}
		decision := dec.Decide(obs)
		res.Read, res.Decision, res.Settle, res.Status, res.Diagnosis, res.Visibility = true, decision, dec.Settle, st, d, s.Visibility
		res.Elapsed = now().Sub(start)
		ev := Event{Elapsed: res.Elapsed, Decision: decision, Status: st, Diagnosis: d}
		if !seen || ev.Decision != prev.Decision {
			seen, prev = true, ev
			if g.Progress != nil {
				g.Progress(ev)
			}
		}
		return decision.Phase.Final(), nil
	}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case err, ok := <-errs:
			switch {
			case !ok:
				errs = nil
			case last == nil:
				return nil, err
			case g.Warn != nil:
				g.Warn(err)
			}
		case s, ok := <-snaps:
			if !ok {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, errors.New("the watch ended before the rollout was decided")
			}
			done, err := step(s)
			last = s
			if err != nil || done {
				return res, err
			}
		case <-ticker.C:
			if last == nil {
				continue
			}
			// Ages move on while nothing changes: the same objects, read at a later time.
			again := *last
			again.ReferenceTime = now().UTC()
			if done, err := step(&again); err != nil || done {
				return res, err
			}
		case <-timeout:
			if last != nil {
				again := *last
				again.ReferenceTime = now().UTC()
				if done, err := step(&again); err != nil || done {
					return res, err
				}
			}
			res.Elapsed = now().Sub(start)
			why := "nothing was read before the timeout"
			if last != nil {
				why = res.Decision.Why
			}
			res.Decision = Decision{Phase: PhaseTimedOut, Why: why}
			return res, nil
		}
	}
}

package rollout

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

var pricing = Target{Kind: "Deployment", Namespace: "fixture-old-restarts", Name: "pricing"}

// feed returns a watch's channels holding snaps, with the snapshot channel left open as a
// live watch leaves it.
func feed(snaps ...*snapshot.Snapshot) (chan *snapshot.Snapshot, chan error) {
	out := make(chan *snapshot.Snapshot, len(snaps)+1)
	for _, s := range snaps {
		out <- s
	}
	return out, make(chan error, 1)
}

// now re-dates the fixture so that the gate's clock and the snapshot's agree.
func now(s *snapshot.Snapshot) *snapshot.Snapshot {
	s.ReferenceTime = time.Now().UTC()
	return s
}

func TestGateSucceedsAfterSettleOnTheClock(t *testing.T) {
	snaps, errs := feed(now(fixture(t, "old-restarts")))
	var events []Event
	g := &Gate{
		Target: pricing, Settle: 300 * time.Millisecond, Tick: 20 * time.Millisecond, Timeout: 10 * time.Second,
		Progress: func(ev Event) { events = append(events, ev) },
	}
	start := time.Now()
	res, err := g.Run(context.Background(), snaps, errs)
	if err != nil {
		t.Fatal(err)
	}
	// No new snapshot came: the ticks alone carried it past the settle period.
	if res.Decision.Phase != PhaseSucceeded || time.Since(start) < 300*time.Millisecond {
		t.Errorf("result %+v after %s, want succeeded after the 300ms settle", res.Decision, time.Since(start))
	}
	if len(events) != 2 || events[0].Decision.Phase != PhaseSettling || events[1].Decision.Phase != PhaseSucceeded {
		t.Errorf("events = %+v, want one settling and one succeeded", events)
	}
	if !res.Read || !res.Status.Done || res.Diagnosis == nil || res.Settle != 300*time.Millisecond {
		t.Errorf("result lacks the last state: %+v", res)
	}
}

func TestGateFailsOnTheFirstFailingSnapshot(t *testing.T) {
	s := fixture(t, "invalid-image")
	snaps, errs := feed(s)
	g := &Gate{Target: Target{Kind: "Deployment", Namespace: "fixture-invalid-image", Name: "storefront"}, Timeout: 10 * time.Second}
	res, err := g.Run(context.Background(), snaps, errs)
	if err != nil {
		t.Fatal(err)
	}
	if res.Decision.Phase != PhaseFailed || res.Diagnosis == nil || res.Diagnosis.Fix == "" {
		t.Errorf("result %+v, want failed with the diagnosis and its fix", res.Decision)
	}
	var b strings.Builder
	if err := PrintResult(&b, res, "text"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"deployment/storefront rollout failed after", "Suspects, most likely first", "kubectl rollout undo deployment/storefront --to-revision=1"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text result lacks %q:\n%s", want, b.String())
		}
	}
}

func TestGateReportsOneLinePerChange(t *testing.T) {
	s := now(fixture(t, "old-restarts"))
	pending := withDeployment(s, "pricing", applied)
	snaps, errs := feed(pending, pending, pending, s)
	var lines []string
	g := &Gate{
		Target: pricing, Settle: 50 * time.Millisecond, Tick: 10 * time.Millisecond, Timeout: 10 * time.Second,
		Progress: func(ev Event) { lines = append(lines, ProgressLine(ev)) },
	}
	res, err := g.Run(context.Background(), snaps, errs)
	if err != nil || res.Decision.Phase != PhaseSucceeded {
		t.Fatalf("result %+v, %v", res, err)
	}
	if len(lines) != 3 || !strings.Contains(lines[0], "progressing") || !strings.Contains(lines[1], "settling") || !strings.Contains(lines[2], "succeeded") {
		t.Errorf("lines = %q, want progressing, settling, succeeded once each", lines)
	}
}

func TestGateTimesOutWithTheStateAtThatMoment(t *testing.T) {
	pending := withDeployment(now(fixture(t, "old-restarts")), "pricing", applied)
	snaps, errs := feed(pending)
	g := &Gate{Target: pricing, Timeout: 100 * time.Millisecond, Tick: 10 * time.Millisecond}
	res, err := g.Run(context.Background(), snaps, errs)
	if err != nil {
		t.Fatal(err)
	}
	if res.Decision.Phase != PhaseTimedOut || !strings.Contains(res.Decision.Why, "spec update to be observed") || res.Diagnosis == nil {
		t.Errorf("result %+v, want timed out saying what it waited for", res.Decision)
	}
}

func TestGateTimesOutBeforeAnyRead(t *testing.T) {
	snaps, errs := feed()
	res, err := (&Gate{Target: pricing, Timeout: 50 * time.Millisecond}).Run(context.Background(), snaps, errs)
	if err != nil || res.Decision.Phase != PhaseTimedOut || res.Read {
		t.Errorf("result %+v, %v; want timed out with nothing read", res, err)
	}
}

func TestGateStopsWithItsContext(t *testing.T) {
	snaps, errs := feed(withDeployment(now(fixture(t, "old-restarts")), "pricing", applied))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res, err := (&Gate{Target: pricing}).Run(ctx, snaps, errs)
	if !errors.Is(err, context.DeadlineExceeded) || res != nil {
		t.Errorf("got %+v, %v; want the context's error and no result", res, err)
	}
}

func TestGateErrors(t *testing.T) {
	t.Run("workload missing", func(t *testing.T) {
		snaps, errs := feed(fixture(t, "old-restarts"))
		_, err := (&Gate{Target: Target{Kind: "Deployment", Namespace: "fixture-old-restarts", Name: "pricing-v2"}}).Run(context.Background(), snaps, errs)
		if !errors.Is(err, ErrNotFound) || err.Error() != "deployment/pricing-v2 not found in namespace fixture-old-restarts" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("workload deleted", func(t *testing.T) {
		s := now(fixture(t, "old-restarts"))
		gone := withDeployment(s, "pricing", applied)
		gone.Deployments = nil
		snaps, errs := feed(withDeployment(s, "pricing", applied), gone)
		_, err := (&Gate{Target: pricing}).Run(context.Background(), snaps, errs)
		if err == nil || !strings.Contains(err.Error(), "was deleted") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("workload deleted and created again between two snapshots", func(t *testing.T) {
		s := now(fixture(t, "old-restarts"))
		following := withDeployment(s, "pricing", func(d *appsv1.Deployment) {
			d.UID = "5f0c0e52-0d33-4c1e-9d53-1b2c3d4e5f60"
			applied(d)
		})
		// Another object of the same name: no replicas, so the controller calls it done at once.
		recreated := withDeployment(s, "pricing", func(d *appsv1.Deployment) {
			d.UID = "8a1d7c3e-2f44-4b6a-a1c9-0e9f8d7c6b5a"
			d.Generation, d.Status.ObservedGeneration = 1, 1
			d.Spec.Replicas = ptr.To[int32](0)
			d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1}
		})
		snaps, errs := feed(following, recreated)
		res, err := (&Gate{Target: pricing, Settle: time.Millisecond, Tick: time.Millisecond, Timeout: 10 * time.Second}).Run(context.Background(), snaps, errs)
		want := "deployment/pricing was deleted and created again while its rollout was followed (uid 5f0c0e52-0d33-4c1e-9d53-1b2c3d4e5f60, now 8a1d7c3e-2f44-4b6a-a1c9-0e9f8d7c6b5a); run rollout again to follow the new object"
		if err == nil || err.Error() != want {
			t.Errorf("err = %v, result %+v; want %q", err, res, want)
		}
	})
	t.Run("watch fails before its first snapshot", func(t *testing.T) {
		snaps, errs := feed()
		errs <- errors.New("cannot reach the API server at 127.0.0.1:1: connection refused")
		_, err := (&Gate{Target: pricing}).Run(context.Background(), snaps, errs)
		if err == nil || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("watch error after the first snapshot is a warning", func(t *testing.T) {
		s := now(fixture(t, "old-restarts"))
		snaps, errs := feed(s)
		var warned []error
		g := &Gate{
			Target: pricing, Settle: 100 * time.Millisecond, Tick: 10 * time.Millisecond,
			Warn: func(err error) { warned = append(warned, err) },
		}
		go func() {
			time.Sleep(30 * time.Millisecond)
			errs <- errors.New("watch of pods broke")
		}()
		res, err := g.Run(context.Background(), snaps, errs)
		if err != nil || res.Decision.Phase != PhaseSucceeded || len(warned) != 1 {
			t.Errorf("result %+v, %v, warnings %v; want success and one warning", res, err, warned)
		}
	})
	t.Run("watch closed", func(t *testing.T) {
		snaps, errs := feed(withDeployment(now(fixture(t, "old-restarts")), "pricing", applied))
		close(snaps)
		_, err := (&Gate{Target: pricing}).Run(context.Background(), snaps, errs)
		if err == nil || !strings.Contains(err.Error(), "watch ended") {
			t.Errorf("err = %v", err)
		}
	})
}

// measured is a throughput query with a fixed answer: the seam a metrics source will fill.
type measured struct {
	out   Output
	since []time.Time
}

func (m *measured) Output(_ context.Context, _ Target, since time.Time) (*Output, error) {
	m.since = append(m.since, since)
	o := m.out
	return &o, nil
}

func TestGateAsksTheThroughputQueryOnceDone(t *testing.T) {
	s := now(fixture(t, "old-restarts"))
	t.Run("idle copies never pass", func(t *testing.T) {
		q := &measured{out: Output{Producing: false, Detail: "0 spans/s over 30s"}}
		snaps, errs := feed(s)
		g := &Gate{Target: pricing, Settle: 20 * time.Millisecond, Tick: 10 * time.Millisecond, Timeout: 200 * time.Millisecond, Throughput: q}
		res, err := g.Run(context.Background(), snaps, errs)
		if err != nil || res.Decision.Phase != PhaseTimedOut || !strings.Contains(res.Decision.Why, "0 spans/s") || len(q.since) < 2 {
			t.Errorf("result %+v, %v after %d queries; want timed out naming the measurement", res.Decision, err, len(q.since))
		}
		// Every query covers the whole time the copies have served, not the last tick.
		for _, since := range q.since {
			if !since.Equal(s.ReferenceTime) {
				t.Errorf("queries from %v, want all from %v", q.since, s.ReferenceTime)
			}
		}
	})
	t.Run("producing copies pass after settling", func(t *testing.T) {
		q := &measured{out: Output{Producing: true, Detail: "812 spans/s over 30s"}}
		snaps, errs := feed(withDeployment(s, "pricing", applied), s)
		g := &Gate{Target: pricing, Settle: 50 * time.Millisecond, Tick: 10 * time.Millisecond, Timeout: 10 * time.Second, Throughput: q}
		res, err := g.Run(context.Background(), snaps, errs)
		if err != nil || res.Decision.Phase != PhaseSucceeded || !strings.Contains(res.Decision.Why, "812 spans/s") {
			t.Fatalf("result %+v, %v; want succeeded naming the measurement", res.Decision, err)
		}
		// Asked only once the controller and the engine were done, from when they first were.
		for _, since := range q.since {
			if !since.Equal(q.since[0]) {
				t.Errorf("queries from %v, want all from when the rollout first looked done", q.since)
			}
		}
	})
}

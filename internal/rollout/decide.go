package rollout

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// Phase is where a followed rollout stands.
type Phase string

// The phases. Succeeded, Failed and TimedOut end the gate.
const (
	// PhaseProgressing: the new revision is not yet updated, available and serving everywhere,
	// and nothing on it has failed.
	PhaseProgressing Phase = "progressing"
	// PhaseSettling: it is, and has to stay so for the settle period.
	PhaseSettling Phase = "settling"
	// PhaseSucceeded: it stayed so for the settle period.
	PhaseSucceeded Phase = "succeeded"
	// PhaseFailed: its copies took a failure shape, or the controller gave up on it.
	PhaseFailed Phase = "failed"
	// PhaseTimedOut: neither happened before the gate's timeout.
	PhaseTimedOut Phase = "timed-out"
)

// Final reports whether the phase ends the gate.
func (p Phase) Final() bool {
	return p == PhaseSucceeded || p == PhaseFailed || p == PhaseTimedOut
}

// Output is what a throughput query says of the new revision's copies over the settle period.
// Without a query (no --prometheus) Observation.Output stays nil, and the decision rests on the
// controller and the engine alone.
type Output struct {
	// Producing: the copies produce output at a rate the query considers normal.
	Producing bool
	// Detail says what was measured, for the progress line.
	Detail string
}

// Observation is what the gate knows of the workload at one reference time.
type Observation struct {
	At        time.Time
	Status    Status
	Diagnosis *diagnose.Diagnosis
	// Output is nil when no throughput query is configured.
	Output *Output
}

// Decision is the verdict on one observation.
type Decision struct {
	Phase Phase `json:"phase"`
	// Why is one line: what the rollout waits for, or why it was decided.
	Why string `json:"why"`
}

// Decider turns observations into decisions. It remembers one thing: since when the workload
// has looked done, so that done must hold for Settle without a break.
type Decider struct {
	Settle    time.Duration
	doneSince time.Time
}

// Decide reads one observation. A failure shape on the new revision's copies decides at once:
// the engine gives copies inside their probes' warm-up window, a surge copy not Ready yet and a
// pull under way the progressing shape, so a normal rollout never reaches this branch. Success
// needs the controller's done (every copy updated and available, none old left), the engine's
// healthy (every declared copy serves, through its Service where it has one), and a producing
// output where a throughput query exists, all held for Settle.
func (d *Decider) Decide(o Observation) Decision {
	diag := o.Diagnosis
	if diag == nil {
		d.doneSince = time.Time{}
		return Decision{Phase: PhaseProgressing, Why: "the workload has no diagnosis yet; " + o.Status.Message}
	}
	if diag.Shape.Broken() {
		d.doneSince = time.Time{}
		return Decision{Phase: PhaseFailed, Why: fmt.Sprintf("%s: %s", diag.Shape, diag.Headline)}
	}
	if o.Status.DeadlineExceeded {
		d.doneSince = time.Time{}
		return Decision{Phase: PhaseFailed, Why: o.Status.Message}
	}
	serving := fmt.Sprintf("%d of %d serving", diag.Counts.Serving, diag.Counts.Declared)
	switch {
	case !o.Status.Done:
		d.doneSince = time.Time{}
		return Decision{Phase: PhaseProgressing, Why: fmt.Sprintf("%s; %s (%s)", o.Status.Message, serving, diag.Shape)}
	case diag.Shape != diagnose.ShapeHealthy:
		d.doneSince = time.Time{}
		return Decision{Phase: PhaseProgressing, Why: fmt.Sprintf("%s, but %s (%s)", o.Status.Message, serving, diag.Shape)}
	case o.Output != nil && !o.Output.Producing:
		d.doneSince = time.Time{}
		return Decision{Phase: PhaseProgressing, Why: fmt.Sprintf("%s and %s, but not producing output: %s", o.Status.Message, serving, o.Output.Detail)}
	}
	if d.doneSince.IsZero() {
		d.doneSince = o.At
	}
	why := fmt.Sprintf("%s and %s", o.Status.Message, serving)
	if o.Output != nil {
		why += "; " + o.Output.Detail
	}
	if held := o.At.Sub(d.doneSince); held >= d.Settle {
		return Decision{Phase: PhaseSucceeded, Why: fmt.Sprintf("%s for %s", why, roundSeconds(held))}
	}
	return Decision{Phase: PhaseSettling, Why: fmt.Sprintf("%s; must hold for %s", why, roundSeconds(d.Settle))}
}

// defaultProbePeriod is the kubelet's probe period when a probe leaves it unset
// (pkg/apis/core/v1/defaults.go); without a readiness probe a copy is Ready when it starts, and
// one such period still lets a copy that dies at once show it.
const defaultProbePeriod = 10 * time.Second

// DefaultSettle is how long a done rollout must stay done: the workload's minReadySeconds plus
// one period of its slowest readiness probe, so that at least one probe has run on every
// copy after it became available.
func DefaultSettle(minReadySeconds int32, tmpl *corev1.PodTemplateSpec) time.Duration {
	period := time.Duration(0)
	if tmpl != nil {
		for i := range tmpl.Spec.Containers {
			p := tmpl.Spec.Containers[i].ReadinessProbe
			if p == nil {
				continue
			}
			s := time.Duration(p.PeriodSeconds) * time.Second
			if s <= 0 {
				s = defaultProbePeriod
			}
			period = max(period, s)
		}
	}
	if period == 0 {
		period = defaultProbePeriod
	}
	return time.Duration(minReadySeconds)*time.Second + period
}

func roundSeconds(d time.Duration) time.Duration { return d.Round(time.Second) }

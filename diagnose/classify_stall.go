package diagnose

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// Timing of readiness: a copy is given what its own probes give it (facts.ProbeAllowance,
// which says why), and the thresholds are the facts package's.
const (
	endpointGrace = facts.EndpointGrace
	// servedReady: how long after a copy started its Ready condition must go False for the
	// copy to count as having served (a False→True→False history long enough to be service,
	// not a flicker): startup plus a few readiness periods.
	servedReady = 2 * time.Minute
)

// warmingUp reports a running copy that its own probes still give time: not Ready yet and not
// past its probe allowance, or Ready so recently that its endpoint may not be published yet.
// A copy that was Ready and is not any more lost something; it is not warming up.
func warmingUp(f *copyFacts, ref time.Time) bool {
	if f.Ready {
		rc := &f.Life.ReadyCondition
		return rc.Seen && ref.Sub(rc.Changed) <= endpointGrace
	}
	return !f.Life.WasReady() && f.Life.RunningFor(ref) <= f.Life.ProbeAllowance
}

// stalledRollout decides whether a rollout the controller still calls in progress has in fact
// failed: no copy of the current revision is Ready (no progress is being made), some copy
// has run past its probe allowance without ever becoming Ready, and there is a failure signal
// on those copies (a readiness probe aimed at a port no container declares, or error lines in
// their logs). A normal rolling update makes copies Ready one after another, and a copy that is
// slow to load logs no errors, so both stay progressing. It returns why, or "".
func stalledRollout(w *workload, ref time.Time, idle []*copyFacts) string {
	for _, f := range w.cls.copies {
		if f.Active && f.Current && f.Ready {
			return ""
		}
	}
	var stalled []*copyFacts
	for _, f := range idle {
		if !f.Ready && !f.Life.WasReady() && f.Life.RunningFor(ref) > f.Life.ProbeAllowance {
			stalled = append(stalled, f)
		}
	}
	if len(stalled) == 0 {
		return ""
	}
	rev := "the current revision"
	if cur := w.cls.Current; cur != nil {
		rev = fmt.Sprintf("revision %d", cur.Number)
	}
	longest := time.Duration(0)
	for _, f := range stalled {
		longest = max(longest, f.Life.RunningFor(ref))
	}
	lead := fmt.Sprintf("no copy of %s became Ready: %s ran up to %s, past what their probes allow (%s)",
		rev, copiesPhrase(len(stalled), currentActive(w.cls.copies)), humanDuration(longest), humanDuration(stalled[0].Life.ProbeAllowance))
	if why := failureSignal(w, stalled); why != "" {
		return lead + ", and " + why
	}
	return ""
}

// failureSignal names a sign of failure on the given copies that a slow start does not give:
// a readiness probe on a port no container declares (a fault in the spec itself), or an error
// line in their logs.
func failureSignal(w *workload, copies []*copyFacts) string {
	if w.Template != nil {
		for i := range w.Template.Spec.Containers {
			c := &w.Template.Spec.Containers[i]
			if c.ReadinessProbe == nil {
				continue
			}
			port, ok := rules.ProbePort(c.ReadinessProbe)
			if !ok {
				continue
			}
			if declared, known := rules.DeclaresPort(c, port); !declared && known && !declaredByAny(w.Template.Spec.Containers, port) {
				return fmt.Sprintf("container %s's readiness probe targets port %s, which no container declares", c.Name, portString(port))
			}
		}
	}
	names := make(map[string]bool, len(copies))
	for _, f := range copies {
		names[f.Pod.Name] = true
	}
	// Every copy logs the same lines: each distinct one is reduced once (its observations
	// share the text's facts).
	obs := w.observe()
	for i, p := range w.Pods {
		if !names[p.Name] {
			continue
		}
		from, to := obs.logLines(i)
		for k := from; k < to; k++ {
			if sig := obs.list[k].Signal(); sig.Failing {
				return fmt.Sprintf("their logs report failures (%s)", rules.Clip(sig.Text, 120))
			}
		}
	}
	// Their own events, where no log line says it (logs not read, an app that logs nothing):
	// a probe that still fails after the copy ran past its allowance, which warm-up does not
	// explain. A 503 is how an app says "not ready yet" (a model still loading): that is what
	// readiness is for, not a failure of its own.
	past := make(map[string]bool, len(copies))
	for _, f := range copies {
		if w.Snap != nil && f.Life.RunningFor(w.Snap.ReferenceTime) > f.Life.ProbeAllowance {
			past[f.Pod.Name] = true
		}
	}
	evs := obs.eventList()
	for k := range evs {
		e := &evs[k]
		if e.Object.Kind == "Pod" && past[e.Object.Name] && e.At.After(e.Since) && facts.EventFailing(e.Status, e.Reason, e.Text) &&
			!strings.Contains(e.Text, "statuscode: 503") {
			return fmt.Sprintf("their events report failures (%s: %s)", e.Reason, rules.Clip(e.Text, 120))
		}
	}
	return ""
}

// declaredByAny: containers of a pod share its network, so a port a sidecar declares is one
// something is expected to listen on.
func declaredByAny(cs []corev1.Container, port intstr.IntOrString) bool {
	for i := range cs {
		if declared, _ := rules.DeclaresPort(&cs[i], port); declared {
			return true
		}
	}
	return false
}

func portString(p intstr.IntOrString) string {
	if p.Type == intstr.String {
		return fmt.Sprintf("%q", p.StrVal)
	}
	return p.String()
}

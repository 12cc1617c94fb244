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

// Timing of readiness, taken from the copy's own spec rather than one fixed allowance.
//
// A copy is given what its probes give it: the readiness (and startup) probe's
// initialDelaySeconds + failureThreshold×periodSeconds, the time the kubelet itself allows
// before the probe's verdict stands, plus endpointGrace. endpointGrace covers the status writes
// that follow a verdict: the kubelet's status manager writes the Ready condition, and the
// EndpointSlice controller publishes the endpoint, each within seconds (the controller batches
// for at most a second by default). Thirty seconds is several times both; a copy Ready for
// longer that is still not a ready endpoint is not "warming up", its Service does not send it
// traffic.
const (
	endpointGrace = 30 * time.Second
	// Kubernetes' probe defaults (pkg/apis/core/v1/defaults.go), for probes read from objects
	// the API server did not default (hand-written input).
	defaultProbePeriod           = 10 * time.Second
	defaultProbeFailureThreshold = 3
	// servedReady: how long after a copy started its Ready condition must go False for the
	// copy to count as having served (a False→True→False history long enough to be service,
	// not a flicker): startup plus a few readiness periods.
	servedReady = 2 * time.Minute
	// The kubelet's crash-loop back-off: 10 s doubling to 300 s (pkg/kubelet/kubelet.go
	// backOffPeriod, MaxContainerBackOff).
	crashBackoffInitial = 10 * time.Second
	crashBackoffMax     = 300 * time.Second
)

// probeAllowance is how long the copy's own probes let it take to become Ready after its
// containers start.
func probeAllowance(p *corev1.Pod) time.Duration {
	var most time.Duration
	for i := range p.Spec.Containers {
		c := &p.Spec.Containers[i]
		d := probeWindow(c.StartupProbe) + probeWindow(c.ReadinessProbe)
		most = max(most, d)
	}
	return most + endpointGrace
}

func probeWindow(pr *corev1.Probe) time.Duration {
	if pr == nil {
		return 0
	}
	period := time.Duration(pr.PeriodSeconds) * time.Second
	if period <= 0 {
		period = defaultProbePeriod
	}
	threshold := pr.FailureThreshold
	if threshold <= 0 {
		threshold = defaultProbeFailureThreshold
	}
	return time.Duration(pr.InitialDelaySeconds)*time.Second + time.Duration(threshold)*period
}

// runningFor is how long the copy's latest-started container has been running; zero when one
// is not running.
func runningFor(p *corev1.Pod, ref time.Time) time.Duration {
	var latest time.Time
	for ix := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[ix]
		if cs.State.Running == nil {
			return 0
		}
		if t := cs.State.Running.StartedAt.Time; t.After(latest) {
			latest = t
		}
	}
	if latest.IsZero() {
		return 0
	}
	return ref.Sub(latest)
}

// warmingUp reports a running copy that its own probes still give time: not Ready yet and not
// past its probe allowance, or Ready so recently that its endpoint may not be published yet.
// A copy that was Ready and is not any more lost something; it is not warming up.
func warmingUp(f *copyFacts, ref time.Time) bool {
	if f.Ready {
		rc := readyCondition(f.Pod)
		return rc != nil && ref.Sub(rc.LastTransitionTime.Time) <= endpointGrace
	}
	return !wasReady(f.Pod) && runningFor(f.Pod, ref) <= probeAllowance(f.Pod)
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
		if !f.Ready && !wasReady(f.Pod) && runningFor(f.Pod, ref) > probeAllowance(f.Pod) {
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
		longest = max(longest, runningFor(f.Pod, ref))
	}
	lead := fmt.Sprintf("no copy of %s became Ready: %s ran up to %s, past what their probes allow (%s)",
		rev, copiesPhrase(len(stalled), currentActive(w.cls.copies)), humanDuration(longest), humanDuration(probeAllowance(stalled[0].Pod)))
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
		if w.Snap != nil && runningFor(f.Pod, w.Snap.ReferenceTime) > probeAllowance(f.Pod) {
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

// briefReadyOnly reports a copy whose containers have crashed since it started and whose
// history cannot hold a sustained run: Ready between kills is not serving. A restarted
// container counts as having run sustained when it is Ready and has now been up settleTime, or
// when the copy is older than a crash loop from its first start could make it: n restarts take
// about the kubelet's back-off delays plus n+1 runs as long as the longest one seen. The span is
// doubled, and the time to create a copy (stuckCreating) added, because runs vary and only the
// last two are visible; a copy that served for a while before it began to crash, and whose crash
// loop is still of the same order as that while, is read as not having served.
func briefReadyOnly(p *corev1.Pod, ref time.Time) bool {
	if restarts(p) == 0 {
		return false
	}
	age := ref.Sub(p.CreationTimestamp.Time)
	for ix := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[ix]
		if cs.RestartCount == 0 {
			continue
		}
		if cs.State.Running != nil && cs.Ready && ref.Sub(cs.State.Running.StartedAt.Time) >= settleTime {
			return false
		}
		var run time.Duration
		if lt := cs.LastTerminationState.Terminated; lt != nil && !lt.StartedAt.IsZero() {
			run = lt.FinishedAt.Sub(lt.StartedAt.Time)
		}
		if cs.State.Running != nil {
			run = max(run, ref.Sub(cs.State.Running.StartedAt.Time))
		}
		if age > 2*crashLoopSpan(cs.RestartCount, run)+stuckCreating {
			return false
		}
	}
	return true
}

// crashLoopSpan is the longest a container can take to restart n times when each run lasts at
// most run.
func crashLoopSpan(n int32, run time.Duration) time.Duration {
	span := time.Duration(n+1) * run
	delay := crashBackoffInitial
	for i := int32(0); i < n; i++ {
		if delay == crashBackoffMax {
			// Past the cap every restart adds the same: finish in one step.
			span += time.Duration(n-i) * crashBackoffMax
			break
		}
		span += delay
		delay = min(2*delay, crashBackoffMax)
	}
	return span
}

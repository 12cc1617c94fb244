package diagnose

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// The onset is when the failure began. The cause follows from it: a failure that began with a
// revision's copies is that revision's, whatever readiness said in between; one that began long
// after a revision served, with the spec unchanged since, came from outside.

// failedFromStart is a revision's failure signal seen in its copies' first life: the same failing
// line the copy logged in its first moments is still what it logs after it stopped being Ready.
type failedFromStart struct {
	Pod, Line string
	// At is the line's own time; Started the copy's start.
	At, Started time.Time
}

// earlyWindow is how soon after a copy started its failure signal must appear to count as
// beginning with the copy: the app's start-up, its first dials and probes.
const earlyWindow = servedReady

// failureBeganWithCopies looks for a copy of rev that is not Ready now and whose log shows, within
// earlyWindow of its start, the same failing line it still logs after its Ready condition went
// False. A copy that was Ready for minutes while already failing (a queue filling, a pool giving up)
// did not serve without this failure.
func failureBeganWithCopies(w *workload, rev *revision) *failedFromStart {
	if rev == nil || len(w.Logs) == 0 {
		return nil
	}
	obs := w.observe()
	var best *failedFromStart
	for _, p := range rev.Pods {
		if podReady(p) || p.Status.StartTime == nil || !active(p) {
			continue
		}
		i := obs.podOf(p.Name)
		if i < 0 {
			continue
		}
		started := p.Status.StartTime.Time
		unready := time.Time{}
		if rc := readyCondition(p); rc != nil && rc.Status != corev1.ConditionTrue {
			unready = rc.LastTransitionTime.Time
		}
		for _, tail := range obs.tailsOf(i) {
			if tail.from == tail.to || obs.list[tail.from].Last {
				continue
			}
			if f := earlyFailingLine(obs.list[tail.from:tail.to], started, unready); f != nil && (best == nil || f.At.Sub(f.Started) < best.At.Sub(best.Started)) {
				f.Pod = p.Name
				best = f
			}
		}
	}
	return best
}

// earlyFailingLine finds the first failing line logged within earlyWindow of started that the
// container logs again at or after unready (the moment the copy stopped being Ready; zero when
// unknown, then the last failing line of the tail stands for it). lines are one tail's
// observations.
func earlyFailingLine(lines []Observation, started, unready time.Time) *failedFromStart {
	// The first failing line inside the window; lines are in time order, so the scan stops at
	// the first failing line past it (a tail that starts later than the window ends at once).
	var first *Observation
	for k := range lines {
		l := &lines[k]
		if !l.failing() {
			continue
		}
		if !l.dated() || l.At().Before(started.Add(-time.Second)) {
			continue
		}
		if l.At().Sub(started) > earlyWindow {
			break
		}
		first = l
		break
	}
	if first == nil {
		return nil
	}
	key := failingKey(first)
	// The same failure after the copy stopped being Ready (or, without that moment, at the end
	// of the tail): read from the end, where it is.
	for k := len(lines) - 1; k >= 0; k-- {
		l := &lines[k]
		if !l.failing() || !l.dated() {
			continue
		}
		if !unready.IsZero() && l.At().Before(unready.Add(-endpointGrace)) {
			break
		}
		if failingKey(l) == key {
			return &failedFromStart{Line: first.Text, At: first.At(), Started: started}
		}
		if unready.IsZero() {
			break
		}
	}
	return nil
}

// failingKey is the failure a failing line reports, as the log evidence groups it.
func failingKey(l *Observation) string { return l.signal().Key }

// availableAfterRollout reports the Deployment's own record that the current revision served
// when its copies now crash (a crash loop is Ready between kills, so the ReplicaSet's counts prove
// nothing): its rollout completed long before every copy that exists now was created; or its
// Available condition went False long after the revision's ReplicaSet was created, and every
// copy of the revision that exists now was created at or after that moment. The condition
// changes only when availability does, so it was True in between; the copies that failed are
// replacements, not the ones that were available. A revision crash-looping from its start
// flaps the condition while its first copies still exist, and is not taken for one that served.
func availableAfterRollout(w *workload, rev *revision) string {
	d, ok := w.Object.(*appsv1.Deployment)
	if !ok || rev == nil || rev.ReplicaSet == nil || len(rev.Pods) == 0 {
		return ""
	}
	createdSince := func(at time.Time) bool {
		for _, p := range rev.Pods {
			if p.CreationTimestamp.Time.Before(at) {
				return false
			}
		}
		return true
	}
	for ix := range d.Status.Conditions {
		c := &d.Status.Conditions[ix]
		// A rollout that timed out never completed: old copies kept it Available.
		if c.Type == appsv1.DeploymentProgressing && c.Reason == reasonTimedOut {
			return ""
		}
	}
	for ix := range d.Status.Conditions {
		c := &d.Status.Conditions[ix]
		if c.Type != appsv1.DeploymentAvailable || c.Status != corev1.ConditionFalse {
			continue
		}
		at := c.LastTransitionTime.Time
		if at.Sub(rev.Created) <= servedReady || !createdSince(at.Add(-endpointGrace)) {
			break
		}
		return fmt.Sprintf("the Deployment was Available until %s, %s after revision %d rolled out; its copies were recreated since",
			at.UTC().Format(time.RFC3339), humanDuration(at.Sub(rev.Created)), rev.Number)
	}
	// The rollout completed with copies that are gone: those failing now came later. Its reason
	// is set once (lastUpdateTime), and not touched again while the rollout stays complete.
	for ix := range d.Status.Conditions {
		c := &d.Status.Conditions[ix]
		if c.Type != appsv1.DeploymentProgressing || c.Reason != reasonNewRSAvailable || !strings.Contains(c.Message, `"`+rev.Name+`"`) {
			continue
		}
		at := c.LastUpdateTime.Time
		if at.IsZero() {
			at = c.LastTransitionTime.Time
		}
		if !at.IsZero() && createdSince(at.Add(servedReady)) {
			return fmt.Sprintf("its rollout completed at %s (NewReplicaSetAvailable) and every copy that fails now was created since",
				at.UTC().Format(time.RFC3339))
		}
	}
	return ""
}

package diagnose

import (
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
)

// Serving is traffic served, and "served" means it did so for a while without the failure its
// copies show now. One definition for the counts, the headline, the timeline and the revision
// history:
//
// A serving episode of a revision is a stretch of time in which its copies were Ready, were
// ready endpoints of a Service meant for them where such a Service exists (a Service that
// routes to none of them now counts as routing to them only before its spec changed, when its
// managedFields date that), and did not log this failure. A revision served when one of its
// episodes lasted at least its probes' warm-up allowance.
//
// What dates an episode:
//   - a copy's Ready condition: Ready since its last transition, or Ready from its start until
//     the transition to False of a copy that never restarted (a crash loop is Ready between
//     kills, which is no service);
//   - the controller's record: the Deployment's Progressing condition says the revision's
//     rollout completed (NewReplicaSetAvailable), and it stayed available until its Available
//     condition went False, or until now; a StatefulSet reports the revision as its current one
//     with available replicas during an update;
//   - for a revision older than the current one with no copy left, that it ran at least a
//     progress deadline before the next replaced it (a presumption, and said as one);
//   - where no copy is seen (controller-only snapshots), the ReplicaSet's available count.
//
// "Without this failure": the copy's log lines that report a failure (facts.Signal) cut a
// Ready stretch, unless serving copies log the same failure too (then it is background, not
// this failure). A copy that logged its failure from its first seconds, every few seconds, was
// Ready for minutes without a stretch free of it: it never served, whatever readiness said. A
// record of the controller's (the rollout completed) counts unless every copy that made it
// true logged the failure throughout.
//
// Log lines without their own time cannot be placed; a stretch they cannot cut counts.

// episode is the longest stretch the engine knows a revision served without this failure.
type episode struct {
	From, To time.Time
	// Why says which fact shows it, as the report words it.
	Why string
	// Presumed: no fact shows it; the revision ran long before the next replaced it.
	Presumed bool
	// Now: a copy is Ready and routed to at the reference time with no failing line since it
	// turned Ready. It serves however short the episode is so far: the allowance tells a
	// Ready stretch that ended in a failure from service, and this one has not ended.
	Now bool
}

func (e *episode) length() time.Duration { return e.To.Sub(e.From) }

// failedFromStart is a revision whose copies were Ready for a while but logged this failure
// from their first moments: the line, the copy, its time and the copy's start.
type failedFromStart struct {
	Pod, Line   string
	At, Started time.Time
}

// earlyWindow is how soon after a copy started a failure signal counts as beginning with the
// copy: the app's start-up, its first dials and probes.
const earlyWindow = servedReady

// revisionAllowance is the warm-up allowance of a revision's copies: what their probes give
// them to become Ready, plus the status and EndpointSlice writes. A revision served when an
// episode lasted at least this long.
func revisionAllowance(rev *revision) time.Duration {
	if rev.Template != nil {
		return facts.ProbeAllowance(&rev.Template.Spec)
	}
	for _, p := range rev.Pods {
		return facts.ProbeAllowance(&p.Spec)
	}
	return endpointGrace
}

// servingEpisode finds the revision's longest serving episode before ref, and, when its copies
// were Ready but logged the failure from their first moments, that.
func servingEpisode(w *workload, rev *revision, ref time.Time, noise map[string]bool) (*episode, *failedFromStart, *episode) {
	allow := revisionAllowance(rev)
	var best *episode
	better := func(e *episode) {
		if e != nil && e.length() > 0 && (best == nil || best.Presumed && !e.Presumed || e.length() > best.length() && best.Presumed == e.Presumed) {
			best = e
		}
	}
	record := controllerEpisode(w, rev, ref)
	dirty := copyEpisodes(w, rev, ref, noise, allow, record == nil, better)
	var contested *episode
	if best == nil || best.length() < allow && !best.Now {
		if e := record; e != nil {
			if recordDisputed(w, rev, e.From, ref, dirty) {
				if dirty == nil {
					// Disputed only by how the copies' restarts add up, not by a line they
					// logged: a crash loop may have passed for available, or the copies may
					// have served and crashed since. Neither is shown.
					contested = routedBefore(w, e)
				}
			} else {
				better(routedBefore(w, e))
			}
		}
	}
	return best, dirty, contested
}

// routedBefore is the part of a controller's record during which the Services meant for the
// workload routed to it: the controllers count Ready copies, not traffic, so where such a
// Service routes to none of its copies now, the record counts only before that Service's spec
// changed, and not at all when the change is not dated.
func routedBefore(w *workload, e *episode) *episode {
	since, broken := serviceBrokenSince(w)
	if !broken {
		return e
	}
	if since.IsZero() || !since.After(e.From) {
		return nil
	}
	if since.Before(e.To) {
		c := *e
		c.To = since
		c.Why += "; Service " + brokenServiceName(w) + " changed at " + since.UTC().Format(time.RFC3339)
		return &c
	}
	return e
}

// brokenServiceName names a Service meant for the workload that routes to none of its copies.
func brokenServiceName(w *workload) string {
	if len(w.UnmatchedServices) > 0 {
		return w.UnmatchedServices[0].Name
	}
	return w.cls.unexposedService
}

// recordDisputed reports whether the copies that made a controller's record true (those that
// existed when it was made) show that they did not serve: a crash loop is Ready between kills,
// which the controllers count as available, and a copy that logged the failure from its first
// moments was Ready without serving.
func recordDisputed(w *workload, rev *revision, made, ref time.Time, dirty *failedFromStart) bool {
	for _, p := range rev.Pods {
		c := w.lifeOf(p)
		if c.Created.After(made) {
			continue
		}
		if c.BriefReadyOnly(ref) || dirty != nil && dirty.Pod == p.Name {
			return true
		}
	}
	return false
}

// copyEpisodes offers found each serving episode of the revision's copies; it returns the
// first failing line of a copy that was Ready at least the allowance but never free of the
// failure for that long.
// longLived allows the events of a copy older than their TTL to date its quiet run (quietUntil):
// only where the controller keeps no record of the revision serving, which dates it better.
func copyEpisodes(w *workload, rev *revision, ref time.Time, noise map[string]bool, allow time.Duration, longLived bool, found func(*episode)) *failedFromStart {
	brokenSince, broken := serviceBrokenSince(w)
	// Logs are read only when something fails: a workload whose copies all serve has served,
	// and a healthy workload's logs are never read.
	readLogs := w.Counts.Serving < w.Counts.Existing || w.Counts.Existing < w.Declared
	var dirty *failedFromStart
	for _, p := range rev.Pods {
		c := w.lifeOf(p)
		if c.Started.IsZero() {
			continue
		}
		i := w.observe().podOf(p.Name)
		if i < 0 {
			continue
		}
		rc := &c.ReadyCondition
		var from, to time.Time
		why := ""
		now := false
		switch {
		case c.Ready && !ref.IsZero() && c.BriefReadyOnly(ref):
			// Ready between the kills of a crash loop: no service.
			continue
		case c.Ready:
			from, to = rc.Changed, ref
			why = "copy " + p.Name + " is Ready"
			now = w.serving[i]
			// A copy that keeps failing to reach its own endpoint is routed to but does no
			// work: its failing lines cut its stretch below.
			if !w.serving[i] && (w.cls.dialing == nil || w.cls.dialing[i] == nil) {
				// Ready but not an endpoint of the Service meant for it: it served only
				// before that Service changed, when that is dated.
				if !broken || brokenSince.IsZero() || !brokenSince.After(from) {
					continue
				}
				to, why = brokenSince, "copy "+p.Name+" was Ready and an endpoint until Service "+brokenServiceName(w)+" changed"
			}
		case c.WasReady():
			from, to = c.Started, rc.Changed
			why = fmt.Sprintf("copy %s was Ready until %s", p.Name, to.UTC().Format(time.RFC3339))
			if broken {
				if brokenSince.IsZero() || !brokenSince.After(from) {
					continue
				}
				if brokenSince.Before(to) {
					to = brokenSince
				}
			}
		default:
			// A copy that restarted since: its Ready condition keeps only the last change.
			// Its events tell when its first failure came (the API server keeps an hour of
			// them): one that ran quietly past its warm-up, then failed, served until then.
			first, ok := quietUntil(w, p.Name, c, ref, longLived)
			if !ok || broken {
				continue
			}
			from, to = c.Started.Add(c.ProbeAllowance), first
			why = fmt.Sprintf("copy %s ran %s without a failure signal after its warm-up, until %s",
				p.Name, humanDuration(to.Sub(from)), to.UTC().Format(time.RFC3339))
		}
		if !to.After(from) {
			continue
		}
		if !readLogs {
			found(&episode{From: from, To: to, Why: why, Now: now})
			continue
		}
		clean, first := cleanStretch(w, i, from, to, noise)
		if clean.To.Sub(clean.From) >= allow || now && clean.From.Equal(from) && clean.To.Equal(to) {
			found(&episode{From: clean.From, To: clean.To, Why: why + clean.why(from, to), Now: now && clean.From.Equal(from) && clean.To.Equal(to)})
			continue
		}
		if first != nil && to.Sub(from) >= allow && first.At.Sub(c.Started) <= earlyWindow &&
			(dirty == nil || first.At.Before(dirty.At)) {
			dirty = &failedFromStart{Pod: p.Name, Line: first.Text, At: first.At, Started: c.Started}
		}
		found(&episode{From: clean.From, To: clean.To, Why: why})
	}
	return dirty
}

// eventTTL is how long the API server keeps events by default (kube-apiserver --event-ttl).
const eventTTL = time.Hour

// quietUntil returns the first failure signal among a copy's events, when the snapshot can be
// trusted to hold all of them and it came after the copy's warm-up. The snapshot holds them all
// when the copy is younger than the events' TTL, or (longLived) when one of its events is a series
// the kubelet began with the copy and still adds to (its first time within the creation and
// warm-up of the copy's start): the kubelet's recorder keeps the first time and count of a
// repeated event however long ago it began (client-go's EventCorrelator), and writes the series
// again after the API server dropped it, so a copy that ran for days before failing keeps that
// record. A copy whose Ready condition went False quietly, before its first failure signal,
// served only until then.
func quietUntil(w *workload, name string, c *facts.Copy, ref time.Time, longLived bool) (time.Time, bool) {
	young := ref.Sub(c.Created) < eventTTL
	if ref.IsZero() || !young && !longLived {
		return time.Time{}, false
	}
	warm := c.ProbeAllowance
	start := c.Started
	var first time.Time
	seen, fromStart := false, false
	evs := w.observe().eventList()
	for k := range evs {
		e := &evs[k]
		if e.Object.Kind != "Pod" || e.Object.Name != name {
			continue
		}
		seen = true
		// The first container start follows the image pull: a series begun within the time
		// a copy takes to create its containers began with the copy.
		if !e.Since.IsZero() && !e.Since.Before(start) && e.Since.Sub(start) <= stuckCreating+warm {
			fromStart = true
		}
		if !facts.EventFailing(e.Status, e.Reason, e.Text) {
			continue
		}
		if at := e.Since; !at.IsZero() && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	if !seen || !young && !fromStart || first.IsZero() || first.Sub(start) <= warm {
		return time.Time{}, false
	}
	if young {
		return first, true
	}
	// Ready went False at its last transition; a copy that was not Ready long before its first
	// failure signal did not serve up to that signal.
	if rc := &c.ReadyCondition; rc.Seen && rc.Status != corev1.ConditionTrue {
		at := rc.Changed
		if at.Sub(start) <= warm {
			return time.Time{}, false
		}
		if at.Before(first) {
			first = at
		}
	}
	return first, true
}

// stretch is a part of a Ready stretch free of failing lines.
type stretch struct{ From, To time.Time }

// why says how the clean part relates to the Ready stretch it is part of.
func (s stretch) why(from, to time.Time) string {
	if s.From.Equal(from) && s.To.Equal(to) {
		return ""
	}
	return fmt.Sprintf(" (%s of it free of failing lines)", humanDuration(s.To.Sub(s.From)))
}

// failureRunGap is the longest pause inside one run of failing lines: a program that retries
// waits at most about as long as the kubelet's own longest back-off (5 minutes) between tries,
// so failing lines further apart than that are separate failures, and the stretch between them
// was free of either.
const failureRunGap = facts.CrashBackoffMax

// cleanStretch returns the longest part of [from, to] outside every run of failing lines of copy
// i (lines of one failure no further apart than failureRunGap; background keys, which serving
// copies log too, left out), and the first failing line the copy logged at all.
func cleanStretch(w *workload, i int, from, to time.Time, noise map[string]bool) (stretch, *Observation) {
	obs := w.observe()
	var times []time.Time
	var first *Observation
	for _, t := range obs.tailsOf(i) {
		for k := t.from; k < t.to; k++ {
			l := &obs.list[k]
			if !l.Dated() {
				continue
			}
			sig := l.Signal()
			if !sig.Failing || noise[sig.Key] {
				continue
			}
			at := l.At
			if first == nil || at.Before(first.At) {
				first = l
			}
			times = append(times, at)
		}
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	best := stretch{}
	consider := func(a, b time.Time) {
		if a.Before(from) {
			a = from
		}
		if b.After(to) {
			b = to
		}
		if b.Sub(a) > best.To.Sub(best.From) {
			best = stretch{a, b}
		}
	}
	// The gaps between runs, and before the first and after the last.
	free := from
	for j := 0; j < len(times); {
		runStart := times[j]
		for j+1 < len(times) && times[j+1].Sub(times[j]) <= failureRunGap {
			j++
		}
		consider(free, runStart)
		free = times[j]
		j++
	}
	// After the last failing line, a pause no longer than one inside a run is that run going
	// on (a retry every two minutes read between two tries), not a stretch free of it.
	if len(times) == 0 || to.Sub(free) > failureRunGap {
		consider(free, to)
	}
	return best, first
}

// backgroundKeys are the failures copies that serve now log too: a line every serving copy
// logs is the app's background, not the failure of the copies that do not serve.
func backgroundKeys(w *workload) map[string]bool {
	if w.Counts.Serving == 0 || w.Counts.Serving >= w.Counts.Existing && w.Counts.Existing >= w.Declared {
		return nil
	}
	obs := w.observe()
	var keys map[string]bool
	for i := range w.Pods {
		if !w.serving[i] {
			continue
		}
		from, to := obs.logLines(i)
		for k := from; k < to; k++ {
			if sig := obs.list[k].Signal(); sig.Failing {
				if keys == nil {
					keys = map[string]bool{}
				}
				keys[sig.Key] = true
			}
		}
	}
	return keys
}

// serviceBrokenSince reports whether a Service meant for the workload routes to none of its
// copies now (it selects none of them, or sends traffic to a port none exposes), and since
// when, where the Service's managedFields date its last spec change (zero otherwise).
func serviceBrokenSince(w *workload) (time.Time, bool) {
	var svcs []*corev1.Service
	svcs = append(svcs, w.UnmatchedServices...)
	if name := w.cls.unexposedService; name != "" {
		for _, s := range w.Services {
			if s.Name == name {
				svcs = append(svcs, s)
			}
		}
	}
	if len(svcs) == 0 {
		return time.Time{}, false
	}
	var since time.Time
	for _, s := range svcs {
		at, _ := serviceSpecChangedAt(s)
		if at.IsZero() {
			return time.Time{}, true
		}
		if at.After(since) {
			since = at
		}
	}
	return since, true
}

// controllerEpisode reads the controller's record of the revision serving: a Deployment's
// completed rollout (available from then until its Available condition went False, or now), a
// StatefulSet's current revision with available replicas during an update, or, when no copy of
// the revision is seen, its ReplicaSet's available count.
func controllerEpisode(w *workload, rev *revision, ref time.Time) *episode {
	if rs := rev.ReplicaSet; rs != nil {
		if _, ok := w.Object.(*appsv1.Deployment); ok {
			if e := rolloutCompleted(w.controller(), rs, ref); e != nil {
				return e
			}
		}
		if len(rev.Pods) == 0 && w.cls.sight.byController() && (rs.Status.AvailableReplicas > 0 || rs.Status.ReadyReplicas > 0) {
			return &episode{From: rs.CreationTimestamp.Time, To: ref, Why: fmt.Sprintf("ReplicaSet %s reports %d available", rs.Name, rs.Status.AvailableReplicas)}
		}
	}
	if st, ok := w.Object.(*appsv1.StatefulSet); ok && st.Status.CurrentRevision == rev.Name && st.Status.AvailableReplicas > 0 &&
		st.Status.CurrentRevision != st.Status.UpdateRevision {
		return &episode{From: rev.Created, To: ref, Why: fmt.Sprintf("StatefulSet reports %d available on %s", st.Status.AvailableReplicas, rev.Name)}
	}
	return nil
}

// rolloutCompleted is the Deployment's record that it completed a rollout of rs: its
// Progressing condition's reason NewReplicaSetAvailable for rs, set once when the rollout
// completed (lastUpdateTime) and not touched while it stays complete. It stayed available until
// the Available condition went False after that moment, or until now. A rollout that timed out
// never completed.
func rolloutCompleted(d *facts.Controller, rs *appsv1.ReplicaSet, ref time.Time) *episode {
	var done time.Time
	for ix := range d.Conditions {
		c := &d.Conditions[ix]
		if c.Type != string(appsv1.DeploymentProgressing) || c.Reason != reasonNewRSAvailable || !strings.Contains(c.Message, `"`+rs.Name+`"`) {
			continue
		}
		done = c.Updated
		if done.IsZero() {
			done = c.Changed
		}
	}
	if done.IsZero() {
		return nil
	}
	// A rollout completes only with every copy available, so an Available condition False since
	// the very second it completed went False after it: the times are whole seconds.
	until := ref
	for ix := range d.Conditions {
		c := &d.Conditions[ix]
		if c.Type == string(appsv1.DeploymentAvailable) && c.Status != string(corev1.ConditionTrue) && !c.Changed.Before(done) {
			until = c.Changed
		}
	}
	if !until.After(done) {
		return nil
	}
	return &episode{From: done, To: until, Why: fmt.Sprintf("its rollout completed at %s (NewReplicaSetAvailable) and it stayed available for %s",
		done.UTC().Format(time.RFC3339), humanDuration(until.Sub(done)))}
}

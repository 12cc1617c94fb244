package diagnose

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// TimelineKind names what kind of moment a timeline entry is.
type TimelineKind string

// The timeline kinds.
const (
	// TimelineRevision: a revision rolled out (its ReplicaSet or ControllerRevision was created).
	TimelineRevision TimelineKind = "revision"
	// TimelineCondition: a controller condition changed (Available, Progressing).
	TimelineCondition TimelineKind = "condition"
	// TimelineOnset: the first failure signal of the copies that fail now.
	TimelineOnset TimelineKind = "onset"
	// TimelineServing: the serving count fell as copies stopped being Ready.
	TimelineServing TimelineKind = "serving"
	// TimelineRestart: the newest container termination.
	TimelineRestart TimelineKind = "restart"
	// TimelineDependency: a dated change to an object the workload depends on.
	TimelineDependency TimelineKind = "dependency"
)

// TimelineEntry is one dated moment of a workload's story, as the snapshot can date it.
type TimelineEntry struct {
	At      time.Time    `json:"at"`
	Kind    TimelineKind `json:"kind"`
	Message string       `json:"message"`
	// Object is what the moment concerns: ReplicaSet/x, Pod/x, Service/x, the workload.
	Object string `json:"object"`
	// ServingFrom and ServingTo are the serving count before and after a serving entry.
	ServingFrom *int32 `json:"servingFrom,omitempty"`
	ServingTo   *int32 `json:"servingTo,omitempty"`
}

// onset is the first failure signal of the copies that fail now.
type onset struct {
	At   time.Time
	What string
	Pod  string
	// Line is the failing log line, when a line is the first signal.
	Line string
}

// findOnset dates the failure by its earliest fact: the first failing log line of any level
// (with its own time; lines serving copies log too are background), container termination or
// Ready→False transition of the failing copies of the current revision, or the first of their
// Warning events and their controller's (FailedCreate, FailedScheduling...). A probe failure
// counts for a copy that was never Ready; one that was Ready once failed its probes while
// warming up too, and the event's first moment is the warm-up's. Zero when the snapshot dates
// nothing.
func findOnset(w *workload) onset {
	var o onset
	// earlier is asked before a message is written: most moments are not the earliest.
	earlier := func(at time.Time) bool { return !at.IsZero() && (o.At.IsZero() || at.Before(o.At)) }
	consider := func(at time.Time, what, pod, line string) {
		if earlier(at) {
			o = onset{At: at.UTC(), What: what, Pod: pod, Line: line}
		}
	}
	failing := map[string]bool{}
	neverReady := map[string]bool{}
	for _, f := range w.cls.copies {
		// A Job's pod that failed is its failure, finished or not, whichever Job it ran in.
		failedRun := isBatch(w.Kind) && f.Dies != ""
		if !failedRun && (!f.Current || f.Serving || !f.Active) {
			continue
		}
		p := f.Pod
		failing[p.Name] = true
		neverReady[p.Name] = !f.Ready && !f.Life.WasReady()
		if t := terminatedAt(w.observe().podObservations(p.Name)); failedRun && !t.IsZero() {
			consider(t, "copy "+p.Name+" terminated: "+f.Message, p.Name, "")
		}
		if rc := &f.Life.ReadyCondition; rc.Seen && rc.Status != corev1.ConditionTrue && f.Life.WasReady() {
			consider(rc.Changed, "copy "+p.Name+" stopped being Ready", p.Name, "")
		}
		if lt := f.LastTerminated; lt != nil && earlier(lt.At) {
			consider(lt.At, "copy "+p.Name+" terminated: "+lt.TerminationText(), p.Name, "")
		}
		if ff := f.Rev; ff != nil && ff.FailedFromStart != nil && ff.FailedFromStart.Pod == p.Name {
			consider(ff.FailedFromStart.At, "copy "+p.Name+" logged a failing line", p.Name, ff.FailedFromStart.Line)
		}
	}
	obs := w.observe()
	noise := backgroundKeys(w)
	for i, f := range w.cls.copies {
		if !failing[f.Pod.Name] {
			continue
		}
		// The first failing line of each tail that carries its own time.
		for _, tail := range obs.tailsOf(i) {
			for k := tail.from; k < tail.to; k++ {
				l := &obs.list[k]
				if sig := l.Signal(); !sig.Failing || noise[sig.Key] {
					continue
				}
				if l.Dated() {
					if !earlier(l.At) {
						break
					}
					consider(l.At, "copy "+l.Object.Name+" logged a failing line", l.Object.Name, l.Text)
					break
				}
			}
		}
	}
	for k := obs.events.from; k < obs.events.to; k++ {
		e := &obs.list[k]
		if !facts.EventFailing(e.Status, e.Reason, e.Text) || e.Object.Kind == "Pod" && !failing[e.Object.Name] {
			continue
		}
		if e.Reason == "Unhealthy" && !neverReady[e.Object.Name] {
			// A copy that was Ready once failed probes while warming up too: the event's
			// first moment is then the warm-up's, not the failure's.
			continue
		}
		pod := ""
		if e.Object.Kind == "Pod" {
			pod = e.Object.Name
		}
		if !earlier(e.Since) {
			continue
		}
		consider(e.Since, e.Object.Kind+" "+e.Object.Name+": "+e.Reason+": "+rules.Clip(e.Text, 120), pod, "")
	}
	return o
}

// servingFell dates the fall of the serving count: copies whose Ready condition went False after
// they had been Ready, the count before and after, and the last of those moments.
func servingFell(w *workload) (from, to int32, at time.Time, ok bool) {
	var times []time.Time
	for _, f := range w.cls.copies {
		if !f.Active || f.Ready {
			continue
		}
		if rc := &f.Life.ReadyCondition; rc.Seen && f.Life.WasReady() {
			times = append(times, rc.Changed)
		}
	}
	if len(times) == 0 {
		return 0, 0, time.Time{}, false
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	to = w.Counts.Serving
	return to + int32(len(times)), to, times[len(times)-1].UTC(), true
}

// buildTimeline lists the moments the snapshot can date, oldest first.
func buildTimeline(w *workload, top *Suspect, o onset) []TimelineEntry {
	h := &w.cls.history
	n := len(h.Revisions) + 4
	_, isDeployment := w.Object.(*appsv1.Deployment)
	if isDeployment {
		n += len(w.controller().Conditions)
	}
	// Written in the worker's room and copied out at its length: room for every moment the
	// workload might have was twice what most have, in every report.
	out := w.texts.timelineRoom(n)
	add := func(at time.Time, kind TimelineKind, object, msg string) {
		if !at.IsZero() {
			out = append(out, TimelineEntry{At: at.UTC(), Kind: kind, Object: object, Message: msg})
		}
	}
	self := w.object()
	// Built for every workload, healthy ones too: plain concatenation, one allocation a message.
	for _, rev := range h.Revisions {
		obj := self
		if rev.ReplicaSet != nil {
			obj = "ReplicaSet/" + rev.Name
		}
		if rev.Job != nil {
			add(rev.Created, TimelineRevision, "Job/"+rev.Name, jobMoment(rev))
			continue
		}
		num := strconv.FormatInt(rev.Number, 10)
		switch {
		case rev.Served != "":
			add(rev.Created, TimelineRevision, obj, "revision "+num+" rolled out; served ("+rev.Served+")")
		case rev.FailedFromStart != nil:
			add(rev.Created, TimelineRevision, obj, "revision "+num+" rolled out; its copies failed from their first moments")
		default:
			add(rev.Created, TimelineRevision, obj, "revision "+num+" rolled out")
		}
	}
	if isDeployment {
		conds := w.controller().Conditions
		for ix := range conds {
			c := &conds[ix]
			// The reason can change without the status (Progressing stays True from
			// ReplicaSetUpdated to NewReplicaSetAvailable): the update is the later moment.
			at := c.Changed
			if c.Updated.After(at) {
				at = c.Updated
			}
			msg := c.Type + " is " + c.Status
			if c.Reason != "" {
				msg = c.Type + " is " + c.Status + ": " + c.Reason
			}
			add(at, TimelineCondition, self, msg)
		}
	}
	if w.Shape.Broken() {
		if !o.At.IsZero() {
			msg := "the failure began: " + o.What
			if o.Line != "" {
				msg += ": " + rules.Clip(facts.ReadLine(o.Line).Text, 160)
			}
			obj := self
			if o.Pod != "" {
				obj = "Pod/" + o.Pod
			}
			add(o.At, TimelineOnset, obj, msg)
		}
	}
	if from, to, at, ok := servingFell(w); ok {
		add(at, TimelineServing, self, fmt.Sprintf("serving fell %d→%d", from, to))
		out[len(out)-1].ServingFrom, out[len(out)-1].ServingTo = &from, &to
	}
	var last *Observation
	for _, f := range w.cls.copies {
		if lt := f.LastTerminated; lt != nil && (last == nil || lt.At.After(last.At)) {
			last = lt
		}
	}
	if last != nil {
		add(last.At, TimelineRestart, last.Object.String(), "newest termination: "+last.TerminationText())
	}
	if c := changedUnderneath(w, top); c != nil {
		msg := c.Object + "'s spec changed"
		if c.Manager != "" {
			msg += " (by " + c.Manager + ")"
		}
		add(c.At, TimelineDependency, c.Object, msg)
	}
	sortTimeline(out)
	return append(make([]TimelineEntry, 0, len(out)), out...)
}

func sortTimeline(out []TimelineEntry) {
	sortStable(out, func(a, b TimelineEntry) bool { return a.At.Before(b.At) })
}

// onsetEvidence puts the key moments in one sentence: when serving fell, how long after the
// current revision rolled out, and what the first failing signal names that the revision changed.
func onsetEvidence(w *workload, top *Suspect, cause Cause, o onset) *Evidence {
	if !w.Shape.Broken() {
		return nil
	}
	h := &w.cls.history
	var parts []string
	from, to, fell, ok := servingFell(w)
	if ok {
		s := fmt.Sprintf("serving fell %d→%d at %s", from, to, clock(fell))
		if h.Current != nil && !h.Current.Created.IsZero() {
			s += fmt.Sprintf(", %s after revision %d rolled out", preciseDuration(fell.Sub(h.Current.Created)), h.Current.Number)
		}
		parts = append(parts, s)
	}
	if !o.At.IsZero() && o.Line != "" {
		s := fmt.Sprintf("the first failing line (%s) is %q", clock(o.At), rules.Clip(facts.ReadLine(o.Line).Text, 120))
		if top != nil && top.Value != "" && strings.Contains(o.Line, top.Value) {
			s = fmt.Sprintf("the first failing line (%s) names %s", clock(o.At), top.Value)
			if cause == CauseSpec && top.PreviousValue != "" && top.PreviousValue != top.Value && h.Current != nil {
				s += fmt.Sprintf(", which revision %d changed from %s", h.Current.Number, top.PreviousValue)
			}
		}
		if cur := h.Current; cur != nil && cur.FailedFromStart != nil {
			s += fmt.Sprintf(", %s after its copy started", preciseDuration(cur.FailedFromStart.At.Sub(cur.FailedFromStart.Started)))
		}
		parts = append(parts, s)
	}
	if c := changedUnderneath(w, top); c != nil {
		parts = append(parts, fmt.Sprintf("%s changed at %s, after revision %d served", c.Object, clock(c.At), h.Current.Number))
	}
	if len(parts) == 0 {
		return nil
	}
	at := o.At
	if at.IsZero() {
		at = fell
	}
	e := Evidence{Kind: "Onset", Message: strings.Join(parts, "; "), Source: SourceRevisionHistory, Objects: []string{w.object()}, Count: 1}
	if !at.IsZero() {
		e.LastSeen = &at
	}
	return &e
}

// clock writes a moment as on-call reads it beside a terminal clock.
func clock(t time.Time) string { return t.UTC().Format("15:04:05") }

// preciseDuration keeps the seconds of a short span ("2m30s"): in an incident, minutes matter.
func preciseDuration(d time.Duration) string {
	if d < 0 || d >= 10*time.Minute {
		return humanDuration(d)
	}
	d = d.Round(time.Second)
	if m := int(d / time.Minute); m > 0 {
		return fmt.Sprintf("%dm%02ds", m, int((d%time.Minute)/time.Second))
	}
	return fmt.Sprintf("%ds", int(d/time.Second))
}

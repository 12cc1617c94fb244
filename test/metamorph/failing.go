package metamorph

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// earlyWindow is how soon after a copy started a failure signal must appear for the copy to
// count as failing from its start: its start-up, first dials and first probes.
const earlyWindow = 60 * time.Second

// failingLine reports whether a log line signals a failure by its level (warn or worse) or by
// a failure word of the rewordings table, and when it was written.
func failingLine(line string) (time.Time, bool) {
	if !mayHaveFailingLevel(line) && !mayReword(line) {
		return time.Time{}, false
	}
	r := parseLine(line)
	e, ok := r.entry()
	if !ok || !e.dated {
		return time.Time{}, false
	}
	return e.at, failingLevel(r.levelName()) || rewordPattern.MatchString(line)
}

// podStart is when the copy started: its status's start time, else its creation.
func podStart(p *corev1.Pod) time.Time {
	if p.Status.StartTime != nil {
		return p.Status.StartTime.Time
	}
	return p.CreationTimestamp.Time
}

func condition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// podEvents returns the events about the copy.
func podEvents(s *snapshot.Snapshot, p *corev1.Pod) []*corev1.Event {
	var out []*corev1.Event
	for _, e := range s.Events {
		if e.InvolvedObject.Kind == "Pod" && e.InvolvedObject.Namespace == p.Namespace && e.InvolvedObject.Name == p.Name {
			out = append(out, e)
		}
	}
	return out
}

// eventFirst is when an event was first seen.
func eventFirst(e *corev1.Event) time.Time {
	switch {
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.LastTimestamp.Time
}

// eventLast is when an event was last seen.
func eventLast(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.FirstTimestamp.Time
}

// firstFailure returns the copy's first failure signal within earlyWindow of its start: a
// failing log line, or a Warning event about it.
func firstFailure(s *snapshot.Snapshot, p *corev1.Pod) (time.Time, bool) {
	start := podStart(p)
	var first time.Time
	early := func(t time.Time) {
		if !t.Before(start.Add(-time.Second)) && t.Sub(start) <= earlyWindow && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	for _, l := range s.Logs {
		if l.Namespace != p.Namespace || l.Pod != p.Name || l.Previous {
			continue
		}
		for _, line := range l.Lines {
			if at, ok := failingLine(line); ok {
				early(at)
			}
		}
	}
	for _, e := range podEvents(s, p) {
		if e.Type == corev1.EventTypeWarning {
			early(eventFirst(e))
		}
	}
	return first, !first.IsZero()
}

// failingFromStart reports whether the copy signalled a failure within earlyWindow of its
// start.
func failingFromStart(s *snapshot.Snapshot, p *corev1.Pod) bool {
	_, ok := firstFailure(s, p)
	return ok
}

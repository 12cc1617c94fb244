package tui

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/redact"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// The console shows the engine's reports through the redaction pass: its diagnose functions
// are the engine's followed by the pass, so every dataset, row and diagnosis screen holds
// reports with their credentials hidden, and the engine still compares the real values. The
// raw data the diagnosis screen shows of a workload (its template, its copies' logs, events and
// messages) goes through the workload's redact.Scope as the screen builds its tabs.

// shownDiagnose is the engine's Diagnose followed by the pass; r nil shows everything.
func shownDiagnose(r *redact.Redactor) diagnoseFn {
	if r == nil {
		return diagnose.Diagnose
	}
	return func(s *snapshot.Snapshot) *diagnose.Report { return r.Report(diagnose.Diagnose(s), s) }
}

// shownRediagnose is the engine's Rediagnose followed by the pass over what it made anew: the
// diagnoses it kept from prev, a report of this pass, are redacted already.
func shownRediagnose(r *redact.Redactor) rediagnoseFn {
	if r == nil {
		return diagnose.Rediagnose
	}
	return func(prev *diagnose.Report, s *snapshot.Snapshot, changed func(kind, namespace, name string) bool) *diagnose.Report {
		return r.ReportAfter(prev, diagnose.Rediagnose(prev, s, changed), s)
	}
}

// shownEvents returns evs with their messages passed through sc, copying those that change.
func shownEvents(sc *redact.Scope, evs []*corev1.Event) []*corev1.Event {
	if sc == nil {
		return evs
	}
	out := evs
	for i, e := range evs {
		if m := sc.Text(e.Message); m != e.Message {
			if &out[0] == &evs[0] {
				out = append([]*corev1.Event(nil), evs...)
			}
			cp := *e
			cp.Message = m
			out[i] = &cp
		}
	}
	return out
}

// shownCopies passes the copies' messages (a container's termination message is the app's own
// words) through sc.
func shownCopies(sc *redact.Scope, copies []copyView) []copyView {
	if sc == nil {
		return copies
	}
	for i := range copies {
		copies[i].Message = sc.Text(copies[i].Message)
	}
	return copies
}

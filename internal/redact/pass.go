package redact

import (
	"strings"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Report returns rep as a front end may show it: every suspect's value and previous value, the
// reasons, evidence, timeline, headline, fix, signal gaps, template changes, visibility
// reasons and shared dependencies' failing lines with their credentials marked. s is the snapshot rep was diagnosed from: a workload's
// pod templates say which of its env vars and arguments are credentials, and the values to look
// for in free text. rep is not changed; what differs is copied. A nil Redactor returns rep.
func (r *Redactor) Report(rep *diagnose.Report, s *snapshot.Snapshot) *diagnose.Report {
	return r.report(rep, s, nil)
}

// report is Report leaving the diagnoses done says are redacted already.
func (r *Redactor) report(rep *diagnose.Report, s *snapshot.Snapshot, done func(*diagnose.Diagnosis) bool) *diagnose.Report {
	if r == nil || rep == nil {
		return rep
	}
	ws := &workloads{s: s}
	var out *diagnose.Report
	own := func() {
		if out == nil {
			cp := *rep
			cp.Workloads = append([]diagnose.Diagnosis(nil), rep.Workloads...)
			out = &cp
		}
	}
	for i := range rep.Workloads {
		d := &rep.Workloads[i]
		if done != nil && done(d) {
			continue
		}
		if nd := r.diagnosis(d, ws.find(d.Kind, d.Namespace, d.Name)); nd != d {
			own()
			out.Workloads[i] = *nd
		}
	}
	if vis := r.visibility(rep.Visibility); vis != nil {
		own()
		out.Visibility = vis
	}
	if sds := r.sharedDependencies(rep.SharedDependencies, ws); sds != nil {
		own()
		out.SharedDependencies = sds
	}
	if out == nil {
		return rep
	}
	return out
}

// ReportAfter is Report for rep, a report made from prev (a redacted report: this pass's
// output) and s by diagnose.Rediagnose, which keeps the diagnoses of the workloads that did not
// change: a diagnosis that shares its parts with prev's (its Detail, its suspects, evidence and
// timeline) is prev's, redacted already, and is not passed again. Under churn nearly every
// diagnosis is such a one, and passing them all would cost the whole pass per update.
func (r *Redactor) ReportAfter(prev, rep *diagnose.Report, s *snapshot.Snapshot) *diagnose.Report {
	if r == nil || rep == nil || prev == nil {
		return r.Report(rep, s)
	}
	type key struct{ kind, namespace, name string }
	was := make(map[key]*diagnose.Diagnosis, len(prev.Workloads))
	for i := range prev.Workloads {
		d := &prev.Workloads[i]
		was[key{d.Kind, d.Namespace, d.Name}] = d
	}
	return r.report(rep, s, func(d *diagnose.Diagnosis) bool {
		p := was[key{d.Kind, d.Namespace, d.Name}]
		return p != nil && p.Detail == d.Detail && p.Headline == d.Headline && p.Fix == d.Fix && p.Waived == d.Waived &&
			sameArray(p.Suspects, d.Suspects) && sameArray(p.Evidence, d.Evidence) &&
			sameArray(p.Timeline, d.Timeline) && sameArray(p.SignalGaps, d.SignalGaps)
	})
}

// sameArray says whether a and b are the same slice of one array (or both empty).
func sameArray[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// Diagnosis is Report for one diagnosis of s.
func (r *Redactor) Diagnosis(d *diagnose.Diagnosis, s *snapshot.Snapshot) *diagnose.Diagnosis {
	if r == nil || d == nil {
		return d
	}
	ws := &workloads{s: s}
	return r.diagnosis(d, ws.find(d.Kind, d.Namespace, d.Name))
}

// diagnosis returns d, or a copy with its credentials marked.
func (r *Redactor) diagnosis(d *diagnose.Diagnosis, w *workload) *diagnose.Diagnosis {
	var out *diagnose.Diagnosis
	own := func() *diagnose.Diagnosis {
		if out == nil {
			cp := *d
			out = &cp
		}
		return out
	}
	text := func(s string) string { return r.text(s, w.known) }
	if h := text(d.Headline); h != d.Headline {
		own().Headline = h
	}
	if f := text(d.Fix); f != d.Fix {
		own().Fix = f
	}
	if wv := d.Waived; wv != nil {
		// The reason is the annotation's text, written by anyone who can edit the workload.
		if reason := text(wv.Reason); reason != wv.Reason {
			own().Waived = &diagnose.Waiver{What: wv.What, Reason: reason}
		}
	}
	if ss := r.suspects(d, w); ss != nil {
		own().Suspects = ss
	}
	if es := editSlice(d.Evidence, func(e *diagnose.Evidence) bool {
		m := text(e.Message)
		changed := m != e.Message
		e.Message = m
		return changed
	}); es != nil {
		own().Evidence = es
	}
	if ts := editSlice(d.Timeline, func(e *diagnose.TimelineEntry) bool {
		m := text(e.Message)
		changed := m != e.Message
		e.Message = m
		return changed
	}); ts != nil {
		own().Timeline = ts
	}
	if gs := editSlice(d.SignalGaps, func(g *diagnose.SignalGap) bool {
		m := text(g.Message)
		changed := m != g.Message
		g.Message = m
		return changed
	}); gs != nil {
		own().SignalGaps = gs
	}
	if d.Detail != nil {
		if cs := editSlice(d.Detail.Changes, func(c *diagnose.Change) bool {
			var path []fieldpath.Segment
			if w.fields && c.Path != nil {
				path = fieldpath.Of(c.Path)
			}
			prev, cur := r.field(w, path, c.Previous), r.field(w, path, c.Current)
			changed := prev != c.Previous || cur != c.Current
			c.Previous, c.Current = prev, cur
			return changed
		}); cs != nil {
			detail := *d.Detail
			detail.Changes = cs
			own().Detail = &detail
		}
	}
	if out == nil {
		return d
	}
	return out
}

// suspects returns d's suspects with their credentials marked, or nil when none has any.
func (r *Redactor) suspects(d *diagnose.Diagnosis, w *workload) []diagnose.Suspect {
	own := d.Kind + "/" + d.Name
	return editSlice(d.Suspects, func(s *diagnose.Suspect) bool {
		var path []fieldpath.Segment
		if w.fields && s.Path != nil && (s.Object == "" || s.Object == own) {
			path = s.Steps()
		}
		v, p, why := r.field(w, path, s.Value), r.field(w, path, s.PreviousValue), r.text(s.Reason, w.known)
		changed := v != s.Value || p != s.PreviousValue || why != s.Reason
		s.Value, s.PreviousValue, s.Reason = v, p, why
		return changed
	})
}

// field is a template field's value as shown: marked whole when the field is a credential by
// its name (an env var's value, a credential flag's argument), else with the credentials its
// text shows marked.
func (r *Redactor) field(w *workload, path []fieldpath.Segment, value string) string {
	if value == "" || IsMark(value) {
		return value
	}
	if atPath(w.spec, path, value) {
		return r.Mark(value)
	}
	return r.text(value, w.known)
}

// visibility returns the visibility lines with the credentials their reasons show marked (an
// error may quote a URL), or nil when none has any.
func (r *Redactor) visibility(vs []snapshot.Visibility) []snapshot.Visibility {
	return editSlice(vs, func(v *snapshot.Visibility) bool {
		t := r.Text(v.Reason)
		changed := t != v.Reason
		v.Reason = t
		return changed
	})
}

// sharedDependencies returns sds with the credentials in their failing lines and targets
// marked (a connection string's password in a failing line, what its members' specs hold), or
// nil when none has one.
func (r *Redactor) sharedDependencies(sds []diagnose.SharedDependency, ws *workloads) []diagnose.SharedDependency {
	return editSlice(sds, func(sd *diagnose.SharedDependency) bool {
		var known []string
		for _, m := range sd.Workloads {
			kind, rest, _ := strings.Cut(m, "/")
			ns, name, _ := strings.Cut(rest, "/")
			known = append(known, ws.find(kind, ns, name).known...)
		}
		f, t := r.text(sd.Failure, known), r.text(sd.Target, known)
		changed := f != sd.Failure || t != sd.Target
		sd.Failure, sd.Target = f, t
		return changed
	})
}

// editSlice applies edit to a copy of each element and returns a copy of xs holding the edited
// ones, or nil when edit changed none: the caller's slice is never written, and an unchanged
// slice is not copied.
func editSlice[T any](xs []T, edit func(*T) bool) []T {
	var out []T
	for i := range xs {
		x := xs[i]
		if !edit(&x) {
			continue
		}
		if out == nil {
			out = append([]T(nil), xs...)
		}
		out[i] = x
	}
	return out
}

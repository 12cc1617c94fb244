package diagnose

import (
	"strings"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// Reasoning without logs. Logs are often unreadable (the kubelet unreachable through the API
// server, rotated, an identity without pods/log). Then no failing line names a field, and the
// fields the failing revision changed are the suspects: ranked by what the failure looks like,
// so an env value naming an endpoint ranks above a CPU request when readiness fails, and an
// image above its args when the pull fails.

// failingLogsUnread reports whether none of the failing copies of the current revision has a
// log in the snapshot although their containers ran (a copy that never started has no log to
// read, and says why in its status).
func failingLogsUnread(w *workload) (unread int, ok bool) {
	if w.Shape != ShapeLiveButIdle && w.Shape != ShapeStartsAndDies {
		return 0, false
	}
	logged := map[string]bool{}
	for _, l := range w.Logs {
		if l != nil && len(l.Lines) > 0 {
			logged[l.Pod] = true
		}
	}
	for _, f := range w.cls.copies {
		if !f.Current || f.Serving || !f.Active || f.NeverStarts != "" {
			continue
		}
		if logged[f.Pod.Name] {
			return 0, false
		}
		unread++
	}
	return unread, unread > 0
}

// Extra scores by failure look, added to scoreUnnamed: below any rule that read a message.
const (
	lookStrong = 25
	lookFair   = 15
	lookWeak   = 5
)

// changesByFailureLook reranks the changed-field suspects when the failing copies' logs were not
// read, by what the shape and signals say the failure looks like.
func (r *ranker) changesByFailureLook() {
	if _, ok := failingLogsUnread(r.w); !ok {
		return
	}
	for _, s := range r.found {
		if s.Rule != rules.RuleChangedField || s.Object != r.object || s.Path == nil {
			continue
		}
		s.Score = scoreUnnamed + failureLook(r.w.Shape, s.Path.String(), s.Value)
		s.Confidence = confidenceOf(s.Score)
		if len(r.w.Changes) == 0 {
			// The current revision's own change set: it served since.
			s.Reason = strings.TrimSuffix(s.Reason, "; no failure names a field") + "; the failing copies' logs were not read, so nothing names a field: ranked by what the failure looks like"
			continue
		}
		s.Reason = "changed in the revision current when the failure began; the failing copies' logs were not read, so nothing names a field: ranked by what the failure looks like"
	}
}

// failureLook scores a changed field against the failure's look: readiness failing (copies run,
// do not serve) points at where the app connects and at the probe; copies that start and die
// point at what they run and with what.
func failureLook(shape Shape, path, value string) int {
	in := func(segs ...string) bool {
		for _, seg := range segs {
			i := strings.Index(path, "."+seg)
			if i < 0 {
				continue
			}
			if rest := path[i+1+len(seg):]; rest == "" || rest[0] == '.' || rest[0] == '[' {
				return true
			}
		}
		return false
	}
	switch shape {
	case ShapeLiveButIdle:
		switch {
		case in("readinessProbe"):
			return lookStrong
		case in("env", "args", "command") && rules.NamesEndpoint(value):
			return lookStrong
		case in("env", "envFrom", "args", "image"):
			return lookFair
		case in("resources"):
			return lookWeak
		}
	case ShapeStartsAndDies:
		switch {
		case in("image", "command", "args"):
			return lookStrong
		case in("env", "envFrom", "livenessProbe", "startupProbe", "volumeMounts", "securityContext") || in("limits"):
			return lookFair
		case in("resources"):
			return lookWeak
		}
	}
	return 0
}

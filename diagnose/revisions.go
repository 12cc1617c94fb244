package diagnose

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// history is a workload's revisions, oldest first, and which of them the engine reads as
// current and as the last that served.
type history struct {
	Revisions []*revision
	Current   *revision
	// LastServing is the newest revision that served (possibly Current); nil when none did.
	LastServing *revision
	// ServedEarly: the current revision served, but only in its early life, and the failure
	// began there; LastServing is then the revision that served before it.
	ServedEarly bool
	// Unrevisioned are copies no recorded revision accounts for.
	Unrevisioned []*corev1.Pod
	// NoReplicaSets: a Deployment whose ReplicaSets the snapshot does not hold; its copies were
	// found by selector and its revisions are unknown.
	NoReplicaSets bool
	// revAt[i] is the revision of the workload's copy i (workload.Pods[i]), nil for one no
	// revision accounts for (indexRevisions).
	revAt []*revision
}

// defaultProgressDeadline is the Deployment default, also used as the warm-up allowance for
// kinds without a progress deadline.
const defaultProgressDeadline = 600 * time.Second

// revisionOf decodes a ControllerRevision. Its data is the strategic-merge patch the StatefulSet
// and DaemonSet controllers store: {"spec":{"template":{..., "$patch":"replace"}}}, which holds
// the whole template.
func revisionOf(cr *appsv1.ControllerRevision) *revision {
	rev := &revision{Number: cr.Revision, Name: cr.Name, Created: cr.CreationTimestamp.Time}
	var data struct {
		Spec struct {
			Template *corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	raw := cr.Data.Raw
	if raw == nil && cr.Data.Object != nil {
		raw, _ = json.Marshal(cr.Data.Object)
	}
	if raw != nil && json.Unmarshal(raw, &data) == nil {
		rev.Template = data.Spec.Template
	}
	return rev
}

// earlyLife is how long after its rollout a revision is still proving itself: the progress
// deadline (the Deployment default for kinds without one), or its copies' warm-up allowance
// when that is longer. A failure that begins inside it is the revision's to answer for, even
// if its copies served a little first.
func earlyLife(w *workload, rev *revision) time.Duration {
	return max(progressDeadline(w.Object), revisionAllowance(rev))
}

// inEarlyLife reports whether the onset lies in the early life of rev.
func inEarlyLife(w *workload, rev *revision, o onset) bool {
	return rev != nil && !o.At.IsZero() && !rev.Created.IsZero() && o.At.Sub(rev.Created) <= earlyLife(w, rev)
}

// settleBaseline picks the revision the current one is compared with: the last that served,
// unless the current revision served only in its early life and the failure began there, when
// the comparison is with the revision that served before it (its change set is what the
// failure may come from).
func (w *workload) settleBaseline(o onset) {
	h := &w.cls.history
	cur := h.Current
	if cur == nil || h.LastServing != cur || !inEarlyLife(w, cur, o) || cur.Job != nil {
		return
	}
	h.ServedEarly = true
	h.LastServing = nil
	for i := len(h.Revisions) - 1; i >= 0; i-- {
		if rev := h.Revisions[i]; rev != cur && rev.Served != "" && rev.Number < cur.Number {
			h.LastServing = rev
			return
		}
	}
}

// findServing decides which revisions served (serving.go) and which is the last that did:
// the current revision when it served, else the newest older revision that did.
func (w *workload) findServing() {
	h := &w.cls.history
	deadline := progressDeadline(w.Object)
	var ref time.Time
	if w.Snap != nil {
		ref = w.Snap.ReferenceTime
	}
	var noise map[string]bool
	noiseRead := false
	for i, rev := range h.Revisions {
		if rev.Job != nil {
			// A Job served when it succeeded; Ready says nothing of pods meant to finish.
			rev.Served = servedJob(rev)
			continue
		}
		if !noiseRead {
			noise, noiseRead = backgroundKeys(w), true
		}
		ep, dirty, contested := servingEpisode(w, rev, ref, noise)
		rev.Episode, rev.FailedFromStart, rev.Contested = ep, nil, contested
		if ep != nil && (ep.length() >= revisionAllowance(rev) || ep.Now) {
			rev.Served = ep.Why
		} else if dirty != nil {
			rev.FailedFromStart = dirty
		}
		if rev.Served == "" && rev != h.Current && i+1 < len(h.Revisions) {
			next := h.Revisions[i+1]
			if lived := next.Created.Sub(rev.Created); !rev.Created.IsZero() && lived >= deadline {
				rev.Served = fmt.Sprintf("presumed: revision %d ran %s before revision %d replaced it", rev.Number, humanDuration(lived), next.Number)
				rev.Episode = &episode{From: rev.Created, To: next.Created, Why: rev.Served, Presumed: true}
			}
		}
	}
	if h.Current != nil && h.Current.Served != "" {
		h.LastServing = h.Current
		return
	}
	for i := len(h.Revisions) - 1; i >= 0; i-- {
		rev := h.Revisions[i]
		if rev != h.Current && rev.Served != "" && (h.Current == nil || rev.Number < h.Current.Number) {
			h.LastServing = rev
			return
		}
	}
}

func progressDeadline(obj any) time.Duration {
	if d, ok := obj.(*appsv1.Deployment); ok && d.Spec.ProgressDeadlineSeconds != nil {
		return time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second
	}
	return defaultProgressDeadline
}

// diffRevisions fills the workload's revision fields: the previous template and the changed
// paths between the last serving revision and the current one.
func (w *workload) diffRevisions() {
	h := &w.cls.history
	w.OwnChanges = nil
	if h.LastServing != nil && h.LastServing == h.Current && h.Current.Template != nil {
		if _, unread := failingLogsUnread(w); unread {
			w.OwnChanges = ownChanges(w, h)
		}
	}
	if h.LastServing == nil {
		return
	}
	w.LastServingRevision = strconv.FormatInt(h.LastServing.Number, 10)
	if h.LastServing == h.Current || h.LastServing.Template == nil {
		return
	}
	prev := templateWithout(h.LastServing.Template, podTemplateHashLabel)
	cur := templateWithout(w.Template, podTemplateHashLabel)
	if h.LastServing.Job != nil {
		prev, cur = withoutJobLabels(prev), withoutJobLabels(cur)
	}
	w.PreviousTemplate = prev
	w.Changes = diffTemplates(w.TemplatePath, prev, cur)
}

// ownChanges diffs the current revision with the one before it.
func ownChanges(w *workload, h *history) []Change {
	var prev *revision
	for _, rev := range h.Revisions {
		if rev != h.Current && rev.Number < h.Current.Number && rev.Template != nil && (prev == nil || rev.Number > prev.Number) {
			prev = rev
		}
	}
	if prev == nil {
		return nil
	}
	a := templateWithout(prev.Template, podTemplateHashLabel)
	b := templateWithout(w.Template, podTemplateHashLabel)
	if prev.Job != nil {
		a, b = withoutJobLabels(a), withoutJobLabels(b)
	}
	return diffTemplates(w.TemplatePath, a, b)
}

// templateWithout is t without the labels keys: a copy of the template's top and its labels
// only, which the diff and the rules read and nothing writes. A deep copy of two templates per
// workload was a tenth of what diagnosing a broken workload allocated.
func templateWithout(t *corev1.PodTemplateSpec, keys ...string) *corev1.PodTemplateSpec {
	c := *t
	if t.Labels != nil {
		c.Labels = make(map[string]string, len(t.Labels))
		for k, v := range t.Labels {
			if !slices.Contains(keys, k) {
				c.Labels[k] = v
			}
		}
	}
	return &c
}

func humanDuration(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	case d >= 2*time.Minute:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	default:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
}

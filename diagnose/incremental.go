package diagnose

import (
	"slices"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Rediagnose is Diagnose for a snapshot s that differs from the one prev was made of only in
// objects that concern the workloads changed reports true for (their own objects, their
// ReplicaSets and revisions, their copies, the events and logs of these), and in its
// visibility: those workloads are diagnosed again, every other workload keeps its diagnosis
// from prev, and a workload prev does not hold is diagnosed. Kept diagnoses stay at prev's
// reference time; at the same reference time the report equals Diagnose(s). A change to
// anything several workloads may share (a Service, an EndpointSlice that came, went, or was or
// became empty, a claim, a quota, a node) calls for Diagnose; a slice updated otherwise
// concerns only the workloads of the copies it lists before and after. A nil prev diagnoses
// everything.
//
// The visibility is Rediagnose's own business, as prev.Visibility says what s's predecessor
// held: a line that changed in a namespace (or in all, with no namespace) is only evidence of
// that namespace's workloads, so their kept diagnoses have that evidence written again, unless
// the line is of a kind the engine also counts by (visibilityCounted), which has them diagnosed
// again. Under churn the watch's "N log tails not read yet" changes with nearly every snapshot.
func Rediagnose(prev *Report, s *snapshot.Snapshot, changed func(kind, namespace, name string) bool) *Report {
	if prev == nil {
		return Diagnose(s)
	}
	type key struct{ kind, namespace, name string }
	had := make(map[key]int, len(prev.Workloads))
	for i := range prev.Workloads {
		d := &prev.Workloads[i]
		had[key{d.Kind, d.Namespace, d.Name}] = i
	}
	s.Index()
	r := newReport(s)
	vis := visibilityChanges(prev.Visibility, s.Visibility)
	keptAt := make([]bool, len(prev.Workloads))
	nKept := 0
	nvOf := map[string][]Evidence{}
	fresh := collectSome(s, func(kind, namespace, name string) bool {
		if i, ok := had[key{kind, namespace, name}]; ok && !changed(kind, namespace, name) && vis(namespace) != visibilityCounts {
			keptAt[i] = true
			nKept++
			return false
		}
		return true
	})
	diagnosed := &Report{Workloads: make([]Diagnosis, 0, len(fresh))}
	for _, w := range fresh {
		diagnosed.Workloads = append(diagnosed.Workloads, diagnoseWorkload(s, w))
	}
	sortWorkloads(diagnosed)
	// prev is in the report's order, so the kept diagnoses, taken in its order, are too: they
	// are merged with the few diagnosed again rather than all sorted once more, which cost
	// as much as the rest of an update at 2,000 workloads. A prev out of order is sorted.
	r.Workloads = make([]Diagnosis, 0, len(fresh)+nKept)
	next, ordered := diagnosed.Workloads, true
	var last *Diagnosis
	for i := range prev.Workloads {
		if !keptAt[i] {
			continue
		}
		d := &prev.Workloads[i]
		sev := d.Shape.Severity()
		if last != nil && compareWorkloads(last, d, last.Shape.Severity(), sev) > 0 {
			ordered = false
		}
		last = d
		for len(next) > 0 && compareWorkloads(&next[0], d, next[0].Shape.Severity(), sev) < 0 {
			r.Workloads = append(r.Workloads, next[0])
			next = next[1:]
		}
		r.Workloads = append(r.Workloads, *d)
		if vis(d.Namespace) == visibilityEvidenceOnly {
			w := &r.Workloads[len(r.Workloads)-1]
			nv, ok := nvOf[d.Namespace]
			if !ok {
				nv = namespaceVisibility(s, d.Namespace)
				nvOf[d.Namespace] = nv
			}
			w.Evidence = rewriteVisibility(w.Evidence, nv)
		}
	}
	r.Workloads = append(r.Workloads, next...)
	for i := range r.Workloads {
		r.Summary[r.Workloads[i].Shape]++
	}
	if !ordered {
		sortWorkloads(r)
	}
	groupSharedDependencies(r)
	return r
}

// visibilityCounted are the kinds of visibility line the engine reads beyond evidence: no pod
// read (podsUnseen), no metrics read (metricsUnread) and no volume read (volumesSeen). A change
// of any other kind's line changes only the NotVisible evidence visibilityEvidence writes.
var visibilityCounted = map[string]bool{"Pod": true, "Prometheus": true, "PersistentVolume": true}

type visibilityChange int

const (
	visibilitySame visibilityChange = iota
	visibilityEvidenceOnly
	visibilityCounts
)

// visibilityChanges says, per namespace, how the visibility lines that concern it (its own and
// those of no namespace, in order) changed from prev to next.
func visibilityChanges(prev, next []snapshot.Visibility) func(namespace string) visibilityChange {
	if slices.Equal(prev, next) {
		return func(string) visibilityChange { return visibilitySame }
	}
	of := func(vs []snapshot.Visibility, ns string, counted bool) []snapshot.Visibility {
		var out []snapshot.Visibility
		for _, v := range vs {
			if (v.Namespace == "" || v.Namespace == ns) && (!counted || visibilityCounted[v.Kind]) {
				out = append(out, v)
			}
		}
		return out
	}
	seen := map[string]visibilityChange{}
	return func(ns string) visibilityChange {
		c, ok := seen[ns]
		if !ok {
			switch {
			case !slices.Equal(of(prev, ns, true), of(next, ns, true)):
				c = visibilityCounts
			case !slices.Equal(of(prev, ns, false), of(next, ns, false)):
				c = visibilityEvidenceOnly
			}
			seen[ns] = c
		}
		return c
	}
}

// rewriteVisibility is a kept diagnosis's evidence with its NotVisible items replaced by nv, a
// namespace's NotVisible items as visibilityEvidence and list make them (namespaceVisibility),
// in the place gatherEvidence would give them. gatherEvidence's items come first, sorted by
// evidenceLess; then the metrics' items (SourceMetrics) and the onset, which only those passes
// write. The kept items stay sorted once the NotVisible ones are taken out, and a stable sort
// of two sorted runs is their merge, the first run's item first on a tie: so nv is merged in,
// instead of the whole list sorted again for each of a churning namespace's workloads.
func rewriteVisibility(old []Evidence, nv []Evidence) []Evidence {
	end := len(old)
	for i, e := range old {
		if e.Source == SourceMetrics || (e.Source == SourceRevisionHistory && e.Kind == "Onset") {
			end = i
			break
		}
	}
	out := make([]Evidence, 0, end+len(nv)+len(old)-end)
	j := 0
	for i := range old[:end] {
		e := &old[i]
		if e.Source == SourceVisibility && e.Kind == "NotVisible" {
			continue
		}
		for j < len(nv) && evidenceLess(&nv[j], e) {
			out = append(out, nv[j])
			j++
		}
		out = append(out, *e)
	}
	out = append(out, nv[j:]...)
	return append(out, old[end:]...)
}

// namespaceVisibility is the NotVisible evidence s's visibility gives every workload of a
// namespace, sorted as list sorts it. The items are shared by the workloads that cite them;
// their Objects are empty, so nothing sorts or grows them in place.
func namespaceVisibility(s *snapshot.Snapshot, namespace string) []Evidence {
	b := newEvidence()
	visibilityEvidence(s, b, &workload{Namespace: namespace})
	return b.list()
}

package diagnose

import "github.com/kubediagnose/kubectl-diagnose/internal/snapshot"

// Rediagnose is Diagnose for a snapshot s that differs from the one prev was made of only in
// objects that concern the workloads changed reports true for (their own objects, their
// ReplicaSets and revisions, their copies, the events and logs of these): those are diagnosed
// again, every other workload keeps its diagnosis from prev, and a workload prev does not hold
// is diagnosed. Kept diagnoses stay at prev's reference time; at the same reference time the
// report equals Diagnose(s). A change to anything several workloads may share (a Service, an
// EndpointSlice that came, went, or was or became empty, a claim, a quota, a node, the
// visibility) calls for Diagnose; a slice updated otherwise concerns only the workloads of the
// copies it lists before and after. A nil prev diagnoses everything.
func Rediagnose(prev *Report, s *snapshot.Snapshot, changed func(kind, namespace, name string) bool) *Report {
	if prev == nil {
		return Diagnose(s)
	}
	type key struct{ kind, namespace, name string }
	had := make(map[key]*Diagnosis, len(prev.Workloads))
	for i := range prev.Workloads {
		d := &prev.Workloads[i]
		had[key{d.Kind, d.Namespace, d.Name}] = d
	}
	s.Index()
	r := newReport(s)
	var kept []*Diagnosis
	fresh := collectSome(s, func(kind, namespace, name string) bool {
		if d := had[key{kind, namespace, name}]; d != nil && !changed(kind, namespace, name) {
			kept = append(kept, d)
			return false
		}
		return true
	})
	r.Workloads = make([]Diagnosis, 0, len(fresh)+len(kept))
	for _, d := range kept {
		r.Workloads = append(r.Workloads, *d)
	}
	for _, w := range fresh {
		r.Workloads = append(r.Workloads, diagnoseWorkload(s, w))
	}
	for i := range r.Workloads {
		r.Summary[r.Workloads[i].Shape]++
	}
	sortWorkloads(r)
	return r
}

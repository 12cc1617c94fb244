package diagnose

import (
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Diagnose classifies every workload of the snapshot. It is pure: the snapshot's reference time
// is "now".
//
// PLACEHOLDER: the engine helper replaces this with the real engine.
func Diagnose(s *snapshot.Snapshot) *Report {
	s.Index()
	r := &Report{APIVersion: APIVersion, Kind: ReportKind, ReferenceTime: s.ReferenceTime, Source: s.Source,
		Visibility: s.Visibility, Summary: map[Shape]int{}}
	for _, d := range s.Deployments {
		r.Workloads = append(r.Workloads, Diagnosis{Kind: "Deployment", Namespace: d.Namespace, Name: d.Name, Shape: ShapeUnknown, Cause: CauseUnknown})
	}
	for _, w := range r.Workloads {
		r.Summary[w.Shape]++
	}
	return r
}

// Find returns the diagnosis of one workload, or nil.
func (r *Report) Find(kind, namespace, name string) *Diagnosis {
	for i := range r.Workloads {
		w := &r.Workloads[i]
		if w.Kind == kind && w.Namespace == namespace && w.Name == name {
			return w
		}
	}
	return nil
}

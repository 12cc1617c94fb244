package snapshot

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FilterNamespaces returns a new snapshot holding only the objects, logs and visibility entries of
// the given namespaces; Nodes, which have none, are all kept. Its Namespaces become ns (sorted,
// without duplicates), so a caller checks HasNamespace first to report a namespace the source
// never read. An empty ns returns an unfiltered copy. Objects are shared, not copied, and are
// read-only as always; the indexes are built anew for the new snapshot.
func (s *Snapshot) FilterNamespaces(ns []string) *Snapshot {
	keepNS := map[string]bool{}
	for _, n := range ns {
		keepNS[n] = true
	}
	all := len(keepNS) == 0
	keep := func(namespace string) bool { return all || keepNS[namespace] }

	out := &Snapshot{
		ReferenceTime: s.ReferenceTime,
		Source:        s.Source,
	}
	out.Source.Skipped = maps.Clone(s.Source.Skipped)
	if all {
		out.Namespaces = slices.Clone(s.Namespaces)
	} else {
		out.Namespaces = slices.Sorted(maps.Keys(keepNS))
	}
	for _, v := range s.Visibility {
		if v.Namespace == "" || keep(v.Namespace) {
			out.Visibility = append(out.Visibility, v)
		}
	}
	out.Deployments = filter(s.Deployments, keep)
	out.StatefulSets = filter(s.StatefulSets, keep)
	out.DaemonSets = filter(s.DaemonSets, keep)
	out.ReplicaSets = filter(s.ReplicaSets, keep)
	out.ControllerRevisions = filter(s.ControllerRevisions, keep)
	out.Pods = filter(s.Pods, keep)
	out.Events = filter(s.Events, keep)
	out.Services = filter(s.Services, keep)
	out.PersistentVolumeClaims = filter(s.PersistentVolumeClaims, keep)
	out.ResourceQuotas = filter(s.ResourceQuotas, keep)
	out.EndpointSlices = filter(s.EndpointSlices, keep)
	out.Nodes = slices.Clone(s.Nodes)
	for _, l := range s.Logs {
		if keep(l.Namespace) {
			out.Logs = append(out.Logs, l)
		}
	}
	if s.Metrics != nil {
		out.Metrics = &Metrics{Source: s.Metrics.Source}
		for _, m := range s.Metrics.Series {
			if keep(m.Workload.Namespace) {
				out.Metrics.Series = append(out.Metrics.Series, m)
			}
		}
	}
	return out
}

func filter[T metav1.Object](objs []T, keep func(string) bool) []T {
	var out []T
	for _, o := range objs {
		if keep(o.GetNamespace()) {
			out = append(out, o)
		}
	}
	return out
}

package snapshot

import (
	"maps"
	"slices"
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
	everywhere := func(string) bool { return true }
	for i := range Kinds {
		if k := &Kinds[i]; k.Cluster {
			k.ops.filter(out, s, everywhere)
		} else {
			k.ops.filter(out, s, keep)
		}
	}
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

package metrics

import "github.com/kubediagnose/kubectl-diagnose/internal/snapshot"

// Declares reports whether a workload of snap names its own throughput query, by annotation
// or config rule, rather than falling back to the common request counters: a gate can then
// wait for that query's first sample instead of taking its silence for "nothing to measure".
func (s *Source) Declares(snap *snapshot.Snapshot, w snapshot.ObjectKey) bool {
	for _, t := range targets(snap, s.cfg.Rules) {
		if t.key == w {
			return len(t.throughput) > 0 && t.throughput[0].origin != snapshot.OriginDefault
		}
	}
	return false
}

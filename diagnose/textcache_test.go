package diagnose

import (
	"reflect"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// alone diagnoses every workload of s on its own, with no text cache shared between them.
func alone(s *snapshot.Snapshot) *Report {
	s.Index()
	r := newReport(s)
	for _, w := range collectWorkloads(s) {
		r.Workloads = append(r.Workloads, diagnoseWorkload(s, w))
	}
	for i := range r.Workloads {
		r.Summary[r.Workloads[i].Shape]++
	}
	sortWorkloads(r)
	// The report's own pass over the diagnoses, as Diagnose makes it.
	groupSharedDependencies(r)
	return r
}

// TestSharedTextsChangeNothing: the workers' caches of what log texts say give the reports
// each workload diagnosed alone gives, observations and their indexes included, on every
// scenario and on synthetic clusters whose broken workloads log the same texts.
func TestSharedTextsChangeNothing(t *testing.T) {
	cases := map[string]func() *snapshot.Snapshot{
		"healthy 1000x10": func() *snapshot.Snapshot { return syntheticHealthyClusterOf(1000, 100, 10) },
		"synthetic 300":   func() *snapshot.Snapshot { return syntheticCluster(300, 300) },
	}
	for _, v := range verdictDirs(t) {
		cases[v.ID] = func() *snapshot.Snapshot { return loadDump(t, v.Dir, loadExpected(t, v.Dir)) }
	}
	shared := 0
	for name, build := range cases {
		s := build()
		got, want := Diagnose(s), alone(s)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the report differs from its workloads diagnosed alone", name)
		}
		if name == "healthy 1000x10" {
			texts := map[string]int{}
			for i := range want.Workloads {
				seen := map[string]bool{}
				for _, o := range want.Workloads[i].Detail.Observations() {
					if o.Kind == ObsLogLine && !seen[o.Text] {
						seen[o.Text] = true
						texts[o.Text]++
					}
				}
			}
			for _, n := range texts {
				if n > 1 {
					shared++
				}
			}
		}
	}
	if shared == 0 {
		t.Error("no log text is logged by two workloads: the cache is never shared and the test proves nothing")
	}
}

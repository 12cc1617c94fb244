package diagnose

import (
	"reflect"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// A worker writes each workload's observations, object references, signals, log lines and
// token cells into rooms the next workload writes over. A diagnosis must not depend on what
// the rooms held before: each workload diagnosed with rooms of its own (none shared), and the
// workloads diagnosed in reverse order through one worker's rooms, give the report Diagnose
// gives, observations and all.
func TestWorkerRoomsAsFresh(t *testing.T) {
	cases := map[string]func() *snapshot.Snapshot{
		"mixed logs":     mixedLogCluster,
		"dated lines":    datedLogCluster,
		"healthy 300x10": func() *snapshot.Snapshot { return syntheticHealthyClusterOf(300, 40, 10) },
		"synthetic 300":  func() *snapshot.Snapshot { return syntheticCluster(300, 300) },
	}
	for _, v := range verdictDirs(t) {
		cases[v.ID] = func() *snapshot.Snapshot { return loadDump(t, v.Dir, loadExpected(t, v.Dir)) }
	}
	signals := 0
	for name, build := range cases {
		s := build()
		want := withListsWrittenOut(Diagnose(s))
		for _, order := range []string{"alone", "reversed through one worker"} {
			ws := collectWorkloads(s)
			ds := make([]Diagnosis, len(ws))
			texts := &textCache{}
			for k := range ws {
				i := k
				if order != "alone" {
					i = len(ws) - 1 - k
					texts.reset()
					ws[i].texts = texts
				}
				ds[i] = diagnoseWorkload(s, ws[i])
			}
			if order != "alone" {
				for _, b := range texts.sigs.blocks {
					signals += len(b)
				}
			}
			r := newReport(s)
			r.Workloads = ds
			for i := range ds {
				r.Summary[ds[i].Shape]++
			}
			sortWorkloads(r)
			got := withListsWrittenOut(r)
			if !reflect.DeepEqual(got, want) {
				for i := range got.Workloads {
					if !reflect.DeepEqual(got.Workloads[i], want.Workloads[i]) {
						t.Errorf("%s, %s: %s/%s is diagnosed otherwise", name, order, got.Workloads[i].Kind, got.Workloads[i].Name)
						break
					}
				}
				t.Errorf("%s, %s: the report differs from Diagnose's", name, order)
			}
		}
	}
	if signals == 0 {
		t.Fatal("no signal was written into a worker's room: the cases do not exercise it")
	}
}

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
			groupSharedDependencies(r)
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

// A plan of a few workloads (Rediagnose's, after an update) asks the snapshot about every copy's
// events and logs instead of filing the namespace's: its workloads are collected with the same
// events and log tails, and diagnosed alike.
func TestAFewWorkloadsAskForEachCopy(t *testing.T) {
	cases := map[string]func() *snapshot.Snapshot{
		"mixed logs":   mixedLogCluster,
		"dated lines":  datedLogCluster,
		"synthetic 40": func() *snapshot.Snapshot { return syntheticCluster(40, 10) },
	}
	for _, v := range verdictDirs(t) {
		cases[v.ID] = func() *snapshot.Snapshot { return loadDump(t, v.Dir, loadExpected(t, v.Dir)) }
	}
	logged, evented := 0, 0
	for name, build := range cases {
		s := build()
		s.Index()
		full := collectWorkloads(s)
		if p := planCollect(s, func(string, string, string) bool { return true }); p.len() > fewWorkloads || !p.logged.every {
			t.Fatalf("%s: %d workloads are not a few, or the plan filed its copies", name, p.len())
		}
		few := collectSome(s, func(string, string, string) bool { return true })
		if len(few) != len(full) {
			t.Fatalf("%s: %d workloads, want %d", name, len(few), len(full))
		}
		for i := range full {
			if !reflect.DeepEqual(few[i].Events, full[i].Events) || !reflect.DeepEqual(few[i].Logs, full[i].Logs) {
				t.Errorf("%s: %s/%s: the events or log tails differ from the filed plan's", name, full[i].Kind, full[i].Name)
			}
			if len(full[i].Logs) > 0 {
				logged++
			}
			if len(full[i].Events) > 0 {
				evented++
			}
			got, want := diagnoseWorkload(s, few[i]), diagnoseWorkload(s, full[i])
			r1, r2 := &Report{Workloads: []Diagnosis{got}}, &Report{Workloads: []Diagnosis{want}}
			if !reflect.DeepEqual(withListsWrittenOut(r1), withListsWrittenOut(r2)) {
				t.Errorf("%s: %s/%s is diagnosed otherwise", name, full[i].Kind, full[i].Name)
			}
		}
	}
	if logged == 0 || evented == 0 {
		t.Fatalf("%d workloads with log tails, %d with events: the cases do not exercise the lookups", logged, evented)
	}
}

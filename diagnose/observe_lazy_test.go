package diagnose

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// eagerLists diagnoses s keeping each workload's observation list as the engine read it, log
// lines and all, as the report held it before the lines were written out on demand.
func eagerLists(s *snapshot.Snapshot) *Report {
	keepObservationLists = true
	defer func() { keepObservationLists = false }()
	return Diagnose(s)
}

// TestLazyLogLinesAsList holds the list Detail.Observations writes out of the tails to the list
// the engine read (every observation, log lines with their copy, container, previous mark,
// text and time, in order, so the indexes evidence and suspects cite name the same facts), and
// the rest of each diagnosis to the one keeping that list, with reflect.DeepEqual: on every
// scenario, the mixed-log cluster (two containers, previous tails, texts some copies log,
// lines twice in a row), the synthetic clusters and a cluster whose tails carry JSON, klog
// and undated lines.
func TestLazyLogLinesAsList(t *testing.T) {
	cases := map[string]func() *snapshot.Snapshot{
		"mixed logs":      mixedLogCluster,
		"healthy 1000x10": func() *snapshot.Snapshot { return syntheticHealthyClusterOf(1000, 100, 10) },
		"synthetic 300":   func() *snapshot.Snapshot { return syntheticCluster(300, 300) },
		"dated lines":     datedLogCluster,
	}
	for _, v := range verdictDirs(t) {
		cases[v.ID] = func() *snapshot.Snapshot { return loadDump(t, v.Dir, loadExpected(t, v.Dir)) }
	}
	lines, previous, dated, tails := 0, 0, 0, 0
	for name, build := range cases {
		s := build()
		s.Index()
		got, want := Diagnose(s), eagerLists(s)
		if len(got.Workloads) != len(want.Workloads) {
			t.Fatalf("%s: %d workloads, want %d", name, len(got.Workloads), len(want.Workloads))
		}
		for i := range got.Workloads {
			g, w := got.Workloads[i], want.Workloads[i]
			list := g.Detail.Observations()
			if !reflect.DeepEqual(list, w.Detail.observations.kept) {
				t.Errorf("%s: %s/%s: the observations written out differ from the list read (%d against %d)", name, g.Kind, g.Name, len(list), len(w.Detail.observations.kept))
				continue
			}
			tails += len(g.Detail.observations.tails)
			for _, o := range list {
				if o.Kind == ObsLogLine {
					lines++
					if o.Last {
						previous++
					}
					if !o.At.IsZero() {
						dated++
					}
				}
			}
			gd, wd := *g.Detail, *w.Detail
			gd.observations, wd.observations = obsLog{}, obsLog{}
			g.Detail, w.Detail = &gd, &wd
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%s: %s/%s: the diagnosis differs when the report keeps the list", name, g.Kind, g.Name)
			}
		}
	}
	t.Logf("%d log lines (%d of previous containers, %d dated) from %d tails", lines, previous, dated, tails)
	if lines < 10000 || previous == 0 || dated == 0 || dated == lines || tails < 1000 {
		t.Fatalf("the cases read %d log lines (%d of previous containers, %d dated) from %d tails: too few to hold the lists to each other", lines, previous, dated, tails)
	}
}

// datedLogCluster is a failing Deployment whose copies log JSON, klog, RFC 3339 and undated
// lines, some texts in both the current and the previous container.
func datedLogCluster() *snapshot.Snapshot {
	c := newCluster()
	d := c.deployment("dated", 4, 1, "", 2*time.Hour)
	rs := c.replicaSet(d, 1, 4, 2*time.Hour, nil)
	for j := range 4 {
		p := c.pod(rs, fmt.Sprintf("d%d", j), time.Hour, crashLooping("Error", 1, 5))
		c.s.Logs = append(c.s.Logs,
			snapshot.ContainerLog{Namespace: testNS, Pod: p.Name, Container: "app", Lines: []string{
				`{"level":"error","ts":"2026-11-24T11:05:00.123Z","msg":"dial tcp 10.0.0.7:5432: connect: connection refused"}`,
				"E1124 11:05:01.000000       1 main.go:42] cannot reach upstream.internal:8443",
				"2026-11-24T11:05:02Z fatal: DATABASE_URL is not set",
				"undated: giving up",
				"undated: giving up",
			}})
		if j%2 == 0 {
			c.s.Logs = append(c.s.Logs, snapshot.ContainerLog{Namespace: testNS, Pod: p.Name, Container: "app", Previous: true, Lines: []string{
				"2026-11-24T10:59:00+01:00 starting",
				"undated: giving up",
			}})
		}
	}
	return c.s
}

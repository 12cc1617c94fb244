package diagnose

import (
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// changedCopies returns s with the copies of every third workload among the first n replaced by
// crash-looping ones (new objects, as an informer stores an update), and the workloads changed.
func changedCopies(s *snapshot.Snapshot, n int) (*snapshot.Snapshot, map[string]bool) {
	next := cloneSnapshot(s)
	next.Pods = append([]*corev1.Pod(nil), s.Pods...)
	changed := map[string]bool{}
	for i, p := range next.Pods {
		owner := metav1.GetControllerOf(p)
		d := p.Namespace + "/" + owner.Name[:len("svc-00000")]
		if len(changed) >= n && !changed[d] {
			continue
		}
		// Owners are svc-NNNNN-<hash>.
		if k, err := strconv.Atoi(owner.Name[len("svc-"):len("svc-00000")]); err != nil || k%3 != 0 {
			continue
		}
		c := p.DeepCopy()
		c.Status.Conditions = nil
		crashLooping("Error", 1, 6)(c)
		next.Pods[i] = c
		changed[d] = true
	}
	return next, changed
}

// cloneSnapshot copies what s holds, but not its indexes, as the watch builds each snapshot anew.
func cloneSnapshot(s *snapshot.Snapshot) *snapshot.Snapshot {
	next := &snapshot.Snapshot{}
	sv, nv := reflect.ValueOf(s).Elem(), reflect.ValueOf(next).Elem()
	for i := 0; i < sv.NumField(); i++ {
		if sv.Type().Field(i).IsExported() {
			nv.Field(i).Set(sv.Field(i))
		}
	}
	return next
}

// At one reference time, diagnosing again only the workloads whose copies changed gives the
// report a full diagnosis gives, while the kept workloads' diagnoses are reused.
func TestRediagnoseEqualsAFullDiagnosis(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n, perNS int
	}{
		{"one namespace", 60, 60},
		{"ten per namespace", 60, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prev := syntheticCluster(tc.n, tc.perNS)
			before := Diagnose(prev)
			next, changed := changedCopies(prev, 8)
			if len(changed) == 0 {
				t.Fatal("no workload changed: the test changes nothing")
			}
			asked := 0
			got := Rediagnose(before, next, func(kind, namespace, name string) bool {
				asked++
				return kind == "Deployment" && changed[namespace+"/"+name]
			})
			want := Diagnose(next)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("incremental report differs from a full diagnosis")
			}
			if asked != len(want.Workloads) {
				t.Errorf("changed was asked about %d workloads, want every one of the %d", asked, len(want.Workloads))
			}
			// The change shows: the changed workloads' diagnoses moved (restarts, evidence).
			moved := 0
			for i := range want.Workloads {
				d := &want.Workloads[i]
				if changed[d.Namespace+"/"+d.Name] {
					if old := before.Find(d.Kind, d.Namespace, d.Name); old != nil && !reflect.DeepEqual(old.Counts, d.Counts) {
						moved++
					}
				}
			}
			if moved == 0 {
				t.Error("no changed workload's diagnosis changed: the comparison proves nothing")
			}
		})
	}
}

// Rediagnose merges the kept diagnoses, in prev's order, with those made again: a prev out of
// the report's order (a caller's own) still gives the report a full diagnosis gives.
func TestRediagnoseOfAPrevOutOfOrder(t *testing.T) {
	prev := syntheticCluster(60, 10)
	before := Diagnose(prev)
	slices.Reverse(before.Workloads)
	next, changed := changedCopies(prev, 8)
	got := Rediagnose(before, next, func(kind, namespace, name string) bool {
		return kind == "Deployment" && changed[namespace+"/"+name]
	})
	if want := Diagnose(next); !reflect.DeepEqual(got, want) {
		t.Fatal("incremental report of a reversed prev differs from a full diagnosis")
	}
}

// Without prev, or with every workload changed, Rediagnose is Diagnose.
func TestRediagnoseWithoutAPreviousReportDiagnosesAll(t *testing.T) {
	s := syntheticCluster(20, 10)
	if !reflect.DeepEqual(Rediagnose(nil, s, nil), Diagnose(s)) {
		t.Error("Rediagnose(nil, ...) differs from Diagnose")
	}
	prev := Diagnose(syntheticCluster(10, 10))
	if !reflect.DeepEqual(Rediagnose(prev, s, func(string, string, string) bool { return true }), Diagnose(s)) {
		t.Error("Rediagnose with everything changed differs from Diagnose")
	}
}

// withVisibility is s, rebuilt, with its visibility lines followed by extra.
func withVisibility(s *snapshot.Snapshot, extra ...snapshot.Visibility) *snapshot.Snapshot {
	next := cloneSnapshot(s)
	next.Visibility = append(append([]snapshot.Visibility(nil), s.Visibility...), extra...)
	return next
}

// A change of the visibility alone leaves every workload kept, its evidence of what was not
// read written again, and the report equals a full diagnosis: over every scenario and fixture
// dump, and a workload with metrics evidence and an onset after the sorted items. A pods line
// (which the engine counts by) has its namespace's workloads diagnosed again.
func TestRediagnoseFollowsTheVisibility(t *testing.T) {
	type tc struct {
		name string
		s    *snapshot.Snapshot
	}
	var cases []tc
	for _, vd := range verdictDirs(t) {
		cases = append(cases, tc{vd.ID, loadDump(t, vd.Dir, loadExpected(t, vd.Dir))})
	}
	c := newCluster()
	healthyAt(c, "ingester", 10*time.Minute)
	c.addSeries("ingester", snapshot.RoleThroughput, snapshot.OriginAnnotation, 30*time.Second, concat(repeat(1240, 41), repeat(0, 19))...)
	cases = append(cases, tc{"metrics", c.s})
	if len(cases) < 10 {
		t.Fatalf("only %d snapshots to test", len(cases))
	}
	tails := func(ns string, n int) snapshot.Visibility {
		return snapshot.Visibility{Kind: "pods/log", Namespace: ns, Reason: strconv.Itoa(n) + " log tails not read yet: while watching, at most 5 log tails are read a second"}
	}
	nodes := snapshot.Visibility{Kind: "Node", Reason: `forbidden: User "oncall" cannot list resource "nodes" in API group "" at the cluster scope`}
	var sawOnset, sawMetrics, rewrote bool
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			prev := Diagnose(s)
			ns := testNS
			if len(prev.Workloads) > 0 {
				ns = prev.Workloads[0].Namespace
			}
			pods := snapshot.Visibility{Kind: "Pod", Namespace: ns, Reason: `forbidden: User "oncall" cannot list resource "pods" in API group "" in the namespace "` + ns + `"`}
			for i, next := range []*snapshot.Snapshot{
				withVisibility(s, tails(ns, 2)),
				withVisibility(s, tails(ns, 3), nodes),
				withVisibility(s, nodes, tails("elsewhere", 1)),
				withVisibility(s, nodes, pods),
				withVisibility(s),
			} {
				again := 0
				got := Rediagnose(prev, next, func(string, string, string) bool { return false })
				want := Diagnose(cloneSnapshot(next))
				for j := range want.Workloads {
					d := &want.Workloads[j]
					for _, e := range d.Evidence {
						sawOnset = sawOnset || e.Kind == "Onset"
						sawMetrics = sawMetrics || e.Source == SourceMetrics
					}
					if old := prev.Find(d.Kind, d.Namespace, d.Name); old != nil && !reflect.DeepEqual(old.Evidence, d.Evidence) {
						again++
					}
				}
				if !reflect.DeepEqual(got, want) {
					for j := range want.Workloads {
						if j < len(got.Workloads) && !reflect.DeepEqual(got.Workloads[j].Evidence, want.Workloads[j].Evidence) {
							t.Fatalf("visibility %d: %s's evidence\n got %+v\nwant %+v", i, want.Workloads[j].Name, got.Workloads[j].Evidence, want.Workloads[j].Evidence)
						}
					}
					t.Fatalf("visibility %d: the report differs from a full diagnosis", i)
				}
				rewrote = rewrote || again > 0
				prev = got
			}
		})
	}
	if !sawOnset || !sawMetrics || !rewrote {
		t.Errorf("onset evidence seen %v, metrics evidence %v, evidence rewritten %v: want all, or the test proves less than it says", sawOnset, sawMetrics, rewrote)
	}
}

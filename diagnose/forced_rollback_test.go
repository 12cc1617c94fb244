package diagnose

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// TestStatefulSetRollbackDeletesStuckCopies holds the fix of a StatefulSet whose revision
// broke it to the documented forced rollback: after rollout undo, under OrderedReady, the
// copies of the failing revision that are not Ready must be deleted by name, for the
// controller waits on them before it replaces any; under OnDelete every copy of that revision;
// Parallel and Recreate replace them without help. The fixture's three copies of revision 2
// run and are not Ready.
func TestStatefulSetRollbackDeletesStuckCopies(t *testing.T) {
	const (
		dir   = "../testdata/fixtures/warn-then-error-plain"
		ns    = "fixture-warn-then-error-plain"
		undo  = "kubectl rollout undo statefulset/event-relay --to-revision=1 -n " + ns
		named = " && kubectl delete pod event-relay-0 event-relay-1 event-relay-2 -n " + ns
	)
	tests := []struct {
		name   string
		change func(s *snapshot.Snapshot, st *appsv1.StatefulSet)
		want   string
	}{
		{"OrderedReady, the default, waits on every copy of revision 2 that is not Ready", nil, undo + named},
		{"OnDelete replaces no copy until it is deleted", func(_ *snapshot.Snapshot, st *appsv1.StatefulSet) {
			st.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
		}, undo + named},
		{"Parallel replaces them itself", func(_ *snapshot.Snapshot, st *appsv1.StatefulSet) {
			st.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
		}, undo},
		{"Recreate deletes every old copy itself", func(_ *snapshot.Snapshot, st *appsv1.StatefulSet) {
			st.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: "Recreate"}
		}, undo},
		{"a copy of revision 2 that is Ready does not hold the rollback back", func(s *snapshot.Snapshot, _ *appsv1.StatefulSet) {
			for _, p := range s.Pods {
				if p.Name == "event-relay-1" {
					for i := range p.Status.Conditions {
						if p.Status.Conditions[i].Type == "Ready" {
							p.Status.Conditions[i].Status = "True"
						}
					}
				}
			}
		}, undo + " && kubectl delete pod event-relay-0 event-relay-2 -n " + ns},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := loadExpected(t, dir)
			s := loadDump(t, dir, e)
			var st *appsv1.StatefulSet
			for _, o := range s.StatefulSets {
				if o.Name == "event-relay" {
					st = o
				}
			}
			if st == nil {
				t.Fatal("the fixture has no StatefulSet event-relay")
			}
			if tt.change != nil {
				tt.change(s, st)
			}
			d := Diagnose(s).Find("StatefulSet", ns, "event-relay")
			if d == nil {
				t.Fatal("no diagnosis of event-relay")
			}
			if d.Fix != tt.want {
				t.Errorf("fix = %q\nwant  %q", d.Fix, tt.want)
			}
			if !strings.HasPrefix(d.Fix, undo) {
				t.Errorf("fix %q does not begin with the rollback", d.Fix)
			}
		})
	}
}

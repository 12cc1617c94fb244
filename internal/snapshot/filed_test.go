package snapshot

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestServicesFiledWhileUnchanged: what is filed of a namespace's Services is filed once, kept
// by the snapshots a Tracker derives while no Service changes, and filed again from the new
// list once one does (or once forgotten).
func TestServicesFiledWhileUnchanged(t *testing.T) {
	svc := func(name string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: name, UID: types.UID("svc-" + name)}}
	}
	pod := func(i int, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: fmt.Sprintf("p%d", i), UID: types.UID(fmt.Sprintf("pod-%d", i))},
			Status:     corev1.PodStatus{Phase: phase},
		}
	}
	base := &Snapshot{Services: []*corev1.Service{svc("web"), svc("api")}}
	// Enough objects that a change or two is derived, not built again.
	for i := range 20 {
		base.Pods = append(base.Pods, pod(i, corev1.PodRunning))
	}
	tr := NewTracker(base)
	base.Index()
	filings := 0
	file := func(svcs []*corev1.Service) any {
		filings++
		return len(svcs)
	}
	ask := func(s *Snapshot, want, wantFilings int) {
		t.Helper()
		if got := s.ServicesFiled("a", file).(int); got != want || filings != wantFilings {
			t.Fatalf("filed %d Services after %d filings, want %d after %d", got, filings, want, wantFilings)
		}
	}
	ask(base, 2, 1)
	ask(base, 2, 1)

	tr.Put(pod(3, corev1.PodFailed))
	next := tr.Snapshot()
	next.Index()
	if next.changes == nil || next.index == nil {
		t.Fatal("the Tracker's snapshot has no index")
	}
	ask(next, 2, 1)

	tr.Put(svc("admin"))
	changed := tr.Snapshot()
	changed.Index()
	ask(changed, 3, 2)
	ask(next, 2, 2)

	changed.ForgetServicesFiled()
	ask(changed, 3, 3)
}

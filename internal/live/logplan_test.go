package live

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// planWorld changes a namespace's copies and ReplicaSets at random as a watch sees them.
type planWorld struct {
	rng    *rand.Rand
	tr     *snapshot.Tracker
	pods   map[string]*corev1.Pod
	rss    map[string]*appsv1.ReplicaSet
	serial int
}

func (w *planWorld) replicaSet(name string, deployment string) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + name)}}
	if deployment != "" {
		rs.OwnerReferences = []metav1.OwnerReference{{Kind: "Deployment", Name: deployment, UID: types.UID("uid-" + deployment), Controller: ptr.To(true)}}
	}
	return rs
}

// copyOf makes a copy of a random state: running and ready, crash-looping with one of a few exit
// codes, not ready, unscheduled, succeeded; of a ReplicaSet, a StatefulSet or none.
func (w *planWorld) copyOf(name string) *corev1.Pod {
	w.serial++
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID(fmt.Sprintf("uid-%s-%d", name, w.serial))}}
	switch w.rng.IntN(6) {
	case 0:
		p.Labels = map[string]string{appsv1.ControllerRevisionHashLabelKey: fmt.Sprintf("db-%d", w.rng.IntN(2))}
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "StatefulSet", Name: "db", UID: "uid-db", Controller: ptr.To(true)}}
	case 1:
	default:
		rs := fmt.Sprintf("web-%d", w.rng.IntN(5))
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: rs, UID: types.UID("uid-" + rs), Controller: ptr.To(true)}}
	}
	if w.rng.IntN(8) != 0 {
		p.Spec.NodeName = "worker-1"
	}
	cs := corev1.ContainerStatus{Name: "app"}
	ready := corev1.ConditionFalse
	switch w.rng.IntN(5) {
	case 0:
		cs.Ready, ready = true, corev1.ConditionTrue
		cs.State.Running = &corev1.ContainerStateRunning{}
		p.Status.Phase = corev1.PodRunning
		// Half of the Ready copies name an endpoint in their env: the planner reads one of
		// their workload's when no copy of it fails.
		if w.rng.IntN(2) == 0 {
			p.Spec.Containers = []corev1.Container{{Name: "app", Env: []corev1.EnvVar{{Name: "UPSTREAM", Value: "upstream.shop.svc:8443"}}}}
		}
	case 1, 2:
		cs.RestartCount = int32(1 + w.rng.IntN(9))
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}
		cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: []string{"Error", "OOMKilled"}[w.rng.IntN(2)], ExitCode: int32(1 + w.rng.IntN(2))}
	case 3:
		cs.State.Running = &corev1.ContainerStateRunning{}
	default:
		p.Status.Phase = corev1.PodSucceeded
		cs.State.Terminated = &corev1.ContainerStateTerminated{Reason: "Completed"}
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
	if w.rng.IntN(4) == 0 {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "sidecar", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
	}
	return p
}

func (w *planWorld) put(o runtime.Object) {
	switch o := o.(type) {
	case *corev1.Pod:
		w.pods[o.Name] = o
	case *appsv1.ReplicaSet:
		w.rss[o.Name] = o
	}
	w.tr.Put(o)
}

func (w *planWorld) change() {
	switch w.rng.IntN(8) {
	case 0, 1, 2, 3: // a copy changes state, or moves, or is made again with a new UID
		w.put(w.copyOf(fmt.Sprintf("copy-%02d", w.rng.IntN(40))))
	case 4: // a copy is deleted
		name := fmt.Sprintf("copy-%02d", w.rng.IntN(40))
		if p := w.pods[name]; p != nil {
			delete(w.pods, name)
			w.tr.Delete(p)
		}
	case 5: // a ReplicaSet comes or changes its Deployment, or is orphaned
		name := fmt.Sprintf("web-%d", w.rng.IntN(5))
		w.put(w.replicaSet(name, []string{"", "web", "api"}[w.rng.IntN(3)]))
	case 6: // a ReplicaSet is deleted before its copies
		name := fmt.Sprintf("web-%d", w.rng.IntN(5))
		if rs := w.rss[name]; rs != nil {
			delete(w.rss, name)
			w.tr.Delete(rs)
		}
	case 7: // a copy is renamed
		for _, name := range sortedNames(w.pods) {
			p := w.pods[name]
			delete(w.pods, name)
			w.tr.Delete(p)
			w.put(w.copyOf(fmt.Sprintf("copy-%02d", w.rng.IntN(40))))
			break
		}
	}
}

// Over random sequences of copies changing state, moving between ReplicaSets, deleted, made again
// and renamed, and ReplicaSets that come, go, change their Deployment and are orphaned, with
// snapshots taken back now and then, the planner's plan of each snapshot of a watch equals the
// plan made from all of its pods, its bound cutting the rounds.
func TestLogPlannerPlansAsFromScratch(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		w := &planWorld{rng: rand.New(rand.NewPCG(seed, 3)), pods: map[string]*corev1.Pod{}, rss: map[string]*appsv1.ReplicaSet{}}
		base := &snapshot.Snapshot{}
		for i := range 5 {
			rs := w.replicaSet(fmt.Sprintf("web-%d", i), "web")
			w.rss[rs.Name], base.ReplicaSets = rs, append(base.ReplicaSets, rs)
		}
		for i := range 30 {
			p := w.copyOf(fmt.Sprintf("copy-%02d", i))
			w.pods[p.Name], base.Pods = p, append(base.Pods, p)
		}
		w.tr = snapshot.NewTracker(base)
		base.Index()
		limit := 3 + w.rng.IntN(12)
		var lp logPlanner
		check := func(step int, s *snapshot.Snapshot) {
			t.Helper()
			got, want := lp.planFor(s, limit), failingLogRequests(s.Pods, s.ReplicaSets, limit)
			if !reflect.DeepEqual(got, want) {
				for i := range want.workloads {
					if i < len(got.workloads) && !reflect.DeepEqual(got.workloads[i], want.workloads[i]) {
						t.Logf("workload %d: got %+v want %+v", i, *got.workloads[i], *want.workloads[i])
						break
					}
				}
				t.Fatalf("seed %d step %d: the planner's plan differs from one made from all pods:\n got %+v\nwant %+v", seed, step, got.reqs, want.reqs)
			}
		}
		check(-1, base)
		incremental := 0
		last := base
		for step := range 40 {
			for range 1 + w.rng.IntN(4) {
				w.change()
			}
			if last != base && w.rng.IntN(3) == 0 {
				w.tr.Retract(last) // its reader never took it
			}
			s := w.tr.Snapshot()
			s.Index()
			if _, ok := s.ChangesAfter(lp.at); ok {
				incremental++
			}
			check(step, s)
			last = s
		}
		if incremental < 30 {
			t.Fatalf("seed %d: %d of 40 plans made from the changes, want most", seed, incremental)
		}
	}
}

func sortedNames(m map[string]*corev1.Pod) []string {
	var names []string
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

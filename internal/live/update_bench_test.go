package live

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// churnedNamespace is a namespace of pods copies, ten to a ReplicaSet of its own Deployment, a
// tenth of them crash-looping on a node, with an event each.
func churnedNamespace(pods int) *snapshot.Snapshot {
	s := &snapshot.Snapshot{Namespaces: []string{"scale"}}
	for d := 0; d < pods/10; d++ {
		name := fmt.Sprintf("service-%05d", d)
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "scale", Name: name, UID: types.UID("d-" + name)}}
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{
			Namespace: "scale", Name: name + "-7d9c5b8f6", UID: types.UID("rs-" + name),
			OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: name, UID: dep.UID, Controller: ptr.To(true)}},
		}}
		s.Deployments, s.ReplicaSets = append(s.Deployments, dep), append(s.ReplicaSets, rs)
		for i := 0; i < 10; i++ {
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					Namespace: "scale", Name: fmt.Sprintf("%s-7d9c5b8f6-%05d", name, i), UID: types.UID(fmt.Sprintf("p-%s-%d", name, i)),
					OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}},
				},
				Spec: corev1.PodSpec{NodeName: "worker-1"},
				Status: corev1.PodStatus{
					Phase:             corev1.PodRunning,
					Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
					ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
				},
			}
			if d%10 == 3 {
				p.Status.Conditions[0].Status = corev1.ConditionFalse
				p.Status.ContainerStatuses[0] = corev1.ContainerStatus{
					Name: "app", RestartCount: 7,
					State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}},
				}
			}
			e := &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Namespace: "scale", Name: p.Name + ".1", UID: types.UID("e-" + p.Name)},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "scale", Name: p.Name, UID: p.UID}, Reason: "Started",
			}
			s.Pods, s.Events = append(s.Pods, p), append(s.Events, e)
		}
	}
	return s
}

// BenchmarkWatchSnapshot is the watch's work for one snapshot of a namespace of 2,000 or 20,000
// pods (as many events) under 50 changes a second at a 500 ms debounce (25 copies turn ready or
// unready, 25 events count up): the snapshot made from the informers' objects, indexed, and its
// log tails planned and taken from the cache (none fetched: the refetch budget is spent). It
// should cost about the same at both sizes.
func BenchmarkWatchSnapshot(b *testing.B) {
	for _, pods := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("pods=%d", pods), func(b *testing.B) {
			now := func() time.Time { return t0 }
			src := newForClient(fake.NewClientset(), Options{Namespaces: []string{"scale"}}, now)
			base := churnedNamespace(pods)
			tr := snapshot.NewTracker(base)
			base.Index()
			cache := newLogCache(base, t0)
			cache.budget.tokens = 0
			src.cachedLogs(context.Background(), base, cache)
			podsNow, eventsNow := append([]*corev1.Pod(nil), base.Pods...), append([]*corev1.Event(nil), base.Events...)
			b.ReportAllocs()
			for i := -warmup; i < b.N; i++ {
				if i == 0 {
					b.ResetTimer()
				}
				b.StopTimer()
				var changed []runtime.Object
				for j := 0; j < 25; j++ {
					k := ((i+warmup)*25 + j) * 7 % pods
					p := podsNow[k].DeepCopy()
					c := &p.Status.Conditions[0]
					c.Status = map[corev1.ConditionStatus]corev1.ConditionStatus{corev1.ConditionTrue: corev1.ConditionFalse, corev1.ConditionFalse: corev1.ConditionTrue}[c.Status]
					e := eventsNow[k].DeepCopy()
					e.Count++
					podsNow[k], eventsNow[k] = p, e
					changed = append(changed, p, e)
				}
				b.StartTimer()
				// What the informers' handlers and then the watch's loop do.
				for _, o := range changed {
					tr.Put(o)
				}
				s := tr.Snapshot()
				s.Index()
				src.cachedLogs(context.Background(), s, cache)
			}
		})
	}
}

// BenchmarkLogPlan is the log plan alone for the updates of BenchmarkWatchSnapshot: from every
// pod of the snapshot (failingLogRequests, as every snapshot was planned) or from the planner's
// candidates and what changed.
func BenchmarkLogPlan(b *testing.B) {
	for _, mode := range []string{"scratch", "planner"} {
		for _, pods := range []int{2000, 20000} {
			b.Run(fmt.Sprintf("%s/pods=%d", mode, pods), func(b *testing.B) {
				base := churnedNamespace(pods)
				tr := snapshot.NewTracker(base)
				base.Index()
				var lp logPlanner
				lp.planFor(base, maxLogRequests)
				podsNow := append([]*corev1.Pod(nil), base.Pods...)
				b.ReportAllocs()
				for i := -warmup; i < b.N; i++ {
					if i == 0 {
						b.ResetTimer()
					}
					b.StopTimer()
					for j := 0; j < 25; j++ {
						k := ((i+warmup)*25 + j) * 7 % pods
						p := podsNow[k].DeepCopy()
						c := &p.Status.Conditions[0]
						c.Status = map[corev1.ConditionStatus]corev1.ConditionStatus{corev1.ConditionTrue: corev1.ConditionFalse, corev1.ConditionFalse: corev1.ConditionTrue}[c.Status]
						podsNow[k] = p
						tr.Put(p)
					}
					s := tr.Snapshot()
					s.Index()
					b.StartTimer()
					if mode == "scratch" {
						_ = failingLogRequests(s.Pods, s.ReplicaSets, maxLogRequests)
					} else {
						_ = lp.planFor(s, maxLogRequests)
					}
				}
			})
		}
	}
}

// warmup is how many updates a benchmark of updates makes before it measures: the first index
// derived from a built one spreads its tables over shards, once per watch.
const warmup = 3

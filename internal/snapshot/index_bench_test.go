package snapshot

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// namespaceOf builds a namespace of pods copies: ten to a ReplicaSet of its own Deployment, one
// event each, and an EndpointSlice per Deployment.
func namespaceOf(pods int) *Snapshot {
	s := &Snapshot{Namespaces: []string{"scale"}}
	for d := 0; d < pods/10; d++ {
		name := fmt.Sprintf("service-%05d", d)
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "scale", Name: name, UID: types.UID("d-" + name)}}
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{
			Namespace: "scale", Name: name + "-7d9c5b8f6", UID: types.UID("rs-" + name),
			OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: name, UID: dep.UID, Controller: ptr.To(true)}},
		}}
		es := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{
			Namespace: "scale", Name: name + "-x1", UID: types.UID("es-" + name),
			Labels: map[string]string{discoveryv1.LabelServiceName: name},
		}}
		s.Deployments, s.ReplicaSets, s.EndpointSlices = append(s.Deployments, dep), append(s.ReplicaSets, rs), append(s.EndpointSlices, es)
		for i := 0; i < 10; i++ {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
				Namespace: "scale", Name: fmt.Sprintf("%s-7d9c5b8f6-%05d", name, i), UID: types.UID(fmt.Sprintf("p-%s-%d", name, i)),
				OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}},
			}}
			e := &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Namespace: "scale", Name: p.Name + ".1", UID: types.UID("e-" + p.Name)},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "scale", Name: p.Name, UID: p.UID}, Reason: "Started",
			}
			s.Pods, s.Events = append(s.Pods, p), append(s.Events, e)
		}
	}
	return s
}

// BenchmarkIndex is the index of one watch snapshot of a namespace of 2,000 or 20,000 pods (as
// many events) under churn: 25 pods and 25 events changed since the last (50 changes a second at
// a 500 ms debounce). build indexes the snapshot from its lists, as every snapshot was indexed;
// derive derives the index from the last snapshot's, as a Tracker's snapshots are. derive
// should cost about the same at both sizes.
func BenchmarkIndex(b *testing.B) {
	for _, mode := range []string{"build", "derive"} {
		for _, pods := range []int{2000, 20000} {
			b.Run(fmt.Sprintf("%s/pods=%d", mode, pods), func(b *testing.B) {
				base := namespaceOf(pods)
				tr := NewTracker(base)
				base.Index()
				b.ReportAllocs()
				for i := -warmup; i < b.N; i++ {
					if i == 0 {
						b.ResetTimer()
					}
					b.StopTimer()
					for j := 0; j < 25; j++ {
						k := ((i+warmup)*25 + j) * 7 % pods
						p := base.Pods[k].DeepCopy()
						p.Status.Phase = corev1.PodPhase(fmt.Sprint(i))
						tr.Put(p)
						e := base.Events[k].DeepCopy()
						e.Count = int32(i)
						tr.Put(e)
					}
					s := tr.Snapshot()
					if mode == "build" {
						s.changes.base = nil
					}
					b.StartTimer()
					s.Index()
				}
			})
		}
	}
}

// warmup is how many updates a benchmark of updates makes before it measures: the first index
// derived from a built one spreads its tables over shards, once per watch.
const warmup = 3

package tui

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// updateChurn is one watch update of a namespace under 50 changes a second at a 500 ms
// debounce: 25 copies flip their readiness (their slices rewritten) and 25 events count up.
type updateChurn struct {
	pods    map[string]*corev1.Pod
	names   []string
	slices  map[string]*discoveryv1.EndpointSlice
	events  []*corev1.Event
	sliceOf map[string]string
	step    int
}

func newUpdateChurn(s *snapshot.Snapshot) *updateChurn {
	u := &updateChurn{pods: map[string]*corev1.Pod{}, slices: map[string]*discoveryv1.EndpointSlice{}, sliceOf: map[string]string{}}
	for _, p := range s.Pods {
		u.pods[p.Name] = p
		u.names = append(u.names, p.Name)
	}
	for _, es := range s.EndpointSlices {
		u.slices[es.Name] = es
		for _, ep := range es.Endpoints {
			u.sliceOf[ep.TargetRef.Name] = es.Name
		}
	}
	u.events = s.Events
	return u
}

// withPodEvents gives each copy of s an event, as a namespace of the issue has as many events as
// pods.
func withPodEvents(s *snapshot.Snapshot) {
	for _, p := range s.Pods {
		s.Events = append(s.Events, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: p.Name + ".started", Namespace: p.Namespace, UID: types.UID("uid-ev-" + p.Name)},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
			Reason:         "Started", Message: "Started container", Type: corev1.EventTypeNormal, Count: 1,
			LastTimestamp: metav1.NewTime(refTime.Add(-12 * time.Minute)),
		})
	}
}

// next makes the update's changes and hands each changed object to put.
func (u *updateChurn) next(put func(o runtime.Object)) {
	u.step++
	for j := 0; j < 25; j++ {
		k := (u.step*25 + j) * 7 % len(u.names)
		p := u.pods[u.names[k]].DeepCopy()
		cs := &p.Status.ContainerStatuses[0]
		cs.Ready = !cs.Ready
		for c := range p.Status.Conditions {
			if p.Status.Conditions[c].Type == corev1.PodReady {
				p.Status.Conditions[c].Status = map[bool]corev1.ConditionStatus{true: corev1.ConditionTrue, false: corev1.ConditionFalse}[cs.Ready]
			}
		}
		u.pods[p.Name] = p
		put(p)
		if name, ok := u.sliceOf[p.Name]; ok {
			es := u.slices[name].DeepCopy()
			for e := range es.Endpoints {
				if es.Endpoints[e].TargetRef.Name == p.Name {
					es.Endpoints[e].Conditions.Ready = ptr.To(cs.Ready)
				}
			}
			u.slices[name] = es
			put(es)
		}
		i := (u.step*25 + j) * 11 % len(u.events)
		e := u.events[i].DeepCopy()
		e.Count++
		u.events[i] = e
		put(e)
	}
}

// BenchmarkWatchUpdate is the console's work for one watch snapshot of a namespace of 2,000 or
// 20,000 copies (as many events, a Service and an EndpointSlice per Deployment, a tenth of the
// Deployments crash-looping) in which 25 copies flipped their readiness, their slices were
// rewritten and 25 events counted up since the last: find what changed, diagnose those workloads
// again, lay out the rows. The snapshots come from a snapshot.Tracker, indexed as the watch hands
// them on. Its cost should not grow with the namespace but for the engine's and the rows' pass
// over the workloads.
func BenchmarkWatchUpdate(b *testing.B) {
	for _, pods := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("pods=%d", pods), func(b *testing.B) {
			clock := refTime
			full := 0
			inc := &incremental{
				diagnose: func(s *snapshot.Snapshot) *diagnose.Report { full++; return diagnose.Diagnose(s) },
				rediag:   diagnose.Rediagnose,
				now:      func() time.Time { return clock },
			}
			bed := newUpdateBed(pods)
			inc.next(bed.base, nil)
			full = 0
			b.ReportAllocs()
			var cpu time.Duration
			for i := -warmup; i < b.N; i++ {
				if i == 0 {
					b.ResetTimer()
					cpu, full = 0, 0
				}
				b.StopTimer()
				s := bed.next()
				b.StartTimer()
				start := cpuTime()
				inc.next(s, nil)
				cpu += cpuTime() - start
			}
			b.StopTimer()
			reportCPU(b, cpu)
			b.ReportMetric(float64(full)/float64(b.N), "full/op")
		})
	}
}

// BenchmarkChangedWorkloads is changedWorkloads alone for the updates of BenchmarkWatchUpdate:
// which workloads one update concerns, the snapshots indexed beforehand.
func BenchmarkChangedWorkloads(b *testing.B) {
	for _, pods := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("pods=%d", pods), func(b *testing.B) {
			bed := newUpdateBed(pods)
			prev := bed.base
			b.ReportAllocs()
			for i := -warmup; i < b.N; i++ {
				if i == 0 {
					b.ResetTimer()
				}
				b.StopTimer()
				s := bed.next()
				b.StartTimer()
				if changedWorkloads(prev, s) == nil {
					b.Fatal("an update called for a full diagnosis")
				}
				prev = s
			}
		})
	}
}

// updateBed is the namespace of the update benchmarks, of pods copies five to a Deployment with
// their Services and events, and its churn fed to a Tracker.
type updateBed struct {
	base *snapshot.Snapshot
	u    *updateChurn
	tr   *snapshot.Tracker
}

func newUpdateBed(pods int) *updateBed {
	base := scaleSnapshot(pods/5, 5)
	withServices(base)
	withPodEvents(base)
	bed := &updateBed{base: base, u: newUpdateChurn(base), tr: snapshot.NewTracker(base)}
	base.Index()
	return bed
}

// next makes one update and returns its snapshot, indexed as the watch hands it on.
func (bed *updateBed) next() *snapshot.Snapshot {
	bed.u.next(func(o runtime.Object) { bed.tr.Put(o) })
	s := bed.tr.Snapshot()
	s.Namespaces, s.Source, s.ReferenceTime = bed.base.Namespaces, bed.base.Source, bed.base.ReferenceTime
	s.Index()
	return s
}

// warmup is how many updates a benchmark of updates makes before it measures: the first index
// derived from a built one spreads its tables over shards, once per watch.
const warmup = 3

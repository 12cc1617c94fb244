package tui

import (
	"context"
	"fmt"
	"io"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/spinner"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// bigModel is a console over n workloads across 50 namespaces at w×h.
func bigModel(tb testing.TB, n, w, h int) *Model {
	tb.Helper()
	snap := &snapshot.Snapshot{ReferenceTime: refTime}
	rep := &diagnose.Report{ReferenceTime: refTime}
	path := field.NewPath("spec", "template", "spec", "containers").Index(0).Child("image")
	for i := 0; i < n; i++ {
		sh := diagnose.Shapes[i%len(diagnose.Shapes)]
		young := int64(60 * (i%500 + 1))
		d := diagnose.Diagnosis{
			Kind: "Deployment", Namespace: fmt.Sprintf("team-%02d", i%50), Name: fmt.Sprintf("service-%05d", i),
			Shape: sh, Counts: diagnose.Counts{Declared: 5, Existing: 5, Serving: int32(i % 6), Restarts: int32(i % 40)},
			YoungestCopySeconds: &young, Cause: diagnose.CauseSpec,
		}
		if sh.Broken() {
			d.Suspects = []diagnose.Suspect{{Object: "Deployment/" + d.Name, Path: path, Confidence: diagnose.ConfidenceHigh}}
		}
		rep.Workloads = append(rep.Workloads, d)
	}
	m := New(context.Background(), Options{Source: staticSource{snap: snap}, SourceLabel: "dump", AllNamespaces: true},
		colourStyles(), func() time.Time { return refTime })
	m.Update(windowSize(w, h))
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	return m
}

// BenchmarkWorkloadsView renders the workloads screen of 10,000 workloads at 200x60. The issue's
// budget is 5 ms a frame.
func BenchmarkWorkloadsView(b *testing.B) {
	m := bigModel(b, 10000, 200, 60)
	press(m, "down")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
}

// BenchmarkWorkloadsScrollFrame is one key press and the frame it produces, mid-list.
func BenchmarkWorkloadsScrollFrame(b *testing.B) {
	m := bigModel(b, 10000, 200, 60)
	press(m, "G")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			press(m, "pgup")
		} else {
			press(m, "down")
		}
		_ = m.View()
	}
}

// colourStyles renders in true colour, the most expensive profile.
func colourStyles() Styles {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	r.SetHasDarkBackground(true)
	return DefaultStyles(r)
}

// scaleSnapshot is a namespace of n Deployments of copies copies each (20,000 pods at 4,000 × 5),
// each with its ReplicaSet; one in ten crash-loops.
func scaleSnapshot(n int, copies int32) *snapshot.Snapshot {
	snap := &snapshot.Snapshot{ReferenceTime: refTime, Namespaces: []string{"telemetry"}, Source: snapshot.SourceInfo{Type: snapshot.SourceLive}}
	for i := 0; i < n; i++ {
		d := deployment(fmt.Sprintf("service-%05d", i), copies, nil, "registry.example.com/shop/service:1.4.2")
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: copies, UpdatedReplicas: copies}
		d.Generation = 1
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{
				Name: d.Name + "-7d9c5b8f6", Namespace: d.Namespace, UID: types.UID("uid-rs-" + d.Name),
				Labels:            map[string]string{"app": d.Name, appsv1.DefaultDeploymentUniqueLabelKey: "7d9c5b8f6"},
				Annotations:       map[string]string{"deployment.kubernetes.io/revision": "1"},
				CreationTimestamp: d.CreationTimestamp,
				OwnerReferences:   []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: ptr.To(true)}},
			},
			Spec:   appsv1.ReplicaSetSpec{Replicas: ptr.To(copies), Selector: d.Spec.Selector, Template: d.Spec.Template},
			Status: appsv1.ReplicaSetStatus{Replicas: copies},
		}
		broken := i%10 == 3
		for j := 0; j < int(copies); j++ {
			var p *corev1.Pod
			if broken {
				p = pod(d, j, false, 7, "CrashLoopBackOff")
			} else {
				p = pod(d, j, true, 0, "")
			}
			snap.Pods = append(snap.Pods, p)
		}
		if !broken {
			d.Status.ReadyReplicas, d.Status.AvailableReplicas = copies, copies
			rs.Status.ReadyReplicas, rs.Status.AvailableReplicas = copies, copies
		}
		snap.Deployments = append(snap.Deployments, d)
		snap.ReplicaSets = append(snap.ReplicaSets, rs)
	}
	return snap
}

// BenchmarkKeyToFrame20kPods is the console's work for one j (down) press on the workloads
// screen of a diagnosed 20,000-pod namespace: Update and the frame's View. It reports the median
// and 90th percentile of single presses; the budget is 16 ms at p90.
func BenchmarkKeyToFrame20kPods(b *testing.B) {
	snap := scaleSnapshot(4000, 5)
	ds := newDataset(snap, nil, diagnose.Diagnose)
	m := New(context.Background(), Options{Source: staticSource{snap: snap}, SourceLabel: "live", Namespaces: []string{"telemetry"}},
		colourStyles(), func() time.Time { return refTime })
	m.Update(windowSize(200, 60))
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: ds})
	j := keyMsg("j")
	took := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%3000 == 2999 {
			press(m, "g")
		}
		start := time.Now()
		m.Update(j)
		_ = m.View()
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*9/10].Microseconds())/1000, "p90-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, "max-ms")
}

// BenchmarkDatasetOf20kPods is what the console does with each snapshot of a 20,000-pod
// namespace before it can draw it: index, diagnose, lay out the rows.
func BenchmarkDatasetOf20kPods(b *testing.B) {
	snap := scaleSnapshot(4000, 5)
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		s := *snap
		_ = newDataset(&s, nil, diagnose.Diagnose)
	}
	reportCPU(b, cpuTime()-start)
}

// BenchmarkRowsOf20kPods is the console's own part of BenchmarkDatasetOf20kPods, the rows laid
// out from a report already made: what the console adds after the engine, before its frame.
func BenchmarkRowsOf20kPods(b *testing.B) {
	snap := scaleSnapshot(4000, 5)
	snap.Index()
	rep := diagnose.Diagnose(snap)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = datasetOf(snap, rep)
	}
}

// BenchmarkWatchUpdate20kPods is the console's work for one watch snapshot of a 20,000-pod
// namespace in which 25 copies changed status since the last (50 changes a second, one
// snapshot per 500 ms debounce): index, find what changed, diagnose those workloads again, lay
// out the rows. Divided by the debounce it is the share of a core the console spends.
func BenchmarkWatchUpdate20kPods(b *testing.B) {
	clock := refTime
	inc := &incremental{diagnose: diagnose.Diagnose, rediag: diagnose.Rediagnose, now: func() time.Time { return clock }}
	snap := scaleSnapshot(4000, 5)
	inc.next(snap, nil)
	b.ReportAllocs()
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		next := rebuilt(snap)
		for j := 0; j < 25; j++ {
			k := (i*25 + j) * 7 % len(next.Pods)
			p := next.Pods[k].DeepCopy()
			p.Status.ContainerStatuses[0].RestartCount++
			next.Pods[k] = p
		}
		snap = next
		b.StartTimer()
		start := cpuTime()
		inc.next(next, nil)
		cpu += cpuTime() - start
	}
	reportCPU(b, cpu)
}

// BenchmarkWatchUpdate20kPodsWithSlices is BenchmarkWatchUpdate20kPods as a real namespace
// churns: each Deployment has a Service and an EndpointSlice, and the 25 copies of a snapshot
// flip their readiness, so the endpointslice controller rewrites their slices too.
func BenchmarkWatchUpdate20kPodsWithSlices(b *testing.B) {
	clock := refTime
	inc := &incremental{diagnose: diagnose.Diagnose, rediag: diagnose.Rediagnose, now: func() time.Time { return clock }}
	snap := scaleSnapshot(4000, 5)
	withServices(snap)
	sliceOf := map[string]int{}
	for i, es := range snap.EndpointSlices {
		sliceOf[es.Labels[discoveryv1.LabelServiceName]] = i
	}
	inc.next(snap, nil)
	b.ReportAllocs()
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		next := rebuilt(snap)
		next.EndpointSlices = append([]*discoveryv1.EndpointSlice(nil), snap.EndpointSlices...)
		for j := 0; j < 25; j++ {
			k := (i*25 + j) * 7 % len(next.Pods)
			p := next.Pods[k].DeepCopy()
			ready := !p.Status.ContainerStatuses[0].Ready
			p.Status.ContainerStatuses[0].Ready = ready
			for c := range p.Status.Conditions {
				if p.Status.Conditions[c].Type == corev1.PodReady {
					p.Status.Conditions[c].Status = map[bool]corev1.ConditionStatus{true: corev1.ConditionTrue, false: corev1.ConditionFalse}[ready]
				}
			}
			next.Pods[k] = p
			si := sliceOf[p.Labels["app"]]
			es := next.EndpointSlices[si].DeepCopy()
			for e := range es.Endpoints {
				if es.Endpoints[e].TargetRef.Name == p.Name {
					es.Endpoints[e].Conditions.Ready = ptr.To(ready)
				}
			}
			next.EndpointSlices[si] = es
		}
		snap = next
		b.StartTimer()
		start := cpuTime()
		inc.next(next, nil)
		cpu += cpuTime() - start
	}
	reportCPU(b, cpu)
}

// cpuTime is the CPU time the process has used, garbage collection included: on a shared
// machine it says what the console costs where wall time says how busy the others are.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// readingModel is a console whose first read of a 2,000-Deployment namespace has listed the
// workloads (rows without shapes) and goes on reading pods, at 200x50 as in
// BenchmarkConsoleVsAudit.
func readingModel(tb testing.TB) *Model {
	tb.Helper()
	snap := scaleSnapshot(2000, 10)
	early := &snapshot.Snapshot{ReferenceTime: refTime, Namespaces: snap.Namespaces, Deployments: snap.Deployments}
	clock := refTime
	m := New(context.Background(), Options{Source: staticSource{snap: snap}, SourceLabel: "dump"},
		colourStyles(), func() time.Time { clock = clock.Add(50 * time.Millisecond); return clock })
	m.Update(windowSize(200, 50))
	m.setData(rowsDataset(early, nil))
	return m
}

// BenchmarkReadingFrame is one frame the console draws while its first read runs with the rows
// listed: a progress report or a spinner tick, then View. The read is on the other processor
// meanwhile, 20 such frames a second, so each frame's cost is taken from the read.
func BenchmarkReadingFrame(b *testing.B) {
	m := readingModel(b)
	counts := map[string]int{"Deployment": 2000, "ReplicaSet": 2000, "Pod": 0}
	tick := m.spinner.Tick().(spinner.TickMsg)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			counts["Pod"] += 1000
			m.counted("pods", counts["Pod"], counts)
		} else {
			m.Update(tick)
		}
		_ = m.View()
	}
}

// BenchmarkEarlyRows is the rows the console lists from the workloads of a 2,000-Deployment
// namespace before their copies are read.
func BenchmarkEarlyRows(b *testing.B) {
	snap := scaleSnapshot(2000, 10)
	early := &snapshot.Snapshot{
		ReferenceTime: refTime, Namespaces: snap.Namespaces,
		Deployments: snap.Deployments, ReplicaSets: snap.ReplicaSets,
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = rowsDataset(early, nil)
	}
}

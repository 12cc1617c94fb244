package tui

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// churn plays a namespace under `scalegen churn` as the watch's snapshots show it, one 500 ms
// debounce a step: healthy copies restarted as the kubelet writes a restart (the old instance in
// lastState.terminated, restartCount + 1, a new container ID, Ready and ContainersReady False),
// their readiness passed again some steps later, each rewrite mirrored in the Service's
// EndpointSlice; the previous instance's log tail read only a few steps after the restart, under
// the watch's refetch budget, and meanwhile counted in the namespace's pods/log visibility line
// "N log tails not read yet".
type churn struct {
	snap     *snapshot.Snapshot
	step     int
	restarts int // restarts a step; as many readiness passes follow
	healthy  []int
	next     int
	ready    []int       // copies restarted, not yet ready again, oldest first
	unread   map[int]int // copies whose previous tail is not read yet: the step it will be
	sliceOf  map[[2]string]int
	extra    func(step int, s *snapshot.Snapshot) // the sequence's own changes
}

func newChurn(s *snapshot.Snapshot, restarts int) *churn {
	c := &churn{snap: s, restarts: restarts, unread: map[int]int{}, sliceOf: map[[2]string]int{}}
	for i, p := range s.Pods {
		if len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].Ready {
			c.healthy = append(c.healthy, i)
		}
	}
	for i, es := range s.EndpointSlices {
		c.sliceOf[[2]string{es.Namespace, es.Labels[discoveryv1.LabelServiceName]}] = i
	}
	return c
}

// setReady writes a copy's readiness as the kubelet's status manager does, and the endpointslice
// controller's answer.
func (c *churn) setReady(s *snapshot.Snapshot, p *corev1.Pod, ready bool) {
	cs := &p.Status.ContainerStatuses[0]
	cs.Ready = ready
	status, reason, msg := corev1.ConditionTrue, "", ""
	if !ready {
		status, reason, msg = corev1.ConditionFalse, "ContainersNotReady", "containers with unready status: ["+cs.Name+"]"
	}
	for _, t := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
		found := false
		for i := range p.Status.Conditions {
			if cd := &p.Status.Conditions[i]; cd.Type == t {
				cd.Status, cd.Reason, cd.Message, found = status, reason, msg, true
				cd.LastTransitionTime = metav1.NewTime(refTime)
			}
		}
		if !found {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: status, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(refTime)})
		}
	}
	si, ok := c.sliceOf[[2]string{p.Namespace, p.Labels["app"]}]
	if !ok {
		return
	}
	es := s.EndpointSlices[si].DeepCopy()
	for e := range es.Endpoints {
		if es.Endpoints[e].TargetRef.Name == p.Name {
			es.Endpoints[e].Conditions.Ready = ptr.To(ready)
			es.Endpoints[e].Conditions.Serving = ptr.To(ready)
		}
	}
	s.EndpointSlices[si] = es
}

// advance returns the next snapshot.
func (c *churn) advance() *snapshot.Snapshot {
	prev := c.snap
	s := rebuilt(prev)
	s.EndpointSlices = append([]*discoveryv1.EndpointSlice(nil), prev.EndpointSlices...)
	s.Logs = append([]snapshot.ContainerLog(nil), prev.Logs...)
	s.Visibility = nil
	c.step++
	for r := 0; r < c.restarts && len(c.healthy) > 0; r++ {
		// Readiness passes again, 10 s (the probe period) after an earlier restart.
		if len(c.ready) > 2*c.restarts {
			k := c.ready[0]
			c.ready = c.ready[1:]
			p := s.Pods[k].DeepCopy()
			c.setReady(s, p, true)
			s.Pods[k] = p
		}
		k := c.healthy[c.next%len(c.healthy)]
		c.next += 7
		if c.unread[k] != 0 || contains(c.ready, k) {
			continue
		}
		p := s.Pods[k].DeepCopy()
		cs := &p.Status.ContainerStatuses[0]
		reason, code := "OOMKilled", int32(137)
		if c.step%2 == 1 {
			reason, code = "Error", 1
		}
		at := refTime.Add(time.Duration(c.step) * 500 * time.Millisecond)
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, ContainerID: cs.ContainerID,
			StartedAt: metav1.NewTime(refTime.Add(-12 * time.Minute)), FinishedAt: metav1.NewTime(at),
		}}
		cs.RestartCount++
		cs.ContainerID = fmt.Sprintf("containerd://%064x", c.step*1000+r)
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at.Add(time.Second))}}
		c.setReady(s, p, false)
		s.Pods[k] = p
		c.ready = append(c.ready, k)
		c.unread[k] = c.step + 1 + (c.step*c.step+3*r)%5
	}
	// Tails read once the budget grants them; the others counted per namespace.
	waiting := map[string]int{}
	var namespaces []string
	for k, due := range c.unread {
		p := s.Pods[k]
		if due > c.step {
			if waiting[p.Namespace] == 0 {
				namespaces = append(namespaces, p.Namespace)
			}
			waiting[p.Namespace]++
			continue
		}
		delete(c.unread, k)
		cs := p.Status.ContainerStatuses[0]
		line := "fatal error: runtime: out of memory"
		if cs.LastTerminationState.Terminated.Reason == "Error" {
			line = "panic: dial tcp 10.96.14.7:5432: connect: connection refused"
		}
		tail := snapshot.ContainerLog{
			Namespace: p.Namespace, Pod: p.Name, Container: cs.Name, Previous: true,
			Lines: []string{stamp(refTime, c.step) + " " + line},
		}
		replaced := false
		for i := range s.Logs {
			if l := &s.Logs[i]; l.Namespace == p.Namespace && l.Pod == p.Name && l.Previous {
				*l, replaced = tail, true
			}
		}
		if !replaced {
			s.Logs = append(s.Logs, tail)
		}
	}
	slicesSortStrings(namespaces)
	for _, ns := range namespaces {
		s.Visibility = append(s.Visibility, snapshot.Visibility{Kind: "pods/log", Namespace: ns, Reason: fmt.Sprintf(
			"%s not read yet: while watching, at most 5 log tails are read a second", pluralTails(waiting[ns]))})
	}
	if c.extra != nil {
		c.extra(c.step, s)
	}
	c.snap = s
	return s
}

func stamp(t time.Time, step int) string {
	return t.Add(time.Duration(step) * 500 * time.Millisecond).Format(time.RFC3339Nano)
}

func pluralTails(n int) string {
	if n == 1 {
		return "1 log tail"
	}
	return fmt.Sprintf("%d log tails", n)
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func slicesSortStrings(xs []string) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// inNamespace moves every object of s to namespace ns, its UIDs with it.
func inNamespace(s *snapshot.Snapshot, ns string) *snapshot.Snapshot {
	uid := func(u types.UID) types.UID { return types.UID(ns + "-" + string(u)) }
	meta := func(m *metav1.ObjectMeta) {
		m.Namespace, m.UID = ns, uid(m.UID)
		for i := range m.OwnerReferences {
			m.OwnerReferences[i].UID = uid(m.OwnerReferences[i].UID)
		}
	}
	for _, d := range s.Deployments {
		meta(&d.ObjectMeta)
	}
	for _, rs := range s.ReplicaSets {
		meta(&rs.ObjectMeta)
	}
	for _, p := range s.Pods {
		meta(&p.ObjectMeta)
	}
	s.Namespaces = []string{ns}
	return s
}

// replay runs a churn for steps snapshots through the console's incremental diagnosis and
// checks each report against a full diagnosis of the same snapshot.
func replay(t *testing.T, c *churn, steps int) *countingEngine {
	t.Helper()
	clock := refTime
	eng := &countingEngine{}
	inc := eng.incremental(&clock)
	first := inc.next(c.snap, nil)
	prev := map[workloadKey]*byte{}
	for j := range first.rows {
		prev[first.rows[j].key] = unsafe.StringData(first.rows[j].filterText)
	}
	for i := 0; i < steps; i++ {
		s := c.advance()
		clock = clock.Add(500 * time.Millisecond)
		got := inc.next(s, nil)
		if want := diagnose.Diagnose(rebuilt(s)); !reflect.DeepEqual(got.report, want) {
			for j := range want.Workloads {
				if j < len(got.report.Workloads) && !reflect.DeepEqual(got.report.Workloads[j], want.Workloads[j]) {
					t.Fatalf("step %d: %s/%s differs from a full diagnosis:\n got %+v\nwant %+v", c.step,
						want.Workloads[j].Namespace, want.Workloads[j].Name, got.report.Workloads[j].Evidence, want.Workloads[j].Evidence)
				}
			}
			t.Fatalf("step %d: the incremental report differs from a full diagnosis", c.step)
		}
		// The rows taken from the last dataset read as rows drawn anew.
		if want := datasetOf(s, got.report); !reflect.DeepEqual(got.rows, want.rows) {
			for j := range want.rows {
				if !reflect.DeepEqual(got.rows[j], want.rows[j]) {
					t.Fatalf("step %d: row %v differs from one drawn anew:\n got %+v\nwant %+v", c.step, want.rows[j].key, got.rows[j], want.rows[j])
				}
			}
			t.Fatalf("step %d: the rows differ from rows drawn anew", c.step)
		}
		for j := range got.rows {
			if r := &got.rows[j]; len(r.filterText) > 0 && prev[r.key] == unsafe.StringData(r.filterText) {
				eng.reusedRows++
			}
		}
		clear(prev)
		for j := range got.rows {
			prev[got.rows[j].key] = unsafe.StringData(got.rows[j].filterText)
		}
	}
	return eng
}

// A namespace under churn (restarts, readiness flips, slice rewrites, tails read late and the
// visibility line counting those not read yet) is diagnosed in full only once: a visibility line
// that only says what was not read is evidence of the workloads of its namespace, not a reason
// to diagnose them all again. Every report equals a full diagnosis.
func TestAChurningNamespaceIsNotDiagnosedInFullForItsVisibility(t *testing.T) {
	s := scaleSnapshot(40, 3)
	withServices(s)
	c := newChurn(s, 2)
	eng := replay(t, c, 16)
	if eng.full != 1 || eng.partial != 16 {
		t.Fatalf("%d full and %d incremental diagnoses over 16 churned snapshots, want 1 and 16", eng.full, eng.partial)
	}
	if eng.reusedRows < 16*len(s.Deployments)/2 {
		t.Fatalf("%d rows of %d taken from the last dataset over 16 snapshots, want most", eng.reusedRows, 16*len(s.Deployments))
	}
}

// The second shape: two namespaces, the visibility of one of them only, a crash-looping
// workload's tails read again, a line about workloads whose logs the bound cut, and a pods
// visibility line, which changes what the engine counts (so its namespace's workloads are
// diagnosed again) and then goes.
func TestVisibilityChangesInOneNamespaceKeepTheOthersDiagnosis(t *testing.T) {
	s := inNamespace(scaleSnapshot(20, 3), "payments")
	o := inNamespace(scaleSnapshot(12, 4), "telemetry")
	withServices(s)
	withServices(o)
	s.Namespaces = []string{"payments", "telemetry"}
	s.Deployments = append(s.Deployments, o.Deployments...)
	s.ReplicaSets = append(s.ReplicaSets, o.ReplicaSets...)
	s.Pods = append(s.Pods, o.Pods...)
	s.Services = append(s.Services, o.Services...)
	s.EndpointSlices = append(s.EndpointSlices, o.EndpointSlices...)
	c := newChurn(s, 1)
	var crashing *corev1.Pod
	for _, p := range s.Pods {
		if p.Namespace == "telemetry" && p.Status.ContainerStatuses[0].State.Waiting != nil {
			crashing = p
			break
		}
	}
	c.extra = func(step int, s *snapshot.Snapshot) {
		if step%3 == 0 {
			s.Logs = append(s.Logs, snapshot.ContainerLog{
				Namespace: crashing.Namespace, Pod: crashing.Name, Container: crashing.Spec.Containers[0].Name,
				Previous: true, Lines: []string{stamp(refTime, step) + " level=error msg=\"config: missing INGEST_ENDPOINT\""},
			})
			s.Logs = dedupeTails(s.Logs)
		}
		if step >= 4 && step < 8 {
			s.Visibility = append(s.Visibility, snapshot.Visibility{Kind: "pods/log", Namespace: "telemetry", Reason: fmt.Sprintf(
				"read no log of %d failing workloads, over the bound of 200 log requests per read: Deployment/service-00003, Deployment/service-00013", 2+step%2)})
		}
		if step == 6 || step == 7 {
			s.Visibility = append(s.Visibility, snapshot.Visibility{
				Kind: "Pod", Namespace: "payments",
				Reason: `forbidden: User "oncall" cannot list resource "pods" in API group "" in the namespace "payments"`,
			})
		}
	}
	eng := replay(t, c, 12)
	if eng.full != 1 || eng.partial != 12 {
		t.Fatalf("%d full and %d incremental diagnoses over 12 churned snapshots, want 1 and 12", eng.full, eng.partial)
	}
	if eng.reusedRows == 0 {
		t.Fatal("no row was taken from the last dataset")
	}
}

// dedupeTails keeps the last tail of each container instance.
func dedupeTails(logs []snapshot.ContainerLog) []snapshot.ContainerLog {
	type key struct {
		ns, pod, container string
		previous           bool
	}
	last := map[key]int{}
	for i, l := range logs {
		last[key{l.Namespace, l.Pod, l.Container, l.Previous}] = i
	}
	var out []snapshot.ContainerLog
	for i, l := range logs {
		if last[key{l.Namespace, l.Pod, l.Container, l.Previous}] == i {
			out = append(out, l)
		}
	}
	return out
}

// BenchmarkWatchUpdate20kPodsUnderChurn is the console's work for one watch snapshot of a
// 20,000-pod namespace under the churn of issue 12 (12 restarts and as many readiness passes a
// snapshot, 50 pod status writes a second at a 500 ms debounce; their slices rewritten; tails
// read late and counted as not read yet meanwhile). full/op is the share of snapshots
// diagnosed in full.
func BenchmarkWatchUpdate20kPodsUnderChurn(b *testing.B) {
	clock := refTime
	full := 0
	inc := &incremental{
		diagnose: func(s *snapshot.Snapshot) *diagnose.Report { full++; return diagnose.Diagnose(s) },
		rediag:   diagnose.Rediagnose,
		now:      func() time.Time { return clock },
	}
	s := scaleSnapshot(4000, 5)
	withServices(s)
	c := newChurn(s, 12)
	inc.next(s, nil)
	for i := 0; i < 8; i++ { // past the first steps, to the churn's steady state
		inc.next(c.advance(), nil)
	}
	full = 0
	live := func() float64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc) / (1 << 20)
	}
	before := live()
	b.ReportAllocs()
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		next := c.advance()
		b.StartTimer()
		start := cpuTime()
		inc.next(next, nil)
		cpu += cpuTime() - start
	}
	b.StopTimer()
	reportCPU(b, cpu)
	b.ReportMetric(float64(full)/float64(b.N), "full/op")
	// What the console and the churn's own state hold after the run, against before it.
	b.ReportMetric(before, "live-MB-before")
	b.ReportMetric(live(), "live-MB-after")
	runtime.KeepAlive(inc)
	runtime.KeepAlive(c)
}

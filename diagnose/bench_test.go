package diagnose

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// syntheticCluster builds n Deployments of 5 copies each, spread over namespaces of perNS
// workloads, each with two revisions, a Service and its EndpointSlice, events and logs. One
// workload in ten is broken in one of the ways the scenarios show.
func syntheticCluster(n, perNS int) *snapshot.Snapshot {
	c := newCluster()
	for i := 0; i < n; i++ {
		state := running(true)
		switch i % 10 {
		case 3:
			state = waiting("ImagePullBackOff", `Back-off pulling image "registry.example/x:1": ErrImagePull: not found`)
		case 6:
			state = crashLooping("OOMKilled", 137, 4)
		case 9:
			state = running(false)
		}
		// Every copy carries a readiness warning and a log tail, so the rules have text to read.
		c.syntheticWorkload(i, perNS, 5, state, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503")
	}
	return c.s
}

// syntheticWorkload adds workload i (namespace team-<i/perNS>): a Deployment with an old and a
// current ReplicaSet, copies in state, a Service and its EndpointSlice. When reason is set, each
// copy gets that Warning event and a 50-line log tail of refused dials.
func (c *cluster) syntheticWorkload(i, perNS int, copies int32, state podState, reason, message string) {
	ns := fmt.Sprintf("team-%03d", i/perNS)
	name := fmt.Sprintf("svc-%05d", i)
	d := c.deployment(name, copies, 2, reasonNewRSAvailable, 30*24*time.Hour)
	d.Namespace = ns
	old := c.replicaSet(d, 1, 0, 30*24*time.Hour, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image += "-old" })
	cur := c.replicaSet(d, 2, copies, 2*24*time.Hour, nil)
	old.Namespace, cur.Namespace = ns, ns
	pods := map[*corev1.Pod]bool{}
	for j := 0; j < int(copies); j++ {
		p := c.pod(cur, fmt.Sprintf("p%d", j), 2*24*time.Hour, state)
		p.Namespace = ns
		pods[p] = facts.ReadCopy(p).Ready
		if reason == "" {
			continue
		}
		c.event("Pod", p.Name, p.UID, corev1.EventTypeWarning, reason, message, 10, time.Minute)
		c.s.Events[len(c.s.Events)-1].Namespace = ns
		c.s.Events[len(c.s.Events)-1].InvolvedObject.Namespace = ns
		lines := make([]string, 50)
		for k := range lines {
			lines[k] = fmt.Sprintf(`{"level":"warn","ts":"2026-11-24T11:%02d:00Z","msg":"upstream dial failed","error":"dial tcp 10.96.0.%d:8443: connect: connection refused"}`, k%60, i%250)
		}
		c.s.Logs = append(c.s.Logs, snapshot.ContainerLog{Namespace: ns, Pod: p.Name, Container: "app", Lines: lines})
	}
	svc := c.service(name, name)
	svc.Namespace = ns
	c.endpointSlice(svc, 8080, pods)
	c.s.EndpointSlices[len(c.s.EndpointSlices)-1].Namespace = ns
}

// BenchmarkDiagnose runs the whole engine over 2,000 workloads × 5 copies.
func BenchmarkDiagnose(b *testing.B) {
	for _, bc := range []struct {
		name     string
		n, perNS int
	}{
		{"2000x5_100perNamespace", 2000, 100},
		{"2000x5_oneNamespace", 2000, 2000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := syntheticCluster(bc.n, bc.perNS)
			s.Index()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.ForgetServicesFiled()
				r := Diagnose(s)
				if len(r.Workloads) != bc.n {
					b.Fatalf("diagnosed %d workloads, want %d", len(r.Workloads), bc.n)
				}
			}
		})
	}
}

// BenchmarkClassify runs only the classification half (collect, counts, revisions, copies,
// shape, evidence) over the same cluster, to tell its cost from the suspect rules'.
func BenchmarkClassify(b *testing.B) {
	s := syntheticCluster(2000, 100)
	s.Index()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, w := range collectWorkloads(s) {
			ref := s.ReferenceTime
			w.Snap = s
			count(s, w, ref)
			w.findServing()
			w.diffRevisions()
			w.observe()
			for i := range w.Pods {
				w.cls.copies = append(w.cls.copies, readCopy(w, i, ref))
			}
			w.cls.rollout = readRollout(w, ref)
			w.cls.failedCreate = readFailedCreate(w)
			w.Shape = classify(w, ref)
			w.Evidence = gatherEvidence(s, w, ref)
		}
	}
}

// syntheticHealthyCluster builds n Deployments of 3 copies each, perNS per namespace, each with
// two revisions, a Service and its EndpointSlice: what a large production cluster mostly is.
// One workload in twenty is broken (a pull failure, an OOM crash loop or failing readiness, in
// turn); only the broken ones have Warning events, and only their copies have log tails.
func syntheticHealthyCluster(n, perNS int) *snapshot.Snapshot {
	return syntheticHealthyClusterOf(n, perNS, 3)
}

// syntheticHealthyClusterOf is syntheticHealthyCluster with copies copies per workload.
func syntheticHealthyClusterOf(n, perNS int, copies int32) *snapshot.Snapshot {
	return syntheticHealthyClusterPart(n, perNS, copies, func(bool) bool { return true })
}

// syntheticHealthyClusterPart is syntheticHealthyClusterOf with only the workloads keep takes
// (it is told whether each is broken), each as it is there.
func syntheticHealthyClusterPart(n, perNS int, copies int32, keep func(broken bool) bool) *snapshot.Snapshot {
	c := newCluster()
	for i := 0; i < n; i++ {
		state := running(true)
		var reason, message string
		if i%20 == 7 {
			switch i / 20 % 3 {
			case 0:
				state = waiting("ImagePullBackOff", `Back-off pulling image "registry.example/x:1": ErrImagePull: not found`)
				reason, message = "Failed", `Failed to pull image "registry.example/x:1": rpc error: code = NotFound desc = failed to pull and unpack image "registry.example/x:1": failed to resolve image: registry.example/x:1: not found`
			case 1:
				state = crashLooping("OOMKilled", 137, 4)
				reason, message = "BackOff", "Back-off restarting failed container app in pod "+fmt.Sprintf("svc-%05d", i)
			case 2:
				state = running(false)
				reason, message = "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503"
			}
		}
		if keep(reason != "") {
			c.syntheticWorkload(i, perNS, copies, state, reason, message)
		}
	}
	return c.s
}

// BenchmarkDiagnoseHealthyCluster runs the whole engine over a large, mostly healthy cluster:
// 10,000 workloads, 30,000 copies, 95% healthy.
func BenchmarkDiagnoseHealthyCluster(b *testing.B) {
	s := syntheticHealthyCluster(10000, 100)
	s.Index()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.ForgetServicesFiled()
		r := Diagnose(s)
		if r.Summary[ShapeHealthy] != 9500 {
			b.Fatalf("%d healthy workloads, want 9500 (summary %v)", r.Summary[ShapeHealthy], r.Summary)
		}
	}
}

// TestSyntheticHealthyClusterShapes keeps the healthy-cluster benchmark honest.
func TestSyntheticHealthyClusterShapes(t *testing.T) {
	r := Diagnose(syntheticHealthyCluster(600, 100))
	want := map[Shape]int{ShapeHealthy: 570, ShapeNeverStarts: 10, ShapeStartsAndDies: 10, ShapeLiveButIdle: 10}
	for sh, n := range want {
		if r.Summary[sh] != n {
			t.Errorf("summary[%s] = %d, want %d (summary %v)", sh, r.Summary[sh], n, r.Summary)
		}
	}
}

// TestSyntheticClusterShapes keeps the benchmark honest: its broken workloads are found.
func TestSyntheticClusterShapes(t *testing.T) {
	r := Diagnose(syntheticCluster(40, 10))
	want := map[Shape]int{ShapeHealthy: 28, ShapeNeverStarts: 4, ShapeStartsAndDies: 4, ShapeLiveButIdle: 4}
	for sh, n := range want {
		if r.Summary[sh] != n {
			t.Errorf("summary[%s] = %d, want %d (summary %v)", sh, r.Summary[sh], n, r.Summary)
		}
	}
	if r.Workloads[0].Shape != ShapeNeverStarts || r.Workloads[len(r.Workloads)-1].Shape != ShapeHealthy {
		t.Errorf("workloads not sorted worst first: first %s, last %s", r.Workloads[0].Shape, r.Workloads[len(r.Workloads)-1].Shape)
	}
}

// BenchmarkDiagnose100kParts runs the engine over BenchmarkDiagnose100k's healthy workloads
// alone (9,500 workloads, 95,000 copies) and its broken ones alone (500 workloads, 5,000 copies
// each logging 50 lines): where the whole op's time goes.
func BenchmarkDiagnose100kParts(b *testing.B) {
	for _, part := range []struct {
		name   string
		broken bool
		want   int
	}{{"healthy", false, 9500}, {"broken", true, 500}} {
		b.Run(part.name, func(b *testing.B) {
			s := syntheticHealthyClusterPart(10000, 100, 10, func(broken bool) bool { return broken == part.broken })
			s.Index()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.ForgetServicesFiled()
				if r := Diagnose(s); len(r.Workloads) != part.want {
					b.Fatalf("%d workloads, want %d", len(r.Workloads), part.want)
				}
			}
		})
	}
}

// BenchmarkDiagnose100k runs the whole engine over 10,000 Deployments of 10 copies each
// (100,000 pods), 100 per namespace, with the healthy cluster's mix: one workload in twenty
// broken, Warning events and log tails only on those. Each op forgets the Services the last
// one filed (the snapshot keeps them for the next diagnosis of it), as a diagnosis of a new
// snapshot files them.
func BenchmarkDiagnose100k(b *testing.B) {
	s := syntheticHealthyClusterOf(10000, 100, 10)
	s.Index()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.ForgetServicesFiled()
		r := Diagnose(s)
		if r.Summary[ShapeHealthy] != 9500 {
			b.Fatalf("%d healthy workloads, want 9500 (summary %v)", r.Summary[ShapeHealthy], r.Summary)
		}
	}
}

package scalegen_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/controlplane"
	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
	"github.com/kubediagnose/kubectl-diagnose/test/internal/scalegen"
)

// TestALongerPlanStartsWithTheShorterOne is what Loaded.Grow relies on: the workloads already
// loaded are the first ones of the plan it grows to, so growing 2,000 to 5,000 builds the
// namespace Load would build at 5,000.
func TestALongerPlanStartsWithTheShorterOne(t *testing.T) {
	for _, f := range []float64{0.1, 0.5, 0.37} {
		short := scalegen.Plan(scalegen.Options{Deployments: 2000, BrokenFraction: f})
		long := scalegen.Plan(scalegen.Options{Deployments: 5000, BrokenFraction: f})
		if len(short) != 2000 || len(long) != 5000 {
			t.Fatalf("plans of %d and %d workloads", len(short), len(long))
		}
		for i := range short {
			if short[i] != long[i] {
				t.Fatalf("broken %v: workload %d is %+v in the short plan, %+v in the long one", f, i, short[i], long[i])
			}
		}
	}
}

// TestNodesAreSizedForGrowTo: the nodes registered at Load carry the grown namespace at 100
// pods each, and at 50,000 pods (past 255 nodes) every node still gets its own /24.
func TestNodesAreSizedForGrowTo(t *testing.T) {
	at2k := scalegen.Nodes(scalegen.Options{Deployments: 2000})
	grown := scalegen.Nodes(scalegen.Options{Deployments: 2000, GrowTo: 5000})
	at5k := scalegen.Nodes(scalegen.Options{Deployments: 5000})
	if at2k != 202 || grown != at5k || at5k != 504 {
		t.Fatalf("nodes: %d at 2,000, %d at 2,000 growing to 5,000, %d at 5,000; want 202, 504, 504", at2k, grown, at5k)
	}
	if n := scalegen.Nodes(scalegen.Options{Deployments: 5000, GrowTo: 10}); n != at5k {
		t.Fatalf("GrowTo below Deployments sized %d nodes, want %d", n, at5k)
	}
	seen := map[string]int{}
	for i := 1; i <= at5k; i++ {
		s := kubeletsim.NodeSubnet(i)
		if j, dup := seen[s]; dup {
			t.Fatalf("nodes %d and %d share the subnet %s", j, i, s)
		}
		seen[s] = i
	}
	if got := kubeletsim.NodeSubnet(7); got != "10.244.7" {
		t.Errorf("node 7's subnet is %s, want 10.244.7 (the first 255 nodes keep theirs)", got)
	}
	if got := kubeletsim.NodeSubnet(504); got != "10.245.248" {
		t.Errorf("node 504's subnet is %s, want 10.245.248", got)
	}
}

// TestGrowAddsThePlansNextWorkloads loads part of a plan on a real control plane, grows it to
// the whole plan (whose added part holds every fault) and audits it live with the built
// binary: every workload, old and new, takes its fault's shape, and the namespace holds the
// pods the whole plan makes.
func TestGrowAddsThePlansNextWorkloads(t *testing.T) {
	binary := make(chan string, 1)
	go func() { binary <- build(t) }()
	cp := controlplane.StartT(t, controlplane.Options{ControllerManagerArgs: scalegen.ControllerManagerArgs})
	opts := scalegen.Options{
		Namespace: "scalegen-grow", Deployments: 3, GrowTo: 10, PodsPer: 2, BrokenFraction: 0.5,
		ProgressDeadlineSeconds: 2, Logf: t.Logf,
	}
	whole := opts
	whole.Deployments = opts.GrowTo
	plan := scalegen.Plan(whole)
	added := map[scalegen.Fault]bool{}
	for _, w := range plan[opts.Deployments:] {
		added[w.Fault] = true
	}
	if len(added) != 5 {
		t.Fatalf("the grown part does not hold every fault: %+v", plan[opts.Deployments:])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l, err := scalegen.Load(ctx, cp.AdminConfig(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop()
	if len(l.Workloads) != opts.Deployments {
		t.Fatalf("loaded %d workloads, want %d", len(l.Workloads), opts.Deployments)
	}
	if err := l.Grow(ctx, opts.GrowTo+1); err == nil {
		t.Fatal("grew past the nodes' size without an error")
	}
	if err := l.Grow(ctx, opts.GrowTo); err != nil {
		t.Fatal(err)
	}
	if len(l.Workloads) != len(plan) {
		t.Fatalf("grown to %d workloads, want %d", len(l.Workloads), len(plan))
	}
	want := 0
	for _, w := range plan {
		want += 2
		if w.Revisions == 2 && (w.Fault == scalegen.FaultImage || w.Fault == scalegen.FaultCrash) {
			want++ // the stuck rollout's surge pod
		}
	}
	if c := l.Steady.Counts(); c.Pods != want || c.Settled != want {
		t.Errorf("%d pods, %d settled; want %d", c.Pods, c.Settled, want)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, controlplane.AdminUser, opts.Namespace); err != nil {
		t.Fatal(err)
	}
	settled := time.Now()
	bin := <-binary
	// As in TestLoadAndDumpDiagnoseAlike: the selector fault is progressing for 30 s.
	time.Sleep(time.Until(settled.Add(31 * time.Second)))
	live := audit(t, bin, "--kubeconfig", kubeconfig, "audit", "-n", opts.Namespace, "-o", "json")
	for _, w := range plan {
		lw, ok := live[w.Name]
		if !ok {
			t.Errorf("%s: not in the live report", w.Name)
			continue
		}
		if lw.Shape != wantShape[w.Fault] {
			t.Errorf("%s (fault %q, %d revisions): shape %s, want %s", w.Name, w.Fault, w.Revisions, lw.Shape, wantShape[w.Fault])
		}
	}
	if len(live) != len(plan) {
		t.Errorf("the report holds %d workloads, want %d", len(live), len(plan))
	}
}

package scalegen_test

import (
	"testing"

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

package diagnose

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// TestDaemonSetPoolNotThereOrTypo: a DaemonSet no node may run is no-eligible-nodes only when
// the label it selects is on no node and no near miss of one that is (a pool to come);
// a typo of a key or value the nodes carry, labels that exist but on no one node, and taints
// on the nodes it selects stay never-starts, a failure. The fixture's three nodes carry
// corp.example/node-pool=general; its DaemonSet selects corp.example/node-pool=gpu.
func TestDaemonSetPoolNotThereOrTypo(t *testing.T) {
	const pool = "corp.example/node-pool"
	selector := func(m map[string]string) func(*snapshot.Snapshot, *corev1.PodSpec) {
		return func(_ *snapshot.Snapshot, spec *corev1.PodSpec) { spec.NodeSelector = m }
	}
	requireIn := func(key string, values ...string) func(*snapshot.Snapshot, *corev1.PodSpec) {
		return func(_ *snapshot.Snapshot, spec *corev1.PodSpec) {
			spec.NodeSelector = nil
			spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}},
				}}},
			}}
		}
	}
	tests := []struct {
		name   string
		change func(*snapshot.Snapshot, *corev1.PodSpec)
		want   Shape
		pool   string
	}{
		{"a value far from any the nodes carry is a pool to come", nil, ShapeNoEligibleNodes, pool + "=gpu"},
		{"a key no node has, far from theirs, is a pool to come", selector(map[string]string{"nvidia.com/gpu.present": "true"}), ShapeNoEligibleNodes, "nvidia.com/gpu.present=true"},
		{"a required affinity value no node carries is a pool to come", requireIn(pool, "gpu-a100", "gpu-h100"), ShapeNoEligibleNodes, pool + " in (gpu-a100, gpu-h100)"},
		{"a value one edit from the nodes' is a typo", selector(map[string]string{pool: "genral"}), ShapeNeverStarts, ""},
		{"a value equal but for case is a typo", selector(map[string]string{pool: "General"}), ShapeNeverStarts, ""},
		{"a key one edit from the nodes' is a typo", selector(map[string]string{"corp.example/node_pool": "gpu"}), ShapeNeverStarts, ""},
		{"a required affinity value near the nodes' is a typo", requireIn(pool, "genearl"), ShapeNeverStarts, ""},
		{"labels that exist, but on no one node, are no pool", func(s *snapshot.Snapshot, spec *corev1.PodSpec) {
			a, b := s.Nodes[0], s.Nodes[1]
			spec.NodeSelector = map[string]string{
				"kubernetes.io/hostname":      a.Labels["kubernetes.io/hostname"],
				"topology.kubernetes.io/zone": b.Labels["topology.kubernetes.io/zone"],
			}
		}, ShapeNeverStarts, ""},
		{"the pool selected exists but is tainted: a failure", func(s *snapshot.Snapshot, spec *corev1.PodSpec) {
			spec.NodeSelector = map[string]string{pool: "general"}
			for _, n := range s.Nodes {
				n.Spec.Taints = []corev1.Taint{{Key: "corp.example/dedicated", Value: "general", Effect: corev1.TaintEffectNoSchedule}}
			}
		}, ShapeNeverStarts, ""},
		{"without the nodes nothing tells a pool from a typo", func(s *snapshot.Snapshot, _ *corev1.PodSpec) {
			s.Nodes = nil
			s.Visibility = append(s.Visibility, snapshot.Visibility{Kind: "Node", Reason: "forbidden: cluster-scoped"})
		}, ShapeNeverStarts, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := fixtureSnapshot(t, "daemonset-node-selector")
			var ds *appsv1.DaemonSet
			for _, o := range s.DaemonSets {
				if o.Name == "dcgm-exporter" {
					ds = o
				}
			}
			if ds == nil {
				t.Fatal("no DaemonSet dcgm-exporter in the fixture")
			}
			if tt.change != nil {
				tt.change(s, &ds.Spec.Template.Spec)
			}
			d := Diagnose(s).Find("DaemonSet", "fixture-daemonset-node-selector", "dcgm-exporter")
			if d == nil {
				t.Fatal("no diagnosis")
			}
			if d.Shape != tt.want {
				t.Fatalf("shape = %s, want %s (%s)", d.Shape, tt.want, d.Headline)
			}
			if len(d.Suspects) == 0 {
				t.Errorf("%s with no suspect: the field that keeps it off every node is unnamed", d.Shape)
			}
			switch tt.want {
			case ShapeNoEligibleNodes:
				if d.Cause != CauseUnknown || d.Argument != nil {
					t.Errorf("cause = %s, argument %+v: an intended state has no fault to argue", d.Cause, d.Argument)
				}
				if !strings.Contains(d.Headline, "waits for nodes labelled "+tt.pool+",") {
					t.Errorf("headline %q does not name the labels %q it waits for", d.Headline, tt.pool)
				}
				if !strings.HasPrefix(d.Fix, "none while nodes labelled "+tt.pool+" are yet to join") {
					t.Errorf("fix = %q", d.Fix)
				}
			case ShapeNeverStarts:
				if d.Cause != CauseSpec {
					t.Errorf("cause = %s, want spec", d.Cause)
				}
			}
		})
	}
}

func TestNear(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"general", "genral", true},
		{"general", "General", true},
		{"amd64", "amd46", true},
		{"amd64", "arm64", false},
		{"arm64", "arm6", true},
		{"gpu", "cpu", true},
		{"gpu", "general", false},
		{"corp.example/node-pool", "corp.example/nodepool", true},
		{"eu-west-1a", "eu-west-2b", true},
		{"nvidia.com/gpu.present", "kubernetes.io/os", false},
		{"", "ab", false},
	}
	for _, tt := range tests {
		if got := near(tt.a, tt.b); got != tt.want {
			t.Errorf("near(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

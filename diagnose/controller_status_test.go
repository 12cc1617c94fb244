package diagnose

import (
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// fixtureSnapshot reads testdata/fixtures/<id> at its verdict's reference time.
func fixtureSnapshot(t *testing.T, id string) *snapshot.Snapshot {
	t.Helper()
	dir := filepath.Join("..", "testdata", "fixtures", id)
	return loadDump(t, dir, loadExpected(t, dir))
}

// withoutPods prunes the snapshot's pods as a live identity forbidden to list them sees it.
func withoutPods(s *snapshot.Snapshot, ns string) *snapshot.Snapshot {
	s.Pods, s.Logs = nil, nil
	s.Visibility = append(s.Visibility, snapshot.Visibility{
		Kind: "Pod", Namespace: ns,
		Reason: `forbidden: User "reader" cannot list resource "pods" in API group "" in the namespace "` + ns + `"`,
	})
	return s
}

// dropPods removes the named pods, as a dump filtered by label or pruned by hand does.
func dropPods(s *snapshot.Snapshot, names ...string) *snapshot.Snapshot {
	drop := map[string]bool{}
	for _, n := range names {
		drop[n] = true
	}
	var kept []*corev1.Pod
	for _, p := range s.Pods {
		if !drop[p.Name] {
			kept = append(kept, p)
		}
	}
	s.Pods = kept
	return s
}

func hasEvidenceKind(d *Diagnosis, src EvidenceSource, kind string) bool {
	for _, e := range d.Evidence {
		if e.Source == src && e.Kind == kind {
			return true
		}
	}
	return false
}

// TestControllerStatusVerdicts: with the pods not seen, the shape, counts and suspects come
// from the controller's status and conditions; with some pods missing, the copies the
// controller reports are unseen, never absent.
func TestControllerStatusVerdicts(t *testing.T) {
	tests := []struct {
		name          string
		snap          func(t *testing.T) *snapshot.Snapshot
		kind, ns, wl  string
		wantShape     Shape
		wantCounts    Counts
		wantRule      RuleID
		wantPath      string
		byController  bool  // the verdict rests on the controller's word
		wantHidden    int32 // copies counted by the controller beyond those seen
		wantNoSuspect bool
	}{
		{
			name: "forbidden pods, fully available Deployment",
			snap: func(t *testing.T) *snapshot.Snapshot {
				return withoutPods(fixtureSnapshot(t, "old-restarts"), "fixture-old-restarts")
			},
			kind: "Deployment", ns: "fixture-old-restarts", wl: "pricing",
			wantShape: ShapeHealthy, wantCounts: Counts{Declared: 3, Existing: 3, Serving: 3}, byController: true, wantNoSuspect: true,
		},
		{
			name: "forbidden pods, fully available DaemonSet",
			snap: func(t *testing.T) *snapshot.Snapshot {
				return withoutPods(fixtureSnapshot(t, "daemonset"), "fixture-daemonset")
			},
			kind: "DaemonSet", ns: "fixture-daemonset", wl: "fluent-bit",
			wantShape: ShapeHealthy, wantCounts: Counts{Declared: 3, Existing: 3, Serving: 3}, byController: true, wantNoSuspect: true,
		},
		{
			name: "forbidden pods, ReplicaFailure from quota",
			snap: func(t *testing.T) *snapshot.Snapshot {
				return withoutPods(fixtureSnapshot(t, "quota"), "fixture-quota")
			},
			kind: "Deployment", ns: "fixture-quota", wl: "report-builder",
			wantShape: ShapeNeverStarts, wantCounts: Counts{Declared: 3}, byController: true,
			wantRule: rules.RuleQuotaExceeded, wantPath: "spec.template.spec.containers[0].resources.requests[memory]",
		},
		{
			name: "forbidden pods in another namespace: these pods were seen",
			snap: func(t *testing.T) *snapshot.Snapshot {
				return withoutPods(fixtureSnapshot(t, "old-restarts"), "elsewhere")
			},
			kind: "Deployment", ns: "fixture-old-restarts", wl: "pricing",
			// The snapshot's pods are gone but none was reported unreadable here: the
			// controller's three copies are unseen, not absent.
			wantShape: ShapeHealthy, wantCounts: Counts{Declared: 3, Existing: 3, Serving: 3}, wantHidden: 3, wantNoSuspect: true,
		},
		{
			name: "forbidden pods, ProgressDeadlineExceeded with no new copy Ready",
			snap: func(t *testing.T) *snapshot.Snapshot {
				return withoutPods(fixtureSnapshot(t, "start-error"), "fixture-start-error")
			},
			kind: "Deployment", ns: "fixture-start-error", wl: "pdf-renderer",
			wantShape: ShapeNeverStarts, wantCounts: Counts{Declared: 2, Existing: 3, Serving: 2}, byController: true,
			// Only the revision history is left: the changed field is the suspect.
			wantRule: rules.RuleChangedField, wantPath: "spec.template.spec.containers[0].command[0]",
		},
		{
			name: "Deployments alone, ProgressDeadlineExceeded while the old copies serve",
			snap: func(t *testing.T) *snapshot.Snapshot {
				s := withoutPods(fixtureSnapshot(t, "start-error"), "fixture-start-error")
				s.ReplicaSets, s.Events = nil, nil
				return s
			},
			kind: "Deployment", ns: "fixture-start-error", wl: "pdf-renderer",
			// 3 copies, 1 of the new revision, 2 Ready: the Ready ones are the old.
			wantShape: ShapeNeverStarts, wantCounts: Counts{Declared: 2, Existing: 3, Serving: 2}, byController: true, wantNoSuspect: true,
		},
		{
			name: "forbidden pods, rollout inside its deadline",
			snap: func(t *testing.T) *snapshot.Snapshot {
				return withoutPods(fixtureSnapshot(t, "invalid-image"), "fixture-invalid-image")
			},
			kind: "Deployment", ns: "fixture-invalid-image", wl: "storefront",
			wantShape: ShapeProgressing, wantCounts: Counts{Declared: 3, Existing: 4, Serving: 3}, byController: true, wantNoSuspect: true,
		},
		{
			name: "pruned dump, one of three healthy copies missing",
			snap: func(t *testing.T) *snapshot.Snapshot {
				return dropPods(fixtureSnapshot(t, "old-restarts"), "pricing-5f57b5699b-4x48l")
			},
			kind: "Deployment", ns: "fixture-old-restarts", wl: "pricing",
			wantShape: ShapeHealthy, wantCounts: Counts{Declared: 3, Existing: 3, Serving: 3, Restarts: -1}, wantHidden: 1, wantNoSuspect: true,
		},
		{
			name: "pruned dump, the seen copies fail: they decide",
			snap: func(t *testing.T) *snapshot.Snapshot {
				s := fixtureSnapshot(t, "readiness-port")
				return dropPods(s, s.Pods[0].Name)
			},
			kind: "Deployment", ns: "fixture-readiness-port", wl: "inventory",
			wantShape: ShapeLiveButIdle, wantCounts: Counts{Declared: 3, Existing: 3, Serving: 0, Restarts: -1}, wantHidden: 1,
			wantRule: rules.RuleProbePort, wantPath: "spec.template.spec.containers[0].readinessProbe.httpGet.port",
		},
		{
			name: "DaemonSet whose nodeSelector matches no node, pods visible",
			snap: func(t *testing.T) *snapshot.Snapshot { return fixtureSnapshot(t, "daemonset-node-selector") },
			kind: "DaemonSet", ns: "fixture-daemonset-node-selector", wl: "dcgm-exporter",
			// gpu is on no node and no near miss of general: a pool to come (TestDaemonSetPoolNotThereOrTypo).
			wantShape: ShapeNoEligibleNodes, wantRule: rules.RuleNodeSelector, wantPath: "spec.template.spec.nodeSelector[corp.example/node-pool]",
		},
		{
			name: "DaemonSet whose nodeSelector matches no node, pods and nodes not visible",
			snap: func(t *testing.T) *snapshot.Snapshot {
				s := withoutPods(fixtureSnapshot(t, "daemonset-node-selector"), "fixture-daemonset-node-selector")
				s.Nodes = nil
				s.Visibility = append(s.Visibility, snapshot.Visibility{Kind: "Node", Reason: "forbidden: cluster-scoped"})
				return s
			},
			kind: "DaemonSet", ns: "fixture-daemonset-node-selector", wl: "dcgm-exporter",
			wantShape: ShapeNeverStarts, byController: true, wantRule: rules.RuleNodeSelector, wantPath: "spec.template.spec.nodeSelector[corp.example/node-pool]",
		},
		{
			name: "DaemonSet on a pool whose every node is tainted, pods visible",
			snap: func(t *testing.T) *snapshot.Snapshot { return fixtureSnapshot(t, "daemonset-taint") },
			kind: "DaemonSet", ns: "fixture-daemonset-taint", wl: "log-shipper",
			wantShape: ShapeNeverStarts, wantRule: rules.RuleUntoleratedTaint, wantPath: "spec.template.spec.tolerations",
		},
		{
			name: "DaemonSet on a pool whose every node is tainted, pods not visible",
			snap: func(t *testing.T) *snapshot.Snapshot {
				return withoutPods(fixtureSnapshot(t, "daemonset-taint"), "fixture-daemonset-taint")
			},
			kind: "DaemonSet", ns: "fixture-daemonset-taint", wl: "log-shipper",
			wantShape: ShapeNeverStarts, byController: true, wantRule: rules.RuleUntoleratedTaint, wantPath: "spec.template.spec.tolerations",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.snap(t)
			s.Index()
			var w *workload
			for _, x := range collectWorkloads(s) {
				if x.Kind == tt.kind && x.Namespace == tt.ns && x.Name == tt.wl {
					w = x
				}
			}
			if w == nil {
				t.Fatalf("no workload %s %s/%s", tt.kind, tt.ns, tt.wl)
			}
			d := diagnoseWorkload(s, w)
			if d.Shape != tt.wantShape {
				t.Errorf("shape = %s, want %s (why %q)", d.Shape, tt.wantShape, w.cls.why)
			}
			if tt.wantCounts != (Counts{}) {
				got := d.Counts
				if tt.wantCounts.Restarts < 0 { // restarts of the seen copies: not the point here
					got.Restarts = -1
				}
				if got != tt.wantCounts {
					t.Errorf("counts = %+v, want %+v", d.Counts, tt.wantCounts)
				}
			}
			if got := w.cls.sight.byController(); got != tt.byController {
				t.Errorf("verdict by the controller's word = %v, want %v", got, tt.byController)
			}
			if got := w.cls.sight.Hidden; got != tt.wantHidden {
				t.Errorf("copies not in the snapshot = %d, want %d", got, tt.wantHidden)
			}
			if tt.byController && !hasEvidenceKind(&d, SourceControllerStatus, "ControllerCounts") {
				t.Errorf("no controller-status evidence of the counts: %+v", d.Evidence)
			}
			if tt.wantHidden > 0 && !hasEvidenceKind(&d, SourceVisibility, "CopiesNotInSnapshot") {
				t.Errorf("no visibility evidence of the copies the snapshot lacks: %+v", d.Evidence)
			}
			if tt.wantNoSuspect && len(d.Suspects) > 0 {
				t.Errorf("suspects %+v, want none", d.Suspects)
			}
			if tt.wantRule != "" {
				if len(d.Suspects) == 0 {
					t.Fatalf("no suspect, want %s at %s", tt.wantRule, tt.wantPath)
				}
				top := d.Suspects[0]
				if keysAsFields(top.Path.String()) != keysAsFields(tt.wantPath) {
					t.Errorf("top suspect path = %s, want %s", top.Path, tt.wantPath)
				}
				if top.Rule != tt.wantRule {
					t.Errorf("top suspect rule = %s, want %s", top.Rule, tt.wantRule)
				}
			}
		})
	}
}

// TestReplicaFailureWithoutMessage: the controller's ReplicaFailure condition is a failure
// even when it carries no message and no FailedCreate event is left.
func TestReplicaFailureWithoutMessage(t *testing.T) {
	tests := []struct {
		name  string
		pods  bool
		blank func(s *snapshot.Snapshot)
	}{
		{name: "on the ReplicaSet, pods not seen", blank: blankReplicaSetFailure},
		{name: "on the ReplicaSet, pods seen", pods: true, blank: blankReplicaSetFailure},
		{name: "on the Deployment only", pods: true, blank: func(s *snapshot.Snapshot) {
			blankDeploymentFailure(s)
			for _, rs := range s.ReplicaSets {
				rs.Status.Conditions = nil
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := fixtureSnapshot(t, "serviceaccount")
			s.Events = nil
			tt.blank(s)
			if !tt.pods {
				withoutPods(s, "fixture-serviceaccount")
			}
			r := Diagnose(s)
			d := r.Find("Deployment", "fixture-serviceaccount", "audit-exporter")
			if d == nil {
				t.Fatal("no diagnosis of audit-exporter")
			}
			if d.Shape != ShapeNeverStarts {
				t.Errorf("shape = %s, want never-starts (headline %q)", d.Shape, d.Headline)
			}
			if !hasEvidenceKind(d, SourceControllerStatus, "FailedCreate") {
				t.Errorf("no FailedCreate evidence from the condition: %+v", d.Evidence)
			}
		})
	}
}

func blankReplicaSetFailure(s *snapshot.Snapshot) {
	blankDeploymentFailure(s)
	for _, rs := range s.ReplicaSets {
		for i := range rs.Status.Conditions {
			if rs.Status.Conditions[i].Type == appsv1.ReplicaSetReplicaFailure {
				rs.Status.Conditions[i].Message = ""
			}
		}
	}
}

func blankDeploymentFailure(s *snapshot.Snapshot) {
	for _, d := range s.Deployments {
		for i := range d.Status.Conditions {
			if d.Status.Conditions[i].Type == appsv1.DeploymentReplicaFailure {
				d.Status.Conditions[i].Message = ""
			}
		}
	}
}

// TestExcludedNodes checks the daemon controller's node predicates on small hand-made nodes.
func TestExcludedNodes(t *testing.T) {
	node := func(name string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	gpu := map[string]string{"pool": "gpu"}
	general := map[string]string{"pool": "general"}
	dedicated := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	notReady := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}
	soft := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectPreferNoSchedule}
	affinity := func(op corev1.NodeSelectorOperator, values ...string) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: op, Values: values}}}},
		}}}
	}
	tests := []struct {
		name                string
		spec                corev1.PodSpec
		nodes               []*corev1.Node
		selector, taint, nm int
	}{
		{name: "selector matches no node", spec: corev1.PodSpec{NodeSelector: gpu}, nodes: []*corev1.Node{node("a", general), node("b", general)}, selector: 2},
		{name: "selector matches one", spec: corev1.PodSpec{NodeSelector: gpu}, nodes: []*corev1.Node{node("a", general), node("b", gpu)}, selector: 1},
		{name: "matching nodes tainted", spec: corev1.PodSpec{NodeSelector: gpu}, nodes: []*corev1.Node{node("a", gpu, dedicated), node("b", general)}, selector: 1, taint: 1},
		{name: "toleration by key Exists", spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}}, nodes: []*corev1.Node{node("a", gpu, dedicated)}},
		{name: "toleration by the wrong value", spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "dedicated", Value: "batch"}}}, nodes: []*corev1.Node{node("a", gpu, dedicated)}, taint: 1},
		{name: "daemon pods tolerate not-ready", nodes: []*corev1.Node{node("a", gpu, notReady)}},
		{name: "PreferNoSchedule keeps no daemon pod out", nodes: []*corev1.Node{node("a", gpu, soft)}},
		{name: "required affinity In", spec: corev1.PodSpec{Affinity: affinity(corev1.NodeSelectorOpIn, "gpu")}, nodes: []*corev1.Node{node("a", general), node("b", gpu)}, selector: 1},
		{name: "required affinity DoesNotExist", spec: corev1.PodSpec{Affinity: affinity(corev1.NodeSelectorOpDoesNotExist)}, nodes: []*corev1.Node{node("a", general)}, selector: 1},
		{name: "nodeName", spec: corev1.PodSpec{NodeName: "b"}, nodes: []*corev1.Node{node("a", general), node("b", general)}, nm: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := excludedNodes(&tt.spec, tt.nodes)
			if ex.selector != tt.selector || ex.taint != tt.taint || ex.name != tt.nm {
				t.Errorf("excluded by selector %d, taint %d, nodeName %d; want %d, %d, %d", ex.selector, ex.taint, ex.name, tt.selector, tt.taint, tt.nm)
			}
		})
	}
}

package diagnose

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// TestWaiver: the kubediagnose.dev/waive annotation waives the verdict whose shape or top
// suspect's rule it names, with its reason, and nothing else: the verdict itself (shape,
// cause, suspects, fix) is the same waived or not.
func TestWaiver(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct {
		name, fixture, kind, ns, wl string
		annotation                  string
		want                        *Waiver
	}{
		{
			"a shape", "cronjob-suspended", "CronJob", "fixture-cronjob-suspended", "cache-warmer",
			"suspended; paused while the cache moves", &Waiver{What: "suspended", Reason: "paused while the cache moves"},
		},
		{
			"a rule of the top suspect", "daemonset-taint", "DaemonSet", "fixture-daemonset-taint", "log-shipper",
			"scheduling-untolerated-taint; the ingest pool is drained until Monday", &Waiver{What: "scheduling-untolerated-taint", Reason: "the ingest pool is drained until Monday"},
		},
		{
			"one of several, on its own line, in any case", "daemonset-node-selector", "DaemonSet", "fixture-daemonset-node-selector", "dcgm-exporter",
			"starts-and-dies; not this\n No-Eligible-Nodes , suspended ; GPU pool joins in Q3\n", &Waiver{What: "no-eligible-nodes", Reason: "GPU pool joins in Q3"},
		},
		{
			"no reason given", "daemonset-node-selector", "DaemonSet", "fixture-daemonset-node-selector", "dcgm-exporter",
			"no-eligible-nodes", &Waiver{What: "no-eligible-nodes"},
		},
		{
			"a long reason is cut", "daemonset-node-selector", "DaemonSet", "fixture-daemonset-node-selector", "dcgm-exporter",
			"no-eligible-nodes; " + long, &Waiver{What: "no-eligible-nodes", Reason: long[:maxWaiverReason-1] + "…"},
		},
		{
			"another shape does not apply", "daemonset-taint", "DaemonSet", "fixture-daemonset-taint", "log-shipper",
			"no-eligible-nodes; a pool to come", nil,
		},
		{
			"a suspect that is not the top one does not apply", "db-down-after-rollout", "Deployment", "fixture-db-down-after-rollout", "orders-api",
			"changed-field; the image bump is fine", nil,
		},
		{
			"broken is no shape", "registry-down", "Deployment", "fixture-registry-down", "notifier",
			"broken; we know", nil,
		},
		{
			"a healthy workload has nothing to waive", "daemonset", "DaemonSet", "fixture-daemonset", "fluent-bit",
			"healthy; always", nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plain := Diagnose(fixtureSnapshot(t, tt.fixture)).Find(tt.kind, tt.ns, tt.wl)
			s := fixtureSnapshot(t, tt.fixture)
			o := workloadObject(t, s, tt.kind, tt.wl)
			o.SetAnnotations(map[string]string{WaiveAnnotation: tt.annotation})
			d := Diagnose(s).Find(tt.kind, tt.ns, tt.wl)
			if d == nil || plain == nil {
				t.Fatal("no diagnosis")
			}
			if plain.Waived != nil {
				t.Fatalf("waived without an annotation: %+v", plain.Waived)
			}
			switch {
			case tt.want == nil && d.Waived != nil:
				t.Errorf("waived = %+v, want none", d.Waived)
			case tt.want != nil && (d.Waived == nil || *d.Waived != *tt.want):
				t.Errorf("waived = %+v, want %+v", d.Waived, tt.want)
			}
			if tt.fixture == "db-down-after-rollout" && (len(d.Suspects) < 2 || d.Suspects[1].Rule != rules.RuleChangedField) {
				t.Fatalf("the fixture no longer has a changed-field suspect after the top one: %+v", d.Suspects)
			}
			if d.Shape != plain.Shape || d.Cause != plain.Cause || d.Fix != plain.Fix || d.Headline != plain.Headline || len(d.Suspects) != len(plain.Suspects) {
				t.Errorf("the waiver changed the verdict: %s %s %q, was %s %s %q", d.Shape, d.Cause, d.Fix, plain.Shape, plain.Cause, plain.Fix)
			}
		})
	}
}

func workloadObject(t *testing.T, s *snapshot.Snapshot, kind, name string) metav1.Object {
	t.Helper()
	var objs []metav1.Object
	switch kind {
	case "Deployment":
		for _, o := range s.Deployments {
			objs = append(objs, o)
		}
	case "DaemonSet":
		for _, o := range s.DaemonSets {
			objs = append(objs, o)
		}
	case "Job":
		for _, o := range s.Jobs {
			objs = append(objs, o)
		}
	case "CronJob":
		for _, o := range s.CronJobs {
			objs = append(objs, o)
		}
	}
	for _, o := range objs {
		if o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s in the snapshot", kind, name)
	return nil
}

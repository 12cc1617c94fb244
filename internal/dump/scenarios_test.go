package dump

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

const scenarioDir = "../../testdata/scenarios"

// counts is what a snapshot holds, kind by kind.
type counts struct {
	Deployments, ReplicaSets, Pods, Events, Services, Nodes, EndpointSlices   int
	StatefulSets, ControllerRevisions, DaemonSets, PVCs, ResourceQuotas, Logs int
}

func countsOf(s *snapshot.Snapshot) counts {
	return counts{
		Deployments: len(s.Deployments), ReplicaSets: len(s.ReplicaSets), Pods: len(s.Pods),
		Events: len(s.Events), Services: len(s.Services), Nodes: len(s.Nodes),
		EndpointSlices: len(s.EndpointSlices), StatefulSets: len(s.StatefulSets),
		ControllerRevisions: len(s.ControllerRevisions), DaemonSets: len(s.DaemonSets),
		PVCs: len(s.PersistentVolumeClaims), ResourceQuotas: len(s.ResourceQuotas), Logs: len(s.Logs),
	}
}

// scenarios lists the eleven shared scenarios with what their dumps hold (counted with jq-like
// tools from the JSON files, independently of this package) and the reference time Read derives.
var scenarios = []struct {
	id        string
	want      counts
	reference string
}{
	{"dev-gateway", counts{1, 1, 3, 0, 1, 3, 1, 0, 0, 0, 0, 0, 3}, "2026-11-24T11:18:50Z"},
	{"dev-ingester", counts{1, 2, 5, 42, 1, 3, 1, 0, 0, 0, 0, 0, 5}, "2026-11-24T14:30:20Z"},
	{"dev-ingester-upstream", counts{1, 1, 5, 5, 1, 3, 1, 0, 0, 0, 0, 0, 5}, "2026-11-24T09:46:38Z"},
	{"dev-mixed", counts{3, 4, 8, 40, 2, 3, 2, 0, 0, 0, 0, 0, 8}, "2026-11-24T12:29:53Z"},
	{"dev-payments", counts{1, 2, 4, 8, 1, 3, 1, 0, 0, 0, 0, 0, 4}, "2026-11-24T16:04:41Z"},
	{"dev-reports", counts{1, 2, 3, 7, 0, 3, 0, 0, 0, 0, 0, 0, 3}, "2026-11-24T07:13:19Z"},
	{"dev-rollout", counts{1, 2, 5, 13, 1, 3, 1, 0, 0, 0, 0, 0, 5}, "2026-11-24T17:25:04Z"},
	{"dev-search", counts{0, 0, 1, 5, 1, 3, 1, 1, 1, 0, 0, 0, 1}, "2026-11-24T13:02:17Z"},
	{"dev-shipper", counts{0, 0, 3, 21, 0, 3, 0, 0, 1, 1, 0, 0, 3}, "2026-11-24T21:07:27Z"},
	{"dev-thumbs", counts{1, 1, 2, 8, 0, 3, 0, 0, 0, 0, 0, 0, 2}, "2026-11-24T19:52:32Z"},
	{"dev-web", counts{1, 1, 3, 22, 1, 3, 1, 0, 0, 0, 0, 0, 3}, "2026-11-24T10:41:30Z"},
}

func readScenario(t testing.TB, id string) *snapshot.Snapshot {
	t.Helper()
	s, err := Read(filepath.Join(scenarioDir, id, "dump"), nil)
	if err != nil {
		t.Fatalf("Read(%s): %v", id, err)
	}
	return s
}

func TestReadScenarios(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.id, func(t *testing.T) {
			s := readScenario(t, sc.id)
			if got := countsOf(s); got != sc.want {
				t.Errorf("counts = %+v, want %+v", got, sc.want)
			}
			if len(s.Namespaces) != 1 || s.Namespaces[0] != sc.id {
				t.Errorf("Namespaces = %v, want [%s]", s.Namespaces, sc.id)
			}
			if s.Source.Type != snapshot.SourceDump || s.Source.Path != filepath.Join(scenarioDir, sc.id, "dump") {
				t.Errorf("Source = %+v", s.Source)
			}
			if len(s.Visibility) != 0 {
				t.Errorf("Visibility = %v, want none: every owner is in the dump", s.Visibility)
			}
			if len(s.Source.Skipped) != 0 {
				t.Errorf("Skipped = %v, want none (replication-controllers.json lists are empty)", s.Source.Skipped)
			}
			// cluster-info dump writes one log block per container of every pod it lists.
			for _, p := range s.Pods {
				for _, c := range p.Spec.Containers {
					if s.Log(p.Namespace, p.Name, c.Name, false) == nil {
						t.Errorf("no log for container %s of pod %s", c.Name, p.Name)
					}
				}
				if p.Kind != "Pod" || p.APIVersion != "v1" {
					t.Errorf("pod %s has apiVersion %q kind %q, want v1 Pod", p.Name, p.APIVersion, p.Kind)
				}
			}
		})
	}
}

// TestReferenceTime checks the reference time rule against each scenario's expected.yaml. The
// scenario's reference_time is the moment its story was dumped, which no timestamp in the dump
// records; the rule must land at or before it, and close: the newest node heartbeat, which a
// kubelet writes at least every five minutes (nodeStatusReportFrequency), bounds the gap.
func TestReferenceTime(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.id, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(scenarioDir, sc.id, "expected.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var expected struct {
				ReferenceTime time.Time `json:"reference_time"`
			}
			if err := yaml.Unmarshal(raw, &expected); err != nil {
				t.Fatal(err)
			}
			got := readScenario(t, sc.id).ReferenceTime
			want, _ := time.Parse(time.RFC3339, sc.reference)
			if !got.Equal(want) {
				t.Errorf("ReferenceTime = %s, want %s (the newest timestamp in the dump)", got.Format(time.RFC3339Nano), sc.reference)
			}
			if got.After(expected.ReferenceTime) {
				t.Errorf("ReferenceTime %s is after the dump's moment %s", got, expected.ReferenceTime)
			}
			if gap := expected.ReferenceTime.Sub(got); gap > 5*time.Minute {
				t.Errorf("ReferenceTime %s is %s before the dump's moment %s", got, gap, expected.ReferenceTime)
			}
			if got.Location() != time.UTC {
				t.Errorf("ReferenceTime is in %s, want UTC", got.Location())
			}
		})
	}
}

func BenchmarkRead(b *testing.B) {
	dir := filepath.Join(scenarioDir, "dev-mixed", "dump")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(dir, nil); err != nil {
			b.Fatal(err)
		}
	}
}

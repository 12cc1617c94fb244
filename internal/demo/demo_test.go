package demo

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// expected is the story the demo tells, as hack/fixtures/demo/scenario.py built it.
type expected struct {
	ReferenceTime time.Time `json:"reference_time"`
	Workloads     []struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		Shape     string `json:"shape"`
	} `json:"workloads"`
}

func readExpected(t *testing.T) expected {
	t.Helper()
	data, err := os.ReadFile("expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var e expected
	if err := yaml.Unmarshal(data, &e); err != nil {
		t.Fatalf("expected.yaml: %v", err)
	}
	return e
}

func TestReadHoldsTheTelemetryNamespace(t *testing.T) {
	s, err := Read()
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if s.Source.Type != snapshot.SourceDemo {
		t.Errorf("source type = %q, want %q", s.Source.Type, snapshot.SourceDemo)
	}
	if len(s.Namespaces) != 1 || s.Namespaces[0] != Namespace {
		t.Errorf("namespaces = %v, want [%s]", s.Namespaces, Namespace)
	}
	for _, p := range s.Pods {
		if p.Namespace != Namespace {
			t.Errorf("pod %s/%s outside the demo namespace", p.Namespace, p.Name)
		}
	}
	if len(s.Nodes) != 3 {
		t.Errorf("nodes = %d, want 3", len(s.Nodes))
	}
}

func TestReadHasEveryWorkloadOfTheStory(t *testing.T) {
	e := readExpected(t)
	s, err := Read()
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	names := map[string]bool{}
	for _, d := range s.Deployments {
		names["Deployment/"+d.Name] = true
	}
	for _, st := range s.StatefulSets {
		names["StatefulSet/"+st.Name] = true
	}
	for _, w := range e.Workloads {
		if !names[w.Kind+"/"+w.Name] {
			t.Errorf("%s/%s (%s in expected.yaml) is not in the embedded dump", w.Kind, w.Name, w.Shape)
		}
	}
	if len(names) != len(e.Workloads) {
		t.Errorf("dump has %d workloads, expected.yaml %d", len(names), len(e.Workloads))
	}
}

func TestReferenceTimeIsTheStorysNow(t *testing.T) {
	e := readExpected(t)
	s, err := Read()
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	// The newest timestamp in the dump is the last event or status write, just before "now".
	if s.ReferenceTime.After(e.ReferenceTime) || e.ReferenceTime.Sub(s.ReferenceTime) > time.Minute {
		t.Errorf("reference time = %s, want within a minute before %s", s.ReferenceTime, e.ReferenceTime)
	}
}

func TestEveryScheduledContainerHasALogBlock(t *testing.T) {
	s, err := Read()
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	logs := map[string]bool{}
	for _, l := range s.Logs {
		logs[l.Pod+"/"+l.Container] = true
	}
	for _, p := range s.Pods {
		for _, c := range p.Spec.Containers {
			if !logs[p.Name+"/"+c.Name] {
				t.Errorf("no log block for container %s of pod %s", c.Name, p.Name)
			}
		}
	}
}

func TestReadReturnsAFreshSnapshotEachTime(t *testing.T) {
	a, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Pods) == 0 || a.Pods[0] == b.Pods[0] {
		t.Fatal("two reads share pod objects")
	}
	a.Pods[0].Name = "changed"
	if b.Pods[0].Name == "changed" {
		t.Error("changing one snapshot changed the other")
	}
}

func TestSourceReadsTheDumpAndHonoursCancellation(t *testing.T) {
	s, err := Source().Snapshot(context.Background())
	if err != nil || s.Source.Type != snapshot.SourceDemo {
		t.Fatalf("Snapshot = %v, %v; want the demo snapshot", s, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Source().Snapshot(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Snapshot with a cancelled context: err = %v, want context.Canceled", err)
	}
}

func BenchmarkRead(b *testing.B) {
	for b.Loop() {
		if _, err := Read(); err != nil {
			b.Fatal(err)
		}
	}
}

package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// modelOfFixture is a ready console on a fixture's dump, after change edits the snapshot.
func modelOfFixture(t *testing.T, id string, w, h int, change func(*testing.T, *snapshot.Snapshot)) *Model {
	t.Helper()
	snap, err := dump.Read(filepath.Join("..", "testdata", "fixtures", id, "dump"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if change != nil {
		change(t, snap)
	}
	rep := diagnose.Diagnose(snap)
	m := New(context.Background(), Options{Source: staticSource{snap: snap}, SourceLabel: "dump"}, testStyles(), func() time.Time { return snap.ReferenceTime })
	m.Update(windowSize(w, h))
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	return m
}

// TestIntendedStatesAndWaiversAreShownApart: the console shows suspended and no-eligible-nodes
// by their own badges, and a waived verdict with a grey badge marked as the audit table marks
// it, a count in the header, and the waiver's reason on the Diagnosis tab and in the summary Y
// copies; nothing is hidden.
func TestIntendedStatesAndWaiversAreShownApart(t *testing.T) {
	waive := func(_ *testing.T, s *snapshot.Snapshot) {
		for _, ds := range s.DaemonSets {
			ds.Annotations = map[string]string{diagnose.WaiveAnnotation: "no-eligible-nodes; the GPU pool joins in Q3"}
		}
	}
	wide := seen(modelOfFixture(t, "daemonset-node-selector", 120, 20, waive))
	for _, want := range []string{" no-eligible-nodes,waived ", "ds/dcgm-exporter", "1 waived", "nodeSelector"} {
		if !strings.Contains(wide, want) {
			t.Errorf("120 columns: no %q in\n%s", want, wide)
		}
	}
	m := modelOfFixture(t, "daemonset-node-selector", 80, 24, waive)
	if s := seen(m); !strings.Contains(s, " pool ") || !strings.Contains(s, "1 waived") {
		t.Errorf("80 columns: no short waived badge or count in\n%s", s)
	}
	press(m, "enter")
	if s := seen(m); !strings.Contains(s, "waived: no-eligible-nodes: the GPU pool joins in Q3") {
		t.Errorf("the Diagnosis tab does not give the waiver's reason:\n%s", s)
	}
	if sum := m.diagnosis.Summary(); !strings.Contains(sum, ": no-eligible-nodes,waived\n") || !strings.Contains(sum, "\nwaived: no-eligible-nodes: the GPU pool joins in Q3\n") {
		t.Errorf("summary:\n%s", sum)
	}
	plain := seen(modelOfFixture(t, "daemonset-node-selector", 120, 20, nil))
	if !strings.Contains(plain, " no-eligible-nodes ") || strings.Contains(plain, "waived") {
		t.Errorf("without a waiver: want the no-eligible-nodes badge, unmarked:\n%s", plain)
	}
	for w, want := range map[int]string{120: " suspended ", 80: " PAUSE "} {
		if s := seen(modelOfFixture(t, "cronjob-suspended", w, 20, nil)); !strings.Contains(s, want) {
			t.Errorf("%d columns: the suspended CronJob has no %q badge:\n%s", w, want, s)
		}
	}
}

// TestFilterWaived: the filter word waived picks the rows whose badge says it, and no other.
func TestFilterWaived(t *testing.T) {
	waived := row{shape: diagnose.ShapeNeverStarts, waived: true, filterText: "ns/a"}
	plain := row{shape: diagnose.ShapeNeverStarts, filterText: "ns/b"}
	if !waived.says([]string{"Waived"}) || plain.says([]string{"waived"}) {
		t.Errorf("waived row matches %v, plain row matches %v; want true, false", waived.says([]string{"Waived"}), plain.says([]string{"waived"}))
	}
}

package tui

import (
	"strings"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// firstVisible is the row at the top of the workloads table.
func firstVisible(m *Model) *row { return &m.workloads.rows[m.workloads.visible[0]] }

// collectorHealthy is the fixture with its first workload by name and by shape, the collector,
// healthy: the worker (starts-and-dies) is then the worst, and the collector third.
func collectorHealthy() (*snapshot.Snapshot, *diagnose.Report) {
	snap, rep := fixture()
	for i := range rep.Workloads {
		if rep.Workloads[i].Name == "telemetry-collector" {
			rep.Workloads[i].Shape = diagnose.ShapeHealthy
		}
	}
	return snap, rep
}

// Rows listed while a read runs are in name order and nobody has picked one: once the diagnosis
// sorts them worst first, the worst is selected at the top of the screen. Kept by workload, the
// row first by name stayed selected where it was on screen, with the worse rows above it out of
// sight.
func TestDiagnosedRowsShowTheWorstUntilARowIsPicked(t *testing.T) {
	snap, rep := collectorHealthy()
	m := fixtureModel(Options{SourceLabel: "live"})
	// Two rows a page: the rows above the selection are off screen.
	m.Update(windowSize(120, m.chromeHeight()+3))
	early := rowsDataset(&snapshot.Snapshot{ReferenceTime: snap.ReferenceTime, Deployments: snap.Deployments}, nil)
	m.Update(rowsMsg{gen: m.gen, data: early, stream: &watchStream{progress: newReadCounter(), rows: make(chan *snapshot.Snapshot, 1)}})
	byName := m.workloads.Selected().key.Name
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	worst := firstVisible(m)
	if worst.key.Name == byName {
		t.Fatalf("the fixture's first row by name, %s, is also its worst: the test cannot tell", byName)
	}
	if sel := m.workloads.Selected(); sel == nil || sel.key.Name != worst.key.Name || m.workloads.offset != 0 {
		t.Fatalf("selection %+v at offset %d after the diagnosis, want the worst, %s, at the top", sel, m.workloads.offset, worst.key.Name)
	}
	if s := seen(m); !strings.Contains(s, worst.workload) || strings.Contains(s, "/"+byName) {
		t.Fatalf("the screen should show %s and not %s, now below the page:\n%s", worst.workload, byName, s)
	}
}

// The same holds for every picture after the first until a row is picked, and a picked row is
// kept through a refresh that moves it.
func TestRefreshShowsTheNewWorstUntilARowIsPicked(t *testing.T) {
	m := readyModel(120, 30)
	first := firstVisible(m).key.Name
	snap, rep := collectorHealthy()
	press(m, "r")
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	if sel, top := m.workloads.Selected(), firstVisible(m); sel.key.Name != top.key.Name || top.key.Name == first {
		t.Fatalf("after a refresh that put %s first, %s is selected; want the new first row", top.key.Name, sel.key.Name)
	}
	// Picked now: the next refresh, back in the old order, keeps it.
	press(m, "j", "k")
	picked := m.workloads.Selected().key.Name
	snap, rep = fixture()
	press(m, "r")
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	if sel := m.workloads.Selected(); sel.key.Name != picked || firstVisible(m).key.Name == picked {
		t.Fatalf("selection %s after the refresh moved it down, want %s kept", sel.key.Name, picked)
	}
}

// A row opened counts as picked; a row picked in one namespace picks nothing in the next.
func TestOpeningPicksARowAndANamespaceSwitchForgetsIt(t *testing.T) {
	m := readyModel(120, 30)
	snap, rep := collectorHealthy()
	m.opts.SwitchNamespace = func(string) snapshot.Source { return staticSource{snap: snap} }
	press(m, "enter", "esc")
	opened := m.workloads.Selected().key.Name
	press(m, "r")
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	if sel := m.workloads.Selected(); sel.key.Name != opened {
		t.Fatalf("selection %s after a refresh, want %s, the row opened", sel.key.Name, opened)
	}
	press(m, "n", "p", "a", "y", "enter")
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	if sel, top := m.workloads.Selected(), firstVisible(m); sel.key.Name != top.key.Name || top.key.Name == opened {
		t.Fatalf("selection %s in the new namespace, want its first row %s", sel.key.Name, top.key.Name)
	}
}

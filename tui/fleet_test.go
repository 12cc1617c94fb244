package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// fleetModel is a console over prod and staging, which hold the same workloads (the fixture),
// and dead, which could not be read.
func fleetModel(t *testing.T, w, h int) *Model {
	t.Helper()
	reports := map[*snapshot.Snapshot]*diagnose.Report{}
	read := func(context.Context) []ContextSnapshot {
		prod, prodRep := fixture()
		staging, stagingRep := fixture()
		reports[prod], reports[staging] = prodRep, stagingRep
		return []ContextSnapshot{
			{Context: "prod", Snapshot: prod},
			{Context: "staging", Snapshot: staging},
			{Context: "dead", Err: errors.New("cannot reach the API server at 10.0.0.3:6443: connection refused")},
		}
	}
	m := New(context.Background(), Options{ReadFleet: read, SourceLabel: "live", Context: "prod,staging,dead"},
		testStyles(), func() time.Time { return refTime })
	m.diagnose = func(s *snapshot.Snapshot) *diagnose.Report { return reports[s] }
	m.Update(windowSize(w, h))
	m.Update(m.load()())
	if m.state != stateReady {
		t.Fatalf("state %v, error %v", m.state, m.loadErr)
	}
	return m
}

func visibleContexts(m *Model) []string {
	var out []string
	for _, i := range m.workloads.visible {
		out = append(out, m.workloads.rows[i].context+"/"+m.workloads.rows[i].name)
	}
	return out
}

func TestFleetRowsAreWorstFirstAcrossContexts(t *testing.T) {
	m := fleetModel(t, 120, 30)
	got := strings.Join(visibleContexts(m), " ")
	want := "prod/telemetry-collector staging/telemetry-collector prod/telemetry-worker staging/telemetry-worker " +
		"prod/telemetry-ingester staging/telemetry-ingester prod/telemetry-dashboard staging/telemetry-dashboard"
	if got != want {
		t.Errorf("rows %s\nwant %s", got, want)
	}
	if v := seen(m); !strings.Contains(v, "CONTEXT") || !strings.Contains(v, "1 not readable") {
		t.Errorf("want a CONTEXT column and the dead context counted as not readable:\n%s", v)
	}
}

func TestFleetContextFilterSteps(t *testing.T) {
	m := fleetModel(t, 120, 30)
	press(m, "c")
	for _, r := range visibleContexts(m) {
		if !strings.HasPrefix(r, "prod/") {
			t.Fatalf("c shows prod alone, got %v", visibleContexts(m))
		}
	}
	if v := seen(m); !strings.Contains(v, "ctx prod (1 of 3)") {
		t.Errorf("header does not name the filter:\n%s", v)
	}
	press(m, "c")
	if r := visibleContexts(m); len(r) != 4 || !strings.HasPrefix(r[0], "staging/") || !strings.Contains(seen(m), "ctx staging (2 of 3)") {
		t.Errorf("second c shows staging, got %v\n%s", r, seen(m))
	}
	press(m, "c")
	if r := visibleContexts(m); len(r) != 0 || !strings.Contains(seen(m), "no workloads in context dead") {
		t.Errorf("third c shows dead, which has no rows; got %v\n%s", r, seen(m))
	}
	press(m, "c")
	if r := visibleContexts(m); len(r) != 8 {
		t.Errorf("fourth c shows every context again, got %v", r)
	}
}

func TestFleetOpensAWorkloadInItsOwnContext(t *testing.T) {
	m := fleetModel(t, 120, 30)
	press(m, "down", "enter")
	if m.screen != screenDiagnosis || m.openContext != "staging" || m.diagnosis.ds != m.data.parts["staging"] {
		t.Fatalf("screen %v context %q: want staging's telemetry-collector open on staging's own dataset", m.screen, m.openContext)
	}
	// A refresh keeps the same context's workload open, though prod has one of the same name.
	m.Update(m.load()())
	if m.screen != screenDiagnosis || m.diagnosis.ds != m.data.parts["staging"] {
		t.Errorf("after a refresh the diagnosis is not staging's")
	}
	press(m, "esc")
	if r := m.workloads.Selected(); r == nil || r.context != "staging" || r.name != "telemetry-collector" {
		t.Errorf("selection after a refresh: %+v, want staging's telemetry-collector", r)
	}
}

func TestFleetHelpListsTheContextKey(t *testing.T) {
	m := fleetModel(t, 100, 30)
	press(m, "?")
	if !strings.Contains(seen(m), "next context") {
		t.Errorf("help over several contexts lacks c:\n%s", seen(m))
	}
	single := readyModel(100, 30)
	press(single, "?")
	if strings.Contains(seen(single), "next context") {
		t.Errorf("help of one context lists c")
	}
	press(single, "esc", "c")
	if single.workloads.contextFilter != "" {
		t.Errorf("c does something with one context")
	}
}

func TestFleetEveryContextUnreadIsTheErrorState(t *testing.T) {
	m := New(context.Background(), Options{ReadFleet: func(context.Context) []ContextSnapshot {
		return []ContextSnapshot{{Context: "a", Err: errors.New("connection refused")}, {Context: "b", Err: errors.New("forbidden")}}
	}}, testStyles(), func() time.Time { return refTime })
	m.Update(windowSize(80, 24))
	m.Update(m.load()())
	if m.state != stateError || !strings.Contains(seen(m), "context a: connection refused") || !strings.Contains(seen(m), "context b: forbidden") {
		t.Errorf("state %v:\n%s", m.state, seen(m))
	}
}

func TestGoldenFleetWorkloads120x30(t *testing.T) {
	golden.RequireEqual(t, []byte(seen(fleetModel(t, 120, 30))))
}

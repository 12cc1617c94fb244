package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kubediagnose/kubectl-diagnose/internal/demo"
)

// TestFlowDemoDump drives the console over the embedded demo dump and the real engine, the way
// `kubectl diagnose --demo` does: find the ingester, open it, read its suspect and its logs.
func TestFlowDemoDump(t *testing.T) {
	m := New(context.Background(), Options{Source: demo.Source(), SourceLabel: "demo", AllNamespaces: true},
		testStyles(), func() time.Time { return refTime })
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	waitFor(t, tm, "telemetry-ingester")
	tm.Type("/ingester")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "INGEST_ENDPOINT")
	tm.Type("4")
	waitFor(t, tm, "connection refused")
	tm.Type("q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(15*time.Second)).(*Model)
	d := fm.diagnosis.diag
	if d == nil || d.Name != "telemetry-ingester" || d.Counts.Existing != 5 || d.Counts.Serving != 0 {
		t.Fatalf("opened %+v, want telemetry-ingester at 5 copies, 0 serving", d)
	}
	if fm.diagnosis.spec.suspect < 0 || !strings.Contains(fm.diagnosis.spec.lines[fm.diagnosis.spec.suspect], "telemetry-intake.internal:9443") {
		t.Fatalf("the spec's suspect line is not the INGEST_ENDPOINT value")
	}
}

package tui

import (
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// What bubbletea v1.3.10 delivers when several keys arrive in one read of the terminal
// (key.go detectOneMsg, key_sequences.go): the runes as one KeyRunes message, a bracketed paste
// as one KeyRunes message with Paste set, and an Esc followed by another key as that key with Alt.
func runes(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }

func paste(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s), Paste: true} }

func send(m *Model, msgs ...tea.KeyMsg) tea.Cmd {
	var cmd tea.Cmd
	for _, msg := range msgs {
		_, cmd = m.Update(msg)
	}
	return cmd
}

func selectedName(m *Model) string {
	if r := m.workloads.Selected(); r != nil {
		return r.key.Name
	}
	return ""
}

func TestRunesOfOneReadMoveAsTyped(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  tea.KeyMsg
		want string
	}{
		{"jj in one read", runes("jj"), "telemetry-ingester"},
		{"jjk in one read", runes("jjk"), "telemetry-worker"},
		{"G then k in one read", runes("Gk"), "telemetry-ingester"},
		{"jj pasted", paste("jj"), "telemetry-ingester"},
		{"one j pasted", paste("j"), "telemetry-worker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := readyModel(100, 30)
			send(m, tc.msg)
			if got := selectedName(m); got != tc.want {
				t.Fatalf("selected %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSlashAndTextOfOneReadFilter(t *testing.T) {
	m := readyModel(100, 30)
	send(m, runes("/wrk"))
	if !m.workloads.filtering || m.workloads.filter.Value() != "wrk" {
		t.Fatalf("filtering=%v value %q after /wrk in one read", m.workloads.filtering, m.workloads.filter.Value())
	}
	if n := len(m.workloads.visible); n != 1 || selectedName(m) != "telemetry-worker" {
		t.Fatalf("filter wrk shows %d rows, selected %q", n, selectedName(m))
	}
}

// Under load "/ingester" and the Enters reached the console in few reads; the filter never
// opened and Enter opened whichever workload was selected.
func TestFilterTypedInOneReadOpensTheMatch(t *testing.T) {
	m := readyModel(100, 30)
	send(m, runes("/ingester"), keyMsg("enter"), keyMsg("enter"))
	if m.screen != screenDiagnosis || m.diagnosis.key.Name != "telemetry-ingester" {
		t.Fatalf("screen %v opened %v, want the diagnosis of telemetry-ingester", m.screen, m.diagnosis.key)
	}
}

func TestPasteIntoTheFilterIsText(t *testing.T) {
	m := readyModel(100, 30)
	if cmd := send(m, keyMsg("/"), paste("q ingest")); cmd != nil && cmd() == tea.Quit() {
		t.Fatal("a q pasted into the filter quit")
	}
	if !m.workloads.filtering || m.workloads.filter.Value() != "q ingest" {
		t.Fatalf("filtering=%v value %q after pasting into the filter", m.workloads.filtering, m.workloads.filter.Value())
	}
	// A pasted line ends like a typed one: Enter accepts the filter.
	m = readyModel(100, 30)
	send(m, paste("/ingester\r"), keyMsg("enter"))
	if m.screen != screenDiagnosis || m.diagnosis.key.Name != "telemetry-ingester" {
		t.Fatalf("screen %v opened %v after pasting /ingester and a newline", m.screen, m.diagnosis.key)
	}
}

func TestPasteIntoTheNamespacePromptIsText(t *testing.T) {
	m := readyModel(100, 30)
	var asked string
	m.opts.SwitchNamespace = func(ns string) snapshot.Source { asked = ns; return staticSource{snap: m.data.snap} }
	send(m, runes("n"), paste("payments"), keyMsg("enter"))
	if asked != "payments" {
		t.Fatalf("switched to %q, want payments", asked)
	}
}

func TestDoubleEscIsTwoEscs(t *testing.T) {
	m := readyModel(100, 30)
	send(m, keyMsg("enter"), keyMsg("?"))
	if m.screen != screenHelp {
		t.Fatal("? did not open help")
	}
	// Two Escs in one read arrive as alt+esc.
	send(m, tea.KeyMsg{Type: tea.KeyEsc, Alt: true})
	if m.screen != screenWorkloads {
		t.Fatalf("a double Esc from help over a diagnosis ended on screen %v, want workloads", m.screen)
	}
}

func TestEscThenKeyOfOneReadIsBoth(t *testing.T) {
	m := readyModel(100, 30)
	send(m, keyMsg("enter"))
	// Esc and j in one read arrive as alt+j; the console binds no Alt keys.
	send(m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("j"), Alt: true})
	if m.screen != screenWorkloads || selectedName(m) != "telemetry-worker" {
		t.Fatalf("Esc j ended on screen %v with %q selected", m.screen, selectedName(m))
	}
}

func TestAltKeysOfTheTextInputStayWhole(t *testing.T) {
	m := readyModel(100, 30)
	send(m, keyMsg("/"), runes("tele ing"))
	// alt+backspace deletes a word in a text input; split, its Esc would close the filter.
	send(m, tea.KeyMsg{Type: tea.KeyBackspace, Alt: true})
	if !m.workloads.filtering || m.workloads.filter.Value() != "tele " {
		t.Fatalf("filtering=%v value %q after alt+backspace", m.workloads.filtering, m.workloads.filter.Value())
	}
	// An Esc and a rune that the input does not bind with Alt are two keys: the Esc closes it.
	before := m.workloads.visible[m.workloads.cursor]
	send(m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("j"), Alt: true})
	if m.workloads.filtering || m.workloads.filter.Value() != "" {
		t.Fatalf("Esc j in the filter: filtering=%v value %q", m.workloads.filtering, m.workloads.filter.Value())
	}
	if got := m.workloads.visible[m.workloads.cursor]; got != before+1 {
		t.Fatalf("j after the Esc selected row %d, want %d, the one below %d", got, before+1, before)
	}
}

func TestNothingIsRoutedAfterQuit(t *testing.T) {
	m := readyModel(100, 30)
	cmd := send(m, runes("qj"))
	if cmd == nil || cmd() != tea.Quit() {
		t.Fatal("q in one read with j did not quit")
	}
	if selectedName(m) != "telemetry-collector" {
		t.Fatalf("a key after q moved the selection to %q", selectedName(m))
	}
}

// TestFlowKeysOfOneRead drives the running program with keys that arrived in one read each: a
// filter typed fast, a move typed fast, a double Esc and a pasted filter line.
func TestFlowKeysOfOneRead(t *testing.T) {
	tm := teatest.NewTestModel(t, fixtureModel(Options{SourceLabel: "demo"}), teatest.WithInitialTermSize(100, 30))
	waitFor(t, tm, "telemetry-ingester")
	// A filter no row matches ("api" would: the worker's suspect is env API_TOKEN), so Esc
	// leaves the selection on the first row.
	tm.Send(runes("/xyz"))
	// The filter opened and took the rest of the read: its prompt shows the text.
	waitFor(t, tm, "/xyz")
	tm.Send(keyMsg("esc"))
	tm.Send(runes("jj"))
	tm.Send(keyMsg("enter"))
	waitFor(t, tm, "the loop has converged")
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc, Alt: true})
	tm.Send(paste("/wrk\r"))
	tm.Send(keyMsg("enter"))
	tm.Send(runes("q"))
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(15*time.Second)).(*Model)
	if fm.screen != screenDiagnosis || fm.diagnosis.key.Name != "telemetry-worker" {
		t.Fatalf("ended on screen %v with %v open, want the diagnosis of telemetry-worker", fm.screen, fm.diagnosis.key)
	}
}

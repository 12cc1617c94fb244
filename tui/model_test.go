package tui

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

func keyMsg(s string) tea.KeyMsg {
	switch s {
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "shift+tab":
		return tea.KeyMsg{Type: tea.KeyShiftTab}
	case "backspace":
		return tea.KeyMsg{Type: tea.KeyBackspace}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

func press(m *Model, keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		_, cmd = m.Update(keyMsg(k))
	}
	return cmd
}

// seen is what a person sees: the frame without colour.
func seen(m *Model) string { return ansi.Strip(m.View()) }

func TestRowsAreWorstFirst(t *testing.T) {
	m := readyModel(120, 30)
	var got []diagnose.Shape
	for _, i := range m.workloads.visible {
		got = append(got, m.workloads.rows[i].shape)
	}
	want := []diagnose.Shape{diagnose.ShapeNeverStarts, diagnose.ShapeStartsAndDies, diagnose.ShapeLiveButIdle, diagnose.ShapeHealthy}
	if strings.Join(shapes(got), ",") != strings.Join(shapes(want), ",") {
		t.Fatalf("row order = %v, want %v", got, want)
	}
}

func shapes(s []diagnose.Shape) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = string(x)
	}
	return out
}

func TestSuspectShortForm(t *testing.T) {
	m := readyModel(120, 30)
	got := map[string]string{}
	for _, r := range m.data.rows {
		got[r.key.Name] = r.suspect
	}
	want := map[string]string{
		"telemetry-ingester":  "env INGEST_ENDPOINT",
		"telemetry-collector": "image",
		"telemetry-worker":    "env API_TOKEN secret",
		"telemetry-dashboard": "-",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("suspect of %s = %q, want %q", k, got[k], v)
		}
	}
}

func TestEnterOpensDiagnosisAndBackReturns(t *testing.T) {
	m := readyModel(100, 30)
	press(m, "down", "down")
	if r := m.workloads.Selected(); r == nil || r.key.Name != "telemetry-ingester" {
		t.Fatalf("selected %+v, want telemetry-ingester", r)
	}
	press(m, "enter")
	if m.screen != screenDiagnosis || m.diagnosis.key.Name != "telemetry-ingester" {
		t.Fatalf("screen %v key %v after enter", m.screen, m.diagnosis.key)
	}
	press(m, "tab")
	if m.diagnosis.tab != tabCopies {
		t.Fatalf("tab = %d after tab, want Copies", m.diagnosis.tab)
	}
	press(m, "shift+tab", "shift+tab")
	if m.diagnosis.tab != tabTimeline {
		t.Fatalf("tab = %d after two shift+tab, want Timeline, the last (wraps)", m.diagnosis.tab)
	}
	press(m, "4")
	if m.diagnosis.tab != tabLogs {
		t.Fatalf("tab = %d after 4, want Logs", m.diagnosis.tab)
	}
	press(m, "backspace")
	if m.screen != screenWorkloads {
		t.Fatalf("backspace did not return to workloads")
	}
	if r := m.workloads.Selected(); r.key.Name != "telemetry-ingester" {
		t.Fatalf("selection lost on back: %v", r.key)
	}
}

func TestHelpToggleAndBack(t *testing.T) {
	m := readyModel(100, 30)
	press(m, "enter", "?")
	if m.screen != screenHelp {
		t.Fatal("? did not open help")
	}
	press(m, "esc")
	if m.screen != screenDiagnosis {
		t.Fatalf("esc from help went to %v, want the diagnosis it came from", m.screen)
	}
}

func TestQuitKeys(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		m := readyModel(80, 24)
		if cmd := press(m, k); cmd == nil || cmd() != tea.Quit() {
			t.Errorf("%s did not quit", k)
		}
	}
}

func TestFilterIsFuzzyOnNameAndNamespace(t *testing.T) {
	m := readyModel(100, 30)
	press(m, "/", "w", "r", "k")
	if n := len(m.workloads.visible); n != 1 || m.workloads.Selected().key.Name != "telemetry-worker" {
		t.Fatalf("filter wrk shows %d rows, selected %v", n, m.workloads.Selected())
	}
	// q is text while filtering, not quit.
	if cmd := press(m, "q"); cmd != nil && cmd() == tea.Quit() {
		t.Fatal("q quit while typing a filter")
	}
	press(m, "esc")
	if len(m.workloads.visible) != 4 || m.workloads.filtering {
		t.Fatalf("esc did not clear the filter: %d rows", len(m.workloads.visible))
	}
	press(m, "/", "t", "e", "l", "m", "/", "i", "n", "g")
	if r := m.workloads.Selected(); r == nil || r.key.Name != "telemetry-ingester" {
		t.Fatalf("namespace/name filter selected %v", r)
	}
}

func TestHideHealthy(t *testing.T) {
	m := readyModel(100, 30)
	press(m, "h")
	for _, i := range m.workloads.visible {
		if m.workloads.rows[i].shape == diagnose.ShapeHealthy {
			t.Fatal("healthy row visible after h")
		}
	}
	if !strings.Contains(seen(m), "healthy hidden") {
		t.Fatal("header does not say healthy rows are hidden")
	}
	press(m, "h")
	if len(m.workloads.visible) != 4 {
		t.Fatalf("h again shows %d rows, want 4", len(m.workloads.visible))
	}
}

func TestRefreshKeepsSelectionAndScroll(t *testing.T) {
	m := readyModel(100, 30)
	press(m, "down", "down", "enter", "5")
	off := m.diagnosis.panes[tabSpec].vp.YOffset
	cmd := press(m, "r")
	if cmd == nil || !m.refreshing {
		t.Fatal("r did not start a refresh")
	}
	snap, rep := fixture()
	// The refreshed report lists the ingester first; the selection must follow the workload.
	rep.Workloads[0], rep.Workloads[1] = rep.Workloads[1], rep.Workloads[0]
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	if m.refreshing || m.screen != screenDiagnosis || m.diagnosis.tab != tabSpec || m.diagnosis.panes[tabSpec].vp.YOffset != off {
		t.Fatalf("refresh lost the place: refreshing=%v screen=%v tab=%d offset=%d want %d",
			m.refreshing, m.screen, m.diagnosis.tab, m.diagnosis.panes[tabSpec].vp.YOffset, off)
	}
	press(m, "esc")
	if r := m.workloads.Selected(); r.key.Name != "telemetry-ingester" {
		t.Fatalf("selection after refresh = %v", r.key)
	}
}

func TestStaleLoadIsIgnored(t *testing.T) {
	m := readyModel(100, 30)
	press(m, "r")
	old := m.seq
	press(m, "r")
	m.Update(loadedMsg{gen: m.gen, seq: old, err: errors.New("old failure")})
	if m.state != stateReady {
		t.Fatalf("a superseded load changed the state to %v", m.state)
	}
}

func TestLoadErrorIsAStateWithBack(t *testing.T) {
	m := readyModel(100, 30)
	press(m, "r")
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, err: errors.New("read dump \"x\": unexpected EOF")})
	if m.state != stateError || !strings.Contains(seen(m), "unexpected EOF") {
		t.Fatalf("error not shown: state %v\n%s", m.state, seen(m))
	}
	press(m, "esc")
	if m.state != stateReady || m.data == nil {
		t.Fatal("esc did not go back to the last snapshot")
	}
}

func TestInitialLoadErrorOffersRetry(t *testing.T) {
	m := New(context.Background(), Options{Source: staticSource{err: errors.New("boom")}}, testStyles(), func() time.Time { return refTime })
	m.Update(windowSize(80, 24))
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, err: errors.New("boom")})
	if m.state != stateError {
		t.Fatal("no error state")
	}
	press(m, "esc")
	if m.state != stateError {
		t.Fatal("esc left the error state with nothing to go back to")
	}
	if cmd := press(m, "r"); cmd == nil || m.state != stateLoading {
		t.Fatal("r did not retry")
	}
}

func TestLiveWatchStaleAndRecover(t *testing.T) {
	now := refTime
	snap, rep := fixture()
	m := New(context.Background(), Options{Source: staticSource{snap: snap}, SourceLabel: "live"}, testStyles(), func() time.Time { return now })
	m.Update(windowSize(120, 30))
	m.live.watching = true
	m.Update(watchMsg{gen: m.gen, data: datasetOf(snap, rep)})
	if !strings.Contains(seen(m), "● live") {
		t.Fatalf("no live indicator:\n%s", seen(m))
	}
	now = now.Add(5 * time.Second)
	m.Update(watchMsg{gen: m.gen, err: errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")})
	now = now.Add(2 * time.Minute)
	m.Update(tickMsg{at: now, gen: m.gen})
	s := seen(m)
	if !strings.Contains(s, "stale 2m5s") || !strings.Contains(s, "connection refused") {
		t.Fatalf("stale indicator missing:\n%s", s)
	}
	if m.data == nil || len(m.workloads.visible) != 4 {
		t.Fatal("the last snapshot was dropped on a watch error")
	}
	m.Update(watchMsg{gen: m.gen, data: datasetOf(snap, rep)})
	if s := seen(m); strings.Contains(s, "stale") || !strings.Contains(s, "● live") {
		t.Fatalf("did not recover:\n%s", s)
	}
}

func TestWatchClosedRestarts(t *testing.T) {
	snap, _ := fixture()
	m := New(context.Background(), Options{Source: staticSource{snap: snap}}, testStyles(), func() time.Time { return refTime })
	m.live.watching = true
	_, cmd := m.Update(watchMsg{gen: m.gen, closed: true})
	if cmd == nil || m.live.err == nil {
		t.Fatal("a closed watch is neither shown as stale nor restarted")
	}
}

func TestNamespaceSwitch(t *testing.T) {
	m := readyModel(100, 30)
	press(m, "n")
	if m.nsPrompt {
		t.Fatal("n opened a prompt without a live cluster")
	}
	var asked string
	snap, _ := fixture()
	m.opts.SwitchNamespace = func(ns string) snapshot.Source { asked = ns; return staticSource{snap: snap} }
	press(m, "n", "p", "a", "y", "enter")
	if asked != "pay" || m.state != stateLoading || m.gen != 1 {
		t.Fatalf("switch: asked %q state %v gen %d", asked, m.state, m.gen)
	}
	if !strings.Contains(seen(m), "ns pay") {
		t.Fatalf("header does not name the new namespace:\n%s", seen(m))
	}
}

func TestNamespacePromptSuggestsTheClustersNamespaces(t *testing.T) {
	m := readyModel(100, 30)
	snap, _ := fixture()
	m.opts.SwitchNamespace = func(string) snapshot.Source { return staticSource{snap: snap} }
	var listed bool
	m.opts.ListNamespaces = func(context.Context) ([]string, error) {
		listed = true
		return []string{"payments", "telemetry", "kube-system"}, nil
	}
	cmd := press(m, "n")
	if !m.nsPrompt || cmd == nil {
		t.Fatal("n did not open the prompt with a command to list namespaces")
	}
	if got := m.nsInput.AvailableSuggestions(); !slices.Equal(got, []string{"telemetry"}) {
		t.Errorf("suggestions before the list arrives = %v, want the snapshot's [telemetry]", got)
	}
	for _, msg := range runBatch(cmd) {
		m.Update(msg)
	}
	if !listed {
		t.Fatal("the namespaces were never listed")
	}
	if got, want := m.nsInput.AvailableSuggestions(), []string{"kube-system", "payments", "telemetry"}; !slices.Equal(got, want) {
		t.Errorf("suggestions = %v, want %v", got, want)
	}
	press(m, "p", "a")
	if got := m.nsInput.MatchedSuggestions(); !slices.Equal(got, []string{"payments"}) {
		t.Errorf("after typing pa, matched = %v, want [payments]", got)
	}

	// An identity that may not list namespaces keeps the snapshot's, and nothing is said.
	press(m, "esc")
	m.opts.ListNamespaces = func(context.Context) ([]string, error) {
		return nil, errors.New(`namespaces is forbidden: User "viewer" cannot list resource "namespaces"`)
	}
	for _, msg := range runBatch(press(m, "n")) {
		m.Update(msg)
	}
	if got := m.nsInput.AvailableSuggestions(); !slices.Equal(got, []string{"telemetry"}) {
		t.Errorf("suggestions after a forbidden list = %v, want [telemetry]", got)
	}
}

// runBatch runs cmd and, for a batch, each of its commands, and returns the namespace lists among
// their messages (the prompt's cursor blink is not fed back).
func runBatch(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, runBatch(c)...)
		}
		return out
	}
	if _, ok := msg.(namespacesMsg); !ok {
		return nil
	}
	return []tea.Msg{msg}
}

func TestCopyWritesOSC52(t *testing.T) {
	m := readyModel(100, 30)
	var out bytes.Buffer
	m.opts.Out = &out
	press(m, "down", "down", "enter")
	cmd := press(m, "y")
	if cmd == nil {
		t.Fatal("y returned no command")
	}
	msg := cmd()
	want := "\x1b]52;c;" + "a3ViZWN0bCByb2xsb3V0IHVuZG8gZGVwbG95bWVudC90ZWxlbWV0cnktaW5nZXN0ZXIgLW4gdGVsZW1ldHJ5IC0tdG8tcmV2aXNpb249MQ==" + "\x07"
	if out.String() != want {
		t.Fatalf("wrote %q, want %q", out.String(), want)
	}
	m.Update(msg)
	if !strings.Contains(seen(m), "copied: kubectl rollout undo") {
		t.Fatalf("no confirmation:\n%s", seen(m))
	}
}

func TestMouseWheelScrolls(t *testing.T) {
	m := readyModel(100, 30)
	m.Update(tea.MouseMsg{Button: tea.MouseButtonWheelDown, Action: tea.MouseActionPress})
	if m.workloads.cursor != 3 {
		t.Fatalf("wheel down moved to %d, want 3 (the last row)", m.workloads.cursor)
	}
	m.Update(tea.MouseMsg{Button: tea.MouseButtonWheelUp, Action: tea.MouseActionPress})
	if m.workloads.cursor != 0 {
		t.Fatalf("wheel up moved to %d", m.workloads.cursor)
	}
}

func TestMaliciousLogCannotDriveTheTerminal(t *testing.T) {
	snap, rep := fixture()
	// The same payload in an event message and in the engine's evidence, besides the log line.
	snap.Events[0].Message = maliciousLog
	rep.Workloads[1].Evidence[0].Message = maliciousLog
	m := readyModel(100, 30)
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	press(m, "down", "down", "enter")
	for _, tab := range []string{"1", "2", "3", "4", "5"} {
		press(m, tab)
		v := m.View()
		for _, bad := range []string{"\x1b]", "\x07", "\x1b[2J", "\u009b", "\x9b"} {
			if strings.Contains(v, bad) {
				t.Fatalf("tab %s: escape %q reached the screen", tab, bad)
			}
		}
		if tab == "4" && !strings.Contains(ansi.Strip(v), "connection refused") {
			t.Fatalf("the log line's text is missing:\n%s", ansi.Strip(v))
		}
	}
}

func TestSanitize(t *testing.T) {
	cases := map[string]string{
		"plain":                       "plain",
		"a\x1b[31mred\x1b[0m":         "ared",
		"title\x1b]0;x\x07end":        "titleend",
		"c1\u009b31m":                 "c131m",
		"bell\x07 nul\x00 del\x7f":    "bell nul del",
		"tab\there":                   "tab    here",
		"two\nlines":                  "two lines",
		"bidi\u202egnp.exe":           "bidignp.exe",
		"ünïcode ✓":                   "ünïcode ✓",
		"osc52\x1b]52;c;aGk=\x1b\\ok": "osc52ok",
	}
	for in, want := range cases {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSpecHighlightsSuspectLine(t *testing.T) {
	m := readyModel(100, 30)
	press(m, "down", "down", "enter", "5")
	s := seen(m)
	found := false
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "▶") && strings.Contains(l, "value: telemetry-intake.internal:9443") {
			found = true
		}
	}
	if !found {
		t.Fatalf("suspect line not highlighted in view:\n%s", s)
	}
}

func TestTinyTerminalsDoNotPanic(t *testing.T) {
	for _, size := range [][2]int{{40, 12}, {20, 5}, {1, 1}, {0, 0}, {300, 100}} {
		m := readyModel(size[0], size[1])
		for _, k := range []string{"down", "enter", "tab", "tab", "tab", "tab", "?", "esc", "esc", "/", "x", "esc", "G", "g"} {
			press(m, k)
			v := m.View()
			for _, l := range strings.Split(v, "\n") {
				if w := ansi.StringWidth(l); w > size[0] {
					t.Fatalf("%dx%d after %s: line %q is %d wide", size[0], size[1], k, ansi.Strip(l), w)
				}
			}
			if n := strings.Count(v, "\n") + 1; size[1] > 0 && n != size[1] {
				t.Fatalf("%dx%d after %s: %d lines", size[0], size[1], k, n)
			}
		}
	}
}

func TestGoldenWorkloads80x24(t *testing.T) {
	golden.RequireEqual(t, []byte(seen(readyModel(80, 24))))
}

func TestGoldenWorkloads120x30(t *testing.T) {
	golden.RequireEqual(t, []byte(seen(readyModel(120, 30))))
}

func TestGoldenDiagnosis80x24(t *testing.T) {
	m := readyModel(80, 24)
	press(m, "down", "down", "enter")
	golden.RequireEqual(t, []byte(seen(m)))
}

func TestGoldenDiagnosisSpec80x24(t *testing.T) {
	m := readyModel(80, 24)
	press(m, "down", "down", "enter", "5")
	golden.RequireEqual(t, []byte(seen(m)))
}

func TestGoldenHelp80x24(t *testing.T) {
	m := readyModel(80, 24)
	press(m, "?")
	golden.RequireEqual(t, []byte(seen(m)))
}

func TestGoldenWorkloads40x12(t *testing.T) {
	golden.RequireEqual(t, []byte(seen(readyModel(40, 12))))
}

func TestGoldenDiagnosis40x12(t *testing.T) {
	m := readyModel(40, 12)
	press(m, "down", "down", "enter")
	golden.RequireEqual(t, []byte(seen(m)))
}

// TestSuspectShortFormsOfOtherFields: the workloads screen names a suspect exactly as the audit
// table does (report.ShortSuspect), a list element by the name the engine gave it.
func TestSuspectShortFormsOfOtherFields(t *testing.T) {
	c0 := field.NewPath("spec", "template", "spec", "containers").Index(0)
	for _, tc := range []struct {
		object  string
		path    *field.Path
		element string
		want    string
	}{
		{"Deployment/telemetry-ingester", c0.Child("readinessProbe", "httpGet", "path"), "", "readiness probe path"},
		{"Deployment/telemetry-ingester", c0.Child("livenessProbe", "tcpSocket", "port"), "", "liveness probe port"},
		{"Deployment/telemetry-ingester", c0.Child("resources", "limits", "memory"), "", "memory limit"},
		{"Deployment/telemetry-ingester", c0.Child("args").Index(1), "", "args"},
		{"Deployment/telemetry-ingester", c0.Child("command").Index(0), "", "command /bin/ingest"},
		{"Deployment/telemetry-ingester", c0.Child("env").Index(0).Child("value"), "INGEST_ENDPOINT", "env INGEST_ENDPOINT"},
		{"Deployment/telemetry-ingester", field.NewPath("spec", "template", "spec", "nodeSelector"), "", "nodeSelector"},
		{"Service/intake", field.NewPath("spec", "ports").Index(0).Child("targetPort"), "", "Service targetPort"},
	} {
		value := ""
		if strings.HasSuffix(tc.path.String(), "command[0]") {
			value = "/bin/ingest"
		}
		snap, _ := fixture()
		rep := &diagnose.Report{Workloads: []diagnose.Diagnosis{{
			Kind: "Deployment", Namespace: "telemetry", Name: "telemetry-ingester", Shape: diagnose.ShapeLiveButIdle,
			Suspects: []diagnose.Suspect{{Object: tc.object, Path: tc.path, Value: value, Element: tc.element}},
		}}}
		ds := datasetOf(snap, rep)
		got := ds.rows[0].suspect
		if got != tc.want {
			t.Errorf("short form of %s %s = %q, want %q", tc.object, tc.path, got, tc.want)
		}
		d := &rep.Workloads[0]
		table := report.ShortSuspect(d)
		if got != table {
			t.Errorf("console says %q for %s, the audit table %q", got, tc.path, table)
		}
	}
}

func TestHeaderNamesNamespaces(t *testing.T) {
	m := bigModel(t, 200, 160, 20)
	s := seen(m)
	if !strings.Contains(s, "ns all (50)") || !strings.Contains(s, "NAMESPACE") {
		t.Fatalf("all-namespaces header or column missing:\n%s", s)
	}
	one := readyModel(100, 20)
	one.opts.AllNamespaces = true
	if s := seen(one); !strings.Contains(s, "ns telemetry") || strings.Contains(s, "NAMESPACE") {
		t.Fatalf("a dump of one namespace should name it and need no column:\n%s", s)
	}
}

func TestHeaderSaysTheWorkloadsAreSelected(t *testing.T) {
	m := readyModel(120, 20)
	if s := seen(m); strings.Contains(s, "-l ") {
		t.Fatalf("no selector given, yet the header names one:\n%s", s)
	}
	m.opts.Selector = "-l tier=web --field-selector metadata.name!=canary"
	if s := seen(m); !strings.Contains(s, "ns telemetry · -l tier=web --field-selector metadata.name!=canary") {
		t.Fatalf("the header does not say the rows are selected:\n%s", s)
	}
}

func TestWatchChannelsAreFollowed(t *testing.T) {
	snap, rep := fixture()
	snaps := make(chan *snapshot.Snapshot, 1)
	errs := make(chan error, 1)
	m := fixtureModel(Options{Source: staticSource{snap: snap}})
	m.diagnose = func(*snapshot.Snapshot) *diagnose.Report { return rep }
	m.rediagnose = nil
	m.Update(windowSize(100, 20))
	watch := func(context.Context, snapshot.WatchHooks) (<-chan *snapshot.Snapshot, <-chan error) {
		return snaps, errs
	}

	snaps <- snap
	_, next := m.Update(m.startWatch(watch)())
	if m.data == nil || m.state != stateReady || m.live.err != nil {
		t.Fatalf("first watched snapshot not shown: state %v", m.state)
	}
	errs <- errors.New("the server is currently unable to handle the request")
	_, next = m.Update(next())
	if m.live.err == nil || m.data == nil {
		t.Fatal("watch error not shown as stale, or the snapshot was dropped")
	}
	close(snaps)
	close(errs)
	_, next = m.Update(next())
	if next == nil {
		t.Fatal("a closed watch is not restarted")
	}
}

func TestHeaderWarnsOfWhatCouldNotBeRead(t *testing.T) {
	snap, rep := fixture()
	snap.Visibility = []snapshot.Visibility{{Kind: "events", Namespace: "telemetry", Reason: "forbidden"}}
	m := readyModel(100, 20)
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	if !strings.Contains(seen(m), "⚠ 1 not readable") {
		t.Fatalf("no visibility warning:\n%s", seen(m))
	}
}

func TestGoldenError80x24(t *testing.T) {
	m := readyModel(80, 24)
	press(m, "r")
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, err: errors.New(`read dump "cluster/": telemetry/pods.json: line 41: unexpected end of JSON input`)})
	golden.RequireEqual(t, []byte(seen(m)))
}

// funcSource is a Source of an uncomparable type, as dump.Source is (its options hold funcs).
type funcSource struct {
	read func(context.Context) (*snapshot.Snapshot, error)
}

func (s funcSource) Snapshot(ctx context.Context) (*snapshot.Snapshot, error) { return s.read(ctx) }

// A console must start on any Source: telling whether it still reads its first one (the one
// Options.Watch follows) once compared the two, which panics for an uncomparable type.
func TestSourceOfAnUncomparableType(t *testing.T) {
	snap, _ := fixture()
	src := funcSource{read: func(context.Context) (*snapshot.Snapshot, error) { return snap, nil }}
	watch := func(context.Context, snapshot.WatchHooks) (<-chan *snapshot.Snapshot, <-chan error) { return nil, nil }
	for _, tc := range []struct {
		name    string
		watch   WatchFunc
		watched bool
	}{{"without a watch", nil, false}, {"with a watch", watch, true}} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(context.Background(), Options{Source: src, Watch: tc.watch}, testStyles(), func() time.Time { return refTime })
			if m.Init() == nil {
				t.Fatal("Init started nothing")
			}
			if got := m.watchFunc() != nil; got != tc.watched {
				t.Errorf("watched: %v, want %v", got, tc.watched)
			}
		})
	}
}

package tmux

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/frametrace"
	"github.com/kubediagnose/kubectl-diagnose/tui"
)

// With the frame trace on, the running binary writes one well-formed line per key typed, each
// key with a frame. Latency is not asserted here: benchmarks measure speed, timed tests flake.
func TestFrameTraceOnADump(t *testing.T) {
	bin := build(t)
	dump, err := filepath.Abs("../../internal/demo/dump")
	if err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "frames")
	tm := start(t, 120, 30, "env", tui.FrameTraceEnv+"="+trace, bin, "--dump", dump)
	// The dump's workloads are listed before their copies are read; the complete dataset sorts
	// them again and the selection follows its workload, so type once every shape is known, and
	// step away from the end of the list the selection is at.
	s := tm.waitDiagnosed("telemetry-api", "telemetry-ingester", "SUSPECT")
	names := rowNames(s)
	at := indexOf(names, selectedRow(t, s))
	if len(names) < 2 || at < 0 {
		t.Fatalf("rows %v, selected at %d: no room to move:\n%s", names, at, s)
	}
	first, second := "j", "k"
	if at == len(names)-1 {
		first, second = "k", "j"
	}

	// Back and forth: each key moves the cursor, so each has a frame of its own to wait for.
	var sent []string
	for i := 0; i < 50; i++ {
		k := first
		if i%2 == 1 {
			k = second
		}
		tm.tmux("send-keys", "-t", "diag", k)
		sent = append(sent, k)
		time.Sleep(50 * time.Millisecond)
	}
	tm.keys("q")
	sent = append(sent, "q")
	if st := tm.waitExit(); st != "0" {
		t.Fatalf("exit status %s after q, want 0", st)
	}
	tm.quietStderr()

	f, err := os.Open(trace)
	if err != nil {
		t.Fatalf("no frame trace: %v", err)
	}
	defer func() { _ = f.Close() }()
	keys, err := frametrace.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	// Letters that reach the console in one read are one key message ("jkj"), as bubbletea
	// parses them; the trace has a line per message, so together they spell what was typed.
	var traced strings.Builder
	for _, k := range keys {
		traced.WriteString(k.Key)
		// q quits: its view is the last frame, so nothing is written for it.
		if !k.Drawn && (k.Key != "q" || !k.Unchanged) {
			t.Errorf("key %d %q never got a frame", k.Seq, k.Key)
		}
	}
	if got, want := traced.String(), strings.Join(sent, ""); got != want {
		t.Errorf("the trace's keys spell %q, typed %q", got, want)
	}
	t.Logf("%d key messages for %d keys; key to frame: %s", len(keys), len(sent), frametrace.Summarize(keys, frametrace.Key.Frame))
}

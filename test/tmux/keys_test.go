package tmux

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var shapes = map[string]bool{"never-starts": true, "starts-and-dies": true, "live-but-idle": true, "healthy": true}

// workloadName is the name in a WORKLOAD cell, which is kind/name when the table is wide
// enough and the name alone otherwise.
func workloadName(cell string) string {
	cell = strings.TrimSuffix(cell, "…")
	return cell[strings.LastIndexByte(cell, '/')+1:]
}

// rowNames lists the workload names of the table on screen, top to bottom.
func rowNames(s string) []string {
	var names []string
	for _, l := range strings.Split(s, "\n") {
		f := strings.Fields(strings.TrimPrefix(l, "›"))
		// A table row: shape, name, copies ("5/4"); the totals line starts with a shape too.
		if len(f) >= 3 && shapes[f[0]] && strings.Contains(f[2], "/") {
			names = append(names, workloadName(f[1]))
		}
	}
	return names
}

// Keys that reach the console in one write, as tmux sends them, a person types fast or a
// terminal pastes, are each handled as typed.
func TestKeysOfOneWriteOnADump(t *testing.T) {
	bin := build(t)
	dump, err := filepath.Abs("../../internal/demo/dump")
	if err != nil {
		t.Fatal(err)
	}
	tm := start(t, 120, 30, bin, "--dump", dump)
	s := tm.waitDiagnosed("telemetry-api", "telemetry-ingester", "telemetry-gateway")
	order := rowNames(s)

	// One write of four bytes: "/" opens the filter and "api" is its text.
	tm.tmux("send-keys", "-t", "diag", "-l", "/api")
	s = tm.waitFor("/api")
	if names := rowNames(s); len(names) != 1 || names[0] != "telemetry-api" {
		t.Fatalf("the filter /api shows %v:\n%s", names, s)
	}
	tm.keys("Enter", "Enter")
	tm.waitFor("1 Diagnosis", "telemetry-api", "listen-adress")

	// Two Escs in one write: back from the diagnosis, then the filter cleared.
	tm.tmux("send-keys", "-t", "diag", "Escape", "Escape")
	s = tm.waitFor("telemetry-ingester", "telemetry-gateway", "SUSPECT")
	if strings.Contains(s, "/api") || strings.Contains(s, "1 Diagnosis") {
		t.Fatalf("a double Esc did not go back and clear the filter:\n%s", s)
	}
	if got := selectedRow(t, s); got != "telemetry-api" {
		t.Fatalf("selected %s after the filter was cleared, want telemetry-api:\n%s", got, s)
	}

	// One write of "jj" moves two rows down.
	i := indexOf(order, "telemetry-api")
	if i < 0 || i+2 >= len(order) {
		t.Fatalf("rows %v leave no two rows below telemetry-api", order)
	}
	tm.tmux("send-keys", "-t", "diag", "-l", "jj")
	want := order[i+2]
	deadline := time.Now().Add(10 * time.Second)
	for s = tm.screen(); selectedRow(t, s) != want && time.Now().Before(deadline); s = tm.screen() {
		time.Sleep(100 * time.Millisecond)
	}
	if got := selectedRow(t, s); got != want {
		t.Fatalf("jj in one write selected %s, want %s, two rows below telemetry-api:\n%s", got, want, s)
	}

	// A bracketed paste of a filter line, then Enter: the pasted filter picks the workload.
	tm.tmux("set-buffer", "-b", "filter", "/ingester")
	tm.tmux("paste-buffer", "-p", "-d", "-b", "filter", "-t", "diag")
	tm.waitFor("/ingester")
	tm.keys("Enter", "Enter")
	tm.waitFor("1 Diagnosis", "telemetry-ingester", "INGEST_ENDPOINT")

	// r on a dump reads it again and says why nothing changed.
	tm.keys("r")
	tm.waitFor("a dump does not change")

	tm.keys("q")
	if st := tm.waitExit(); st != "0" {
		t.Errorf("exit status %s after q, want 0", st)
	}
	tm.quietStderr()
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

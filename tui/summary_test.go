package tui

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestCopySummaryWritesOSC52: Y copies the headline, the cause, the top suspect with its
// values and the fix through OSC 52, as y copies the fix, and says so in one line.
func TestCopySummaryWritesOSC52(t *testing.T) {
	m := readyModel(100, 30)
	var out bytes.Buffer
	m.opts.Out = &out
	press(m, "down", "down", "enter")
	cmd := press(m, "Y")
	if cmd == nil {
		t.Fatal("Y returned no command")
	}
	msg := cmd()
	seq := out.String()
	if !strings.HasPrefix(seq, "\x1b]52;c;") || !strings.HasSuffix(seq, "\x07") {
		t.Fatalf("wrote %q, want an OSC 52 sequence", seq)
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(seq, "\x1b]52;c;"), "\x07"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"deployment/telemetry-ingester in namespace telemetry: live-but-idle",
		"5 of 5 copies exist · 0 serving — the loop has converged; nothing is serving",
		"cause: spec (the spec is wrong: changing it fixes the workload)",
		`suspect: env INGEST_ENDPOINT (spec.template.spec.containers[0].env[0].value) is "telemetry-intake.internal:9443", was "telemetry-intake.internal:8443"`,
		"fix: kubectl rollout undo deployment/telemetry-ingester -n telemetry --to-revision=1",
	}, "\n")
	if string(b) != want {
		t.Fatalf("copied\n%s\nwant\n%s", b, want)
	}
	m.Update(msg)
	footer := lastLine(seen(m))
	if !strings.HasPrefix(footer, "copied: deployment/telemetry-ingester in namespace telemetry: live-but-idle (+4 lines)") {
		t.Fatalf("the confirmation is not one line naming the summary: %q", footer)
	}
}

// TestSummaryOfAHealthyWorkload has no cause, suspect or fix line.
func TestSummaryOfAHealthyWorkload(t *testing.T) {
	m := readyModel(100, 30)
	press(m, "G", "enter")
	if got, want := m.diagnosis.Summary(), "deployment/telemetry-dashboard in namespace telemetry: healthy\n2 of 2 copies exist · 2 serving"; got != want {
		t.Fatalf("summary %q, want %q", got, want)
	}
}

// TestFooterKeepsHelpAndQuit: a footer too narrow for every key leaves keys out, not ? and q,
// and is never cut.
func TestFooterKeepsHelpAndQuit(t *testing.T) {
	for _, w := range []int{40, 60, 80, 100} {
		m := readyModel(w, 24)
		press(m, "down", "down", "enter")
		for _, tab := range []string{"1", "2", "3", "4", "5", "6"} {
			press(m, tab)
			f := lastLine(seen(m))
			if !strings.HasSuffix(f, "? help • q quit") || ansi.StringWidth(f) > w {
				t.Errorf("%d columns, tab %s: footer %q", w, tab, f)
			}
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(s, "\n")
	return lines[len(lines)-1]
}

package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/test/testbed/secretdump"
)

// everyTab opens the secret dump's workload in a console loaded through its own engine (the
// real one) and returns what each of its tabs shows, whole: the terminal is tall enough.
func everyTab(t *testing.T, opts Options) string {
	t.Helper()
	dir, err := secretdump.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	snap, err := dump.Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts.Source, opts.SourceLabel, opts.AllNamespaces = staticSource{snap: snap}, "dump", true
	m := New(context.Background(), opts, testStyles(), func() time.Time { return snap.ReferenceTime })
	m.Update(windowSize(160, 2000))
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: newDataset(snap, nil, m.diagnose)})
	var b strings.Builder
	b.WriteString(seen(m))
	press(m, "enter")
	if m.screen != screenDiagnosis || m.diagnosis.key.Name != secretdump.Name {
		t.Fatalf("enter opened %v %v", m.screen, m.diagnosis.key)
	}
	for _, tab := range []string{"1", "2", "3", "4", "5", "6"} {
		press(m, tab)
		b.WriteString(seen(m))
	}
	b.WriteString(m.diagnosis.CopyText())
	return b.String()
}

func TestConsoleHidesCredentialsInEveryTab(t *testing.T) {
	shown := everyTab(t, Options{ShowSecrets: true})
	for _, s := range secretdump.Secrets {
		if !strings.Contains(shown, s) {
			t.Errorf("with ShowSecrets the console does not show %q: the test proves nothing for it", s)
		}
	}
	hidden := everyTab(t, Options{})
	for _, s := range secretdump.Secrets {
		if strings.Contains(hidden, s) {
			t.Errorf("the console shows %q", s)
		}
	}
	if !strings.Contains(hidden, "[redacted:") {
		t.Error("no [redacted:...] mark anywhere")
	}
	// What no rule touches is shown: the suspect endpoint, in the Spec tab too.
	if !strings.Contains(hidden, "value: telemetry-intake.internal:9443") {
		t.Error("the Spec tab lost INGEST_ENDPOINT's value")
	}
}

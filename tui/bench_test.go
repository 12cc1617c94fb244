package tui

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// bigModel is a console over n workloads across 50 namespaces at w×h.
func bigModel(tb testing.TB, n, w, h int) *Model {
	tb.Helper()
	snap := &snapshot.Snapshot{ReferenceTime: refTime}
	rep := &diagnose.Report{ReferenceTime: refTime}
	path := field.NewPath("spec", "template", "spec", "containers").Index(0).Child("image")
	for i := 0; i < n; i++ {
		sh := diagnose.Shapes[i%len(diagnose.Shapes)]
		young := int64(60 * (i%500 + 1))
		d := diagnose.Diagnosis{
			Kind: "Deployment", Namespace: fmt.Sprintf("team-%02d", i%50), Name: fmt.Sprintf("service-%05d", i),
			Shape: sh, Counts: diagnose.Counts{Declared: 5, Existing: 5, Serving: int32(i % 6), Restarts: int32(i % 40)},
			YoungestCopySeconds: &young, Cause: diagnose.CauseSpec,
		}
		if sh.Broken() {
			d.Suspects = []diagnose.Suspect{{Object: "Deployment/" + d.Name, Path: path, Confidence: diagnose.ConfidenceHigh}}
		}
		rep.Workloads = append(rep.Workloads, d)
	}
	m := New(context.Background(), Options{Source: staticSource{snap: snap}, SourceLabel: "dump", AllNamespaces: true},
		colourStyles(), func() time.Time { return refTime })
	m.Update(windowSize(w, h))
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	return m
}

// BenchmarkWorkloadsView renders the workloads screen of 10,000 workloads at 200x60. The issue's
// budget is 5 ms a frame.
func BenchmarkWorkloadsView(b *testing.B) {
	m := bigModel(b, 10000, 200, 60)
	press(m, "down")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
}

// BenchmarkWorkloadsScrollFrame is one key press and the frame it produces, mid-list.
func BenchmarkWorkloadsScrollFrame(b *testing.B) {
	m := bigModel(b, 10000, 200, 60)
	press(m, "G")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			press(m, "pgup")
		} else {
			press(m, "down")
		}
		_ = m.View()
	}
}

// colourStyles renders in true colour, the most expensive profile.
func colourStyles() Styles {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	r.SetHasDarkBackground(true)
	return DefaultStyles(r)
}

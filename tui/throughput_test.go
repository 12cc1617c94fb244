package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

func samplesOf(vs ...float64) []diagnose.MetricSample {
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	out := make([]diagnose.MetricSample, len(vs))
	for i, v := range vs {
		out[i] = diagnose.MetricSample{Time: t0.Add(time.Duration(i) * 30 * time.Second), Value: v}
	}
	return out
}

func TestThroughputCell(t *testing.T) {
	zero, half := 0.0, 60.0
	tests := []struct {
		name string
		tp   *diagnose.Throughput
		want string
	}{
		{"no section", nil, "-"},
		{"stopped", &diagnose.Throughput{
			Unit: "readings/s", Current: &zero,
			Samples: samplesOf(1240, 1240, 1240, 1240, 1240, 1240, 1240, 1240, 0, 0, 0, 0, 0, 0, 0, 0),
		}, "████▁▁▁▁ 0/s"},
		{"halved, fewer samples than cells", &diagnose.Throughput{
			Unit: "/s", Current: &half,
			Samples: samplesOf(120, 120, 60),
		}, "██▄ 60/s"},
		{"a large number", &diagnose.Throughput{Unit: "requests/s", Current: ptrTo(1240.0), Samples: samplesOf(1240)}, "█ 1.2k/s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := throughputCell(tt.tp); got != tt.want {
				t.Errorf("cell = %q, want %q", got, tt.want)
			}
		})
	}
}

func ptrTo(v float64) *float64 { return &v }

// TestWorkloadsThroughputColumn: the column shows only when metrics were read, and a workload
// without a series reads "-".
func TestWorkloadsThroughputColumn(t *testing.T) {
	snap, rep := fixture()
	view := func() string {
		s := newWorkloadsScreen(common{styles: testStyles(), keys: DefaultKeyMap()})
		s.SetRows(datasetOf(snap, rep))
		s.SetSize(160, 20)
		return ansi.Strip(s.View())
	}
	if v := view(); strings.Contains(v, "THROUGHPUT") {
		t.Errorf("THROUGHPUT column without metrics:\n%s", v)
	}
	zero := 0.0
	rep.Workloads[0].Throughput = &diagnose.Throughput{Unit: "readings/s", Current: &zero, Samples: samplesOf(900, 900, 0, 0)}
	v := view()
	if !strings.Contains(v, "THROUGHPUT") {
		t.Fatalf("no THROUGHPUT column with metrics:\n%s", v)
	}
	lines := strings.Split(v, "\n")
	col := strings.Index(lines[0], "THROUGHPUT")
	var withCell, dashes int
	for _, line := range lines[1:] {
		r := []rune(line)
		if len(r) <= col {
			continue
		}
		switch cell := string(r[col:]); {
		case strings.HasPrefix(cell, "██▁▁ 0/s") && strings.Contains(line, rep.Workloads[0].Name):
			withCell++
		case strings.HasPrefix(cell, "- "):
			dashes++
		}
	}
	if withCell != 1 || dashes != len(rep.Workloads)-1 {
		t.Errorf("want one row with the sparkline and %d with -, got %d and %d:\n%s", len(rep.Workloads)-1, withCell, dashes, v)
	}
}

package tui

import (
	"math"
	"strconv"
	"strings"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// sparkWidth is how many cells the THROUGHPUT column's sparkline takes.
const sparkWidth = 8

var sparkBars = []rune("▁▂▃▄▅▆▇█")

// throughputCell is a workload's THROUGHPUT cell: a sparkline of its series, scaled to the
// series' own maximum, and the newest value ("▇▇▇▇▁▁▁▁ 0/s"); "-" without a series.
func throughputCell(t *diagnose.Throughput) string {
	if t == nil || t.Current == nil || len(t.Samples) == 0 {
		return "-"
	}
	return sparkline(t.Samples, sparkWidth) + " " + compact(*t.Current) + unitSuffix(t.Unit)
}

// sparkline draws the samples in width cells, each the mean of its share of the samples.
func sparkline(samples []diagnose.MetricSample, width int) string {
	n := min(width, len(samples))
	means := make([]float64, n)
	peak := 0.0
	for i := range n {
		lo, hi := i*len(samples)/n, (i+1)*len(samples)/n
		sum := 0.0
		for _, s := range samples[lo:hi] {
			sum += s.Value
		}
		means[i] = sum / float64(hi-lo)
		peak = math.Max(peak, means[i])
	}
	var b strings.Builder
	for _, m := range means {
		i := 0
		if peak > 0 && m > 0 {
			i = min(int(math.Ceil(m/peak*float64(len(sparkBars))))-1, len(sparkBars)-1)
		}
		b.WriteRune(sparkBars[max(i, 0)])
	}
	return b.String()
}

// compact writes a reading in at most four characters plus a k/M suffix: 0, 12.5, 1.2k, 3.4M.
func compact(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + "M"
	case a >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "k"
	case a >= 100 || a == math.Trunc(a):
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
}

// unitSuffix keeps the "per second" of a unit: readings/s shows as /s, the column is narrow.
func unitSuffix(unit string) string {
	if i := strings.LastIndexByte(unit, '/'); i >= 0 {
		return unit[i:]
	}
	return ""
}

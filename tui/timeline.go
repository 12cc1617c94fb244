package tui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/metrics"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// timelineLines is the Timeline tab: a picture of the serving count against the declared count
// over the moments the snapshot dates, with a mark for each revision, the onset, the newest
// restart and dependency changes; then the moments in words, oldest first.
func (ds *dataset) timelineLines(st Styles, d *diagnose.Diagnosis, width int) []string {
	if len(d.Timeline) == 0 {
		return []string{st.Dim.Render("the snapshot dates nothing about this workload")}
	}
	end := ds.snap.ReferenceTime
	if end.IsZero() || end.Before(d.Timeline[len(d.Timeline)-1].At) {
		end = d.Timeline[len(d.Timeline)-1].At
	}
	// Start at the first dated moment that is not years older than the rest: the range is the
	// story's, from the revision that matters to now.
	start := d.Timeline[0].At
	for _, e := range d.Timeline {
		if e.Kind == diagnose.TimelineRevision && e.At.Before(end) {
			start = e.At
		}
	}
	if first := firstFailure(d); !first.IsZero() && first.Before(start) {
		start = first
	}
	// A live console reads Prometheus after the watch's snapshot: its newest samples may be
	// later than the snapshot, and the right edge is then theirs, not a pile in the last column.
	if tp := d.Throughput; tp != nil && len(tp.Samples) > 0 && tp.Samples[len(tp.Samples)-1].Time.After(end) {
		end = tp.Samples[len(tp.Samples)-1].Time
	}
	// The output before the story began is its baseline: widen the range to show it, by at most
	// a third of the picture, so the serving moments keep most of the width.
	if tp := d.Throughput; tp != nil && len(tp.Samples) > 0 && tp.Samples[0].Time.Before(start) {
		start = maxTime(tp.Samples[0].Time, start.Add(-end.Sub(start)/2))
	}
	span := end.Sub(start)
	const label = 9
	cols := width - label
	var out []string
	out = append(out, st.Dim.Render(ansi.Truncate(fmt.Sprintf("%s → %s (%s), now at the right edge",
		start.UTC().Format("01-02 15:04:05"), end.UTC().Format("01-02 15:04:05"), duration.HumanDuration(span)), width, "…")))
	if cols < 8 || span <= 0 {
		return append(out, timelineList(st, d, width)...)
	}
	col := func(t time.Time) int {
		if t.Before(start) {
			return -1
		}
		c := int(float64(t.Sub(start)) / float64(span) * float64(cols-1))
		return min(c, cols-1)
	}
	// The serving level per column: the count after each serving fall from its moment on, the
	// count before it earlier; without a fall, what serves now.
	level := make([]int32, cols)
	for i := range level {
		level[i] = d.Counts.Serving
	}
	for _, e := range d.Timeline {
		if e.Kind != diagnose.TimelineServing || e.ServingFrom == nil || e.ServingTo == nil {
			continue
		}
		c := max(col(e.At), 0)
		for i := range level {
			if i < c {
				level[i] = *e.ServingFrom
			} else {
				level[i] = *e.ServingTo
			}
		}
	}
	bars := st.Glyphs.Levels
	declared := max(d.Counts.Declared, 1)
	var strip strings.Builder
	for _, l := range level {
		i := int(l) * (len(bars) - 1) / int(declared)
		strip.WriteRune(bars[min(max(i, 0), len(bars)-1)])
	}
	marks := []rune(strings.Repeat(" ", cols))
	for _, e := range d.Timeline {
		if m, ok := st.Glyphs.Marks[e.Kind]; ok {
			// Moments closer than a column apart sit side by side, in their order.
			for c := col(e.At); c >= 0 && c < cols; c++ {
				if marks[c] == ' ' {
					marks[c] = m
					break
				}
			}
		}
	}
	out = append(out, ansi.Truncate(fmt.Sprintf("%-*s", label, fmt.Sprintf("serve %d", declared))+strip.String(), width, "…"))
	drawn := metricSeriesOf(d.Throughput)
	for _, m := range drawn {
		// The peak beside the label when it fits, so the strip keeps the serving strip's columns;
		// the legend names it anyway.
		name := m.name + " " + compact(seriesPeak(m.samples))
		if len(name) >= label {
			name = m.name
		}
		out = append(out, ansi.Truncate(fmt.Sprintf("%-*s", label, name)+seriesStrip(st.Glyphs.Levels, m.samples, cols, col), width, "…"))
	}
	if why := metricsUnread(ds); len(drawn) == 0 && why != "" {
		// Where the strip stood: the output is unknown, not zero.
		out = append(out, st.Warn.Render(ansi.Truncate(fmt.Sprintf("%-*s", label, "out")+"not read: "+why, width, "…")))
	}
	out = append(out,
		ansi.Truncate(fmt.Sprintf("%-*s", label, "marks")+string(marks), width, "…"),
		st.Dim.Render(ansi.Truncate(st.Glyphs.Legend(), width, "…")))
	for _, m := range drawn {
		out = append(out, seriesLegend(st, ds, m, label, width)...)
	}
	out = append(out, "")
	return append(out, timelineList(st, d, width)...)
}

// metricsUnread is why the metrics server could not be read for this snapshot at all (it is
// down, refuses, times out), "" when it answered or none is configured.
func metricsUnread(ds *dataset) string {
	for _, v := range ds.snap.Visibility {
		if v.Kind == metrics.VisibilityKind && v.Namespace == "" {
			return Sanitize(v.Reason)
		}
	}
	return ""
}

func seriesPeak(samples []diagnose.MetricSample) float64 {
	peak := 0.0
	for _, s := range samples {
		peak = max(peak, s.Value)
	}
	return peak
}

// seriesStrip draws a metric series under the serving strip, on its time axis: each column
// the mean of the samples that fall in it, a column between two samples the value of the one
// before (a range query's step is often wider than a column), blank where the series has no
// sample yet or any more, and a dotted floor for zero, as the serving strip draws it. The
// scale is the series' own peak.
func seriesStrip(bars []rune, samples []diagnose.MetricSample, cols int, col func(time.Time) int) string {
	sum := make([]float64, cols)
	n := make([]int, cols)
	for _, s := range samples {
		c := col(s.Time)
		if c < 0 {
			continue
		}
		sum[c] += s.Value
		n[c]++
	}
	first, last := -1, -1
	for c := range n {
		if n[c] > 0 {
			if first < 0 {
				first = c
			}
			last = c
		}
	}
	peak := seriesPeak(samples)
	cells := []rune(strings.Repeat(" ", cols))
	prev := 0.0
	for c := first; c >= 0 && c <= last; c++ {
		if n[c] > 0 {
			prev = sum[c] / float64(n[c])
		}
		i := 0
		if peak > 0 && prev > 0 {
			// Anything above zero shows at least the lowest bar: a trickle is not nothing.
			i = max(int(math.Ceil(prev/peak*float64(len(bars)-1))), 1)
		}
		cells[c] = bars[min(i, len(bars)-1)]
	}
	return string(cells)
}

// queryOrigins says in words where a throughput query came from.
var queryOrigins = map[string]string{
	string(snapshot.OriginAnnotation): "the workload's annotation",
	string(snapshot.OriginConfig):     "the metrics config",
	string(snapshot.OriginDefault):    "the default queries",
}

// metricSeries is one series the Timeline tab draws: the output, or the work waiting.
type metricSeries struct {
	name, unit, origin, query string
	samples                   []diagnose.MetricSample
	current                   *float64
	rising                    bool
}

// metricSeriesOf lists the series of a throughput section that have samples, output first.
func metricSeriesOf(tp *diagnose.Throughput) []metricSeries {
	if tp == nil {
		return nil
	}
	var out []metricSeries
	if len(tp.Samples) > 0 {
		out = append(out, metricSeries{"out", tp.Unit, tp.Origin, tp.Query, tp.Samples, tp.Current, false})
	}
	if b := tp.Backlog; b != nil && len(b.Samples) > 0 {
		out = append(out, metricSeries{"backlog", b.Unit, b.Origin, b.Query, b.Samples, b.Current, b.Rising})
	}
	return out
}

// seriesLegend names what a strip measures: its unit, where its query came from and the
// server asked (first, as a narrow terminal cuts the end), its peak and newest value, then the
// query itself. A rising backlog says so first.
func seriesLegend(st Styles, ds *dataset, m metricSeries, label, width int) []string {
	what := m.name + " = " + Sanitize(m.unit)
	if m.unit == "" {
		what = m.name + " = the series' own unit"
	}
	if m.rising {
		// The finding itself, before what a narrow terminal cuts.
		what += ", rising,"
	}
	from, ok := queryOrigins[m.origin]
	if !ok {
		from = Sanitize(m.origin)
	}
	if from != "" {
		what += " from " + from
	}
	if ds.snap.Metrics != nil && ds.snap.Metrics.Source != "" {
		what += " on " + Sanitize(ds.snap.Metrics.Source)
	}
	what += "; peak " + compact(seriesPeak(m.samples))
	if m.current != nil {
		what += ", now " + compact(*m.current)
	}
	return []string{
		st.Dim.Render(ansi.Truncate(what, width, "…")),
		st.Dim.Render(ansi.Truncate(fmt.Sprintf("%-*s", label, "query")+Sanitize(m.query), width, "…")),
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func firstFailure(d *diagnose.Diagnosis) time.Time {
	for _, e := range d.Timeline {
		if e.Kind == diagnose.TimelineOnset {
			return e.At
		}
	}
	return time.Time{}
}

// timelineList writes the moments in words, oldest first.
func timelineList(st Styles, d *diagnose.Diagnosis, width int) []string {
	var out []string
	for _, e := range d.Timeline {
		head := e.At.UTC().Format("01-02 15:04:05") + " " + fmt.Sprintf("%-10s", e.Kind)
		if e.Kind == diagnose.TimelineOnset || e.Kind == diagnose.TimelineDependency {
			head = st.Warn.Render(head)
		}
		lines := wrap(Sanitize(e.Message), max(width-len("01-02 15:04:05 ")-11, 10), "")
		for i, l := range lines {
			if i == 0 {
				out = append(out, ansi.Truncate(head+" "+l, width, "…"))
			} else {
				out = append(out, ansi.Truncate(strings.Repeat(" ", 26)+l, width, "…"))
			}
		}
	}
	return out
}

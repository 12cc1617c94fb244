package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// Marks on the Timeline tab's picture, one per kind of moment.
var timelineMarks = map[diagnose.TimelineKind]rune{
	diagnose.TimelineRevision:   'R',
	diagnose.TimelineOnset:      '!',
	diagnose.TimelineRestart:    '↻',
	diagnose.TimelineDependency: '◆',
	diagnose.TimelineServing:    '▼',
}

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
	// Nothing serving is a dotted floor, not a blank a reader takes for "no data".
	bars := []rune("·▁▂▃▄▅▆▇█")
	declared := max(d.Counts.Declared, 1)
	var strip strings.Builder
	for _, l := range level {
		i := int(l) * (len(bars) - 1) / int(declared)
		strip.WriteRune(bars[min(max(i, 0), len(bars)-1)])
	}
	marks := []rune(strings.Repeat(" ", cols))
	for _, e := range d.Timeline {
		if m, ok := timelineMarks[e.Kind]; ok {
			// Moments closer than a column apart sit side by side, in their order.
			for c := col(e.At); c >= 0 && c < cols; c++ {
				if marks[c] == ' ' {
					marks[c] = m
					break
				}
			}
		}
	}
	out = append(out,
		ansi.Truncate(fmt.Sprintf("%-*s", label, fmt.Sprintf("serve %d", declared))+strip.String(), width, "…"),
		ansi.Truncate(fmt.Sprintf("%-*s", label, "marks")+string(marks), width, "…"),
		st.Dim.Render(ansi.Truncate("R revision  ! onset  ▼ serving fell  ↻ restart  ◆ dependency changed", width, "…")),
		"")
	return append(out, timelineList(st, d, width)...)
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

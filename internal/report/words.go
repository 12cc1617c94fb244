package report

import (
	"fmt"
	"strings"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// ShapeMeaning says in one line what a shape means for the people running the workload. The
// console and the explain and markdown printers all say it in these words.
func ShapeMeaning(s diagnose.Shape) string {
	switch s {
	case diagnose.ShapeHealthy:
		return "every declared copy exists and serves"
	case diagnose.ShapeProgressing:
		return "a rollout is under way within its deadline"
	case diagnose.ShapeNeverStarts:
		return "no copy of the current revision runs; the platform cannot start it"
	case diagnose.ShapeStartsAndDies:
		return "copies start, then exit; every replacement repeats the fault because it copies the same spec"
	case diagnose.ShapeLiveButIdle:
		return "copies run and stay up, the count is met, but too few of them serve"
	case diagnose.ShapeNoEligibleNodes:
		return "no node carries the label it selects, and none is a near miss of it: it waits for a node pool that is not there yet, which is no failure"
	case diagnose.ShapeSuspended:
		return "spec.suspend holds its runs back, as its spec asks: no failure"
	}
	return "the signals do not fit a known shape; read the evidence"
}

// WaivedMark is what the row formats add to a waived workload's shape, as kubectl get nodes
// adds SchedulingDisabled to Ready: `no-eligible-nodes,waived`.
const WaivedMark = "waived"

// ShapeCell is a workload's shape for a row: its shape, marked when a waiver applies. The table,
// -o wide and the markdown table print it.
func ShapeCell(d *diagnose.Diagnosis) string {
	if d.Waived != nil {
		return string(d.Shape) + "," + WaivedMark
	}
	return string(d.Shape)
}

// WaiverText says what the waiver names and why, cleaned, for explain, markdown and the
// console: "no-eligible-nodes: the GPU pool joins in Q3".
func WaiverText(w *diagnose.Waiver) string {
	if w.Reason == "" {
		return Clean(w.What) + ", no reason given (" + diagnose.WaiveAnnotation + ")"
	}
	return Clean(w.What) + ": " + Clean(w.Reason)
}

// CauseMeaning says in one line what a diagnosis's cause implies for the fix, in the console as
// in print. A dependency is blamed on a spec unchanged since it served, or, for a workload that
// never served, on a dependency several workloads fail on at once: only the first may say the
// spec served.
func CauseMeaning(d *diagnose.Diagnosis) string {
	switch d.Cause {
	case diagnose.CauseSpec:
		return "the spec is wrong: changing it fixes the workload"
	case diagnose.CauseDependency:
		if d.Revisions != nil && d.Revisions.LastServing != "" {
			return "the spec is unchanged since it last served: something it depends on fails"
		}
		return "something it depends on fails: fix that, not the spec"
	}
	return "not attributed"
}

// CauseSentence is the cause as a person reads it: whose spec when it is another object's, and
// what it implies for the fix: "spec of Service/web (the spec of Service/web is wrong: changing
// it fixes the workload)".
func CauseSentence(d *diagnose.Diagnosis) string {
	label, meaning := CauseLabel(d), CauseMeaning(d)
	if d.Cause == diagnose.CauseSpec && d.Argument != nil && d.Argument.Object != "" && d.Argument.Object != d.Kind+"/"+d.Name {
		label = "spec of " + d.Argument.Object
		meaning = "the spec of " + d.Argument.Object + " is wrong: changing it fixes the workload"
	}
	return label + " (" + meaning + ")"
}

// Thousands writes n with comma separators, 12400 → "12,400", as the console's and the
// commands' progress lines count objects read.
func Thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

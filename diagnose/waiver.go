package diagnose

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WaiveAnnotation is the workload annotation that waives a verdict, as Popeye's spinach file
// and k8sgpt's filters let a team say "we know, and we mean it", but kept on the object it
// speaks of, so every source (a live cluster, a dump) carries it:
//
//	kubediagnose.dev/waive: "no-eligible-nodes; the GPU pool joins in Q3"
//
// One waiver a line, `WHAT; REASON`; WHAT is a shape or a suspect rule ID, several joined by
// commas (`suspended, cronjob-suspended; paused for the migration`). A waiver applies when the
// verdict has that shape, or its top suspect that rule. A healthy verdict has nothing to waive; a
// WHAT that is neither a shape nor a rule never applies, so a waiver cannot hide a verdict it
// does not name.
const WaiveAnnotation = "kubediagnose.dev/waive"

// maxWaiverReason bounds the reason a waiver carries into every report, in runes.
const maxWaiverReason = 200

// Waiver is the part of a workload's waive annotation that applies to its verdict.
type Waiver struct {
	// What is the shape or rule ID the annotation names that the verdict has.
	What string `json:"what"`
	// Reason is the annotation's reason for it, as written; "" when it gave none.
	Reason string `json:"reason"`
}

// waiverOf returns the waiver the workload's annotation grants d, nil when none applies.
func waiverOf(w *workload, d *Diagnosis) *Waiver {
	if d.Shape == ShapeHealthy {
		return nil
	}
	o, ok := w.Object.(metav1.Object)
	if !ok {
		return nil
	}
	text, ok := o.GetAnnotations()[WaiveAnnotation]
	if !ok {
		return nil
	}
	var rule RuleID
	if len(d.Suspects) > 0 {
		rule = d.Suspects[0].Rule
	}
	for _, line := range strings.Split(text, "\n") {
		whats, reason, _ := strings.Cut(line, ";")
		for _, what := range strings.Split(whats, ",") {
			what = strings.ToLower(strings.TrimSpace(what))
			if what != "" && (what == string(d.Shape) || rule != "" && what == string(rule)) {
				return &Waiver{What: what, Reason: boundReason(strings.TrimSpace(reason))}
			}
		}
	}
	return nil
}

func boundReason(s string) string {
	if r := []rune(s); len(r) > maxWaiverReason {
		return string(r[:maxWaiverReason-1]) + "…"
	}
	return s
}

package diagnose

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
)

// A workload declares how many of its copies may be unavailable at once: its rolling update's
// maxUnavailable. At or above that floor it is available by its own contract, and a copy that
// dropped out of it a moment ago (readiness churn: a probe that times out now and then) is a
// degraded note, not a failure shape; the summary does not flicker with it.

// flickerWindow is how long a copy that was Ready may have been not Ready and still count as
// flickering: past it, the copy has a failure of its own (the settling time of the copy rules).
const flickerWindow = settleTime

// availabilityFloor is the number of copies the workload keeps available by its own contract,
// and how it says so: a PodDisruptionBudget that selects its copies, the team's word on it,
// else its update strategy's maxUnavailable; 0 when it sets none (Recreate, OnDelete).
func availabilityFloor(w *workload) (int32, string) {
	n := int(w.Declared)
	if n <= 0 {
		return 0, ""
	}
	if floor, how := budgetFloor(w, n); floor > 0 {
		return floor, how
	}
	k := kinds.Of(w.Object)
	if k == nil {
		return 0, ""
	}
	st := k.Strategy(w.Object)
	if st.MaxUnavailable == nil {
		return 0, ""
	}
	mu := *st.MaxUnavailable
	// The controllers round maxUnavailable as the adapter says: a Deployment down, the others up.
	v, err := intstr.GetScaledValueFromIntOrPercent(&mu, n, st.RoundUp)
	if err != nil || v <= 0 || v >= n {
		return 0, ""
	}
	return int32(n - v), fmt.Sprintf("%d declared − maxUnavailable %s", n, mu.String())
}

// flickering says why the copies that do not serve are readiness churn above the workload's
// availability floor, or "": every copy exists, none fails to start or dies, each that does not
// serve runs, was Ready before and has not been Ready for less than flickerWindow, and the
// serving copies are at or above the floor (a Deployment's Available condition, where it has
// one, agrees).
func flickering(w *workload, idle []*copyFacts, ref time.Time) string {
	c := w.Counts
	if len(idle) == 0 || c.Existing < w.Declared || c.Serving >= w.Declared {
		return ""
	}
	floor, how := availabilityFloor(w)
	if floor == 0 || c.Serving < floor {
		return ""
	}
	if _, ok := w.Object.(*appsv1.Deployment); ok {
		for _, cd := range w.controller().Conditions {
			if cd.Type == string(appsv1.DeploymentAvailable) && cd.Status != string(corev1.ConditionTrue) {
				return ""
			}
		}
	}
	out := ""
	for _, f := range idle {
		rc := &f.Life.ReadyCondition
		if f.Ready || !rc.Seen || !f.Life.WasReady() || ref.Sub(rc.Changed) >= flickerWindow {
			return ""
		}
		if out == "" {
			out = fmt.Sprintf("copy %s has not been Ready for %s", f.Pod.Name, humanDuration(ref.Sub(rc.Changed)))
		}
	}
	if len(idle) > 1 {
		out += fmt.Sprintf(" (%d copies)", len(idle))
	}
	return fmt.Sprintf("%d of %d copies serve, at or above the availability floor of %d (%s); %s: degraded, not failing",
		c.Serving, w.Declared, floor, how, out)
}

// budgetFloor is the highest number of healthy copies a PodDisruptionBudget that selects the
// workload's copies desires, computed as the disruption controller does with the declared
// count as the scale; 0 when none selects them or the budget keeps none (or all) of them.
func budgetFloor(w *workload, n int) (int32, string) {
	if w.Snap == nil || w.Template == nil {
		return 0, ""
	}
	var best int32
	how := ""
	for _, b := range w.Snap.PodDisruptionBudgets {
		if b.Namespace != w.Namespace || b.Spec.Selector == nil {
			// policy/v1: a budget without a selector selects no pod.
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(w.Template.Labels)) {
			continue
		}
		var healthy int
		var what string
		switch {
		case b.Spec.MaxUnavailable != nil:
			mu, err := intstr.GetScaledValueFromIntOrPercent(b.Spec.MaxUnavailable, n, true)
			if err != nil {
				continue
			}
			healthy, what = n-mu, fmt.Sprintf("%d declared − maxUnavailable %s", n, b.Spec.MaxUnavailable.String())
		case b.Spec.MinAvailable != nil:
			ma, err := intstr.GetScaledValueFromIntOrPercent(b.Spec.MinAvailable, n, true)
			if err != nil {
				continue
			}
			healthy, what = ma, "minAvailable "+b.Spec.MinAvailable.String()
		default:
			continue
		}
		if healthy <= 0 || healthy >= n || int32(healthy) <= best {
			continue
		}
		best, how = int32(healthy), "PodDisruptionBudget "+b.Name+" "+what
	}
	return best, how
}

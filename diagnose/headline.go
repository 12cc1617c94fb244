package diagnose

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
)

// headline states the problem in its own terms: how many copies exist, how many serve, and why
// the gap is there, e.g. "5 of 5 copies exist · 0 serving — the loop has converged; nothing is
// serving".
func headline(w *workload, shape Shape) string {
	c := w.Counts
	// Written without fmt: every workload has a headline (TestHotMessagesAsSprintf).
	head := itoa(c.Existing) + " of " + itoa(c.Declared) + " copies exist · " + itoa(c.Serving) + " serving"
	if c.Existing > c.Declared {
		// During a rollout old and new copies exist side by side.
		head = fmt.Sprintf("%d copies exist for %d declared · %d serving", c.Existing, c.Declared, c.Serving)
	}
	h := &w.cls.history
	var why string
	switch shape {
	case ShapeHealthy:
		why = w.cls.why
	case ShapeProgressing:
		why = w.cls.why
		if h.Current != nil && w.cls.rollout.InProgress {
			why = fmt.Sprintf("rollout of revision %d under way inside its deadline", h.Current.Number)
		}
		if s := w.cls.starting; s != "" && w.cls.rollout.InProgress {
			why += "; " + s
		}
		if f := w.cls.failingWhileProgressing; f != "" {
			why += "; its new copies that do not serve yet show a failure: " + f
		}
	case ShapeNeverStarts:
		why = "no copy ever starts: " + w.cls.why
		switch {
		case w.cls.sight.byController() && controllerCopiesExist(w):
			// Counts of copies that exist do not say they never started.
			why = controllerNeverStarts(w)
		case h.Current != nil && h.LastServing == h.Current:
			// It served: its copies ran once, they do not start now.
			why = fmt.Sprintf("revision %d served, and its copies no longer start: %s", h.Current.Number, w.cls.why)
		case h.Current != nil && len(h.Revisions) > 1:
			why = fmt.Sprintf("revision %d never starts a copy: %s", h.Current.Number, w.cls.why)
		}
	case ShapeStartsAndDies:
		why = "copies start and die: " + w.cls.why
		switch {
		case h.Current != nil && h.LastServing == h.Current && len(h.Revisions) > 0:
			why = fmt.Sprintf("revision %d served, and its copies now start and die: %s", h.Current.Number, w.cls.why)
		case h.Current != nil && h.LastServing != nil && h.LastServing != h.Current:
			why = fmt.Sprintf("revision %d's copies start and die: %s", h.Current.Number, w.cls.why)
		}
		if c.Restarts > 0 {
			why += fmt.Sprintf(", %d restarts", c.Restarts)
		}
	case ShapeLiveButIdle:
		if c.Existing >= c.Declared && c.Serving == 0 {
			why = "the loop has converged; nothing is serving: " + w.cls.why
		} else {
			why = w.cls.why
		}
	default:
		why = w.cls.why
	}
	if shape.Broken() && c.Serving > 0 && h.LastServing != nil && h.LastServing != h.Current {
		why += fmt.Sprintf("; revision %d still serves", h.LastServing.Number)
	}
	return head + " — " + why
}

// fix suggests one next step that is safe to take read-only: a rollback command to print and
// run, or the field to change and its previous value. The tool itself never writes.
func fix(w *workload, shape Shape, cause Cause, top *Suspect) string {
	if shape == ShapeHealthy {
		return ""
	}
	ref := shellQuote(strings.ToLower(w.Kind) + "/" + w.Name)
	ns := ""
	if w.Namespace != "" {
		ns = " -n " + shellQuote(w.Namespace)
	}
	h := &w.cls.history
	switch {
	case shape == ShapeHealthy:
		return ""
	case shape == ShapeProgressing:
		if !rollsBack(w.Kind) {
			return ""
		}
		return fmt.Sprintf("kubectl rollout status %s%s", ref, ns)
	case shape == ShapeSuspended:
		return fmt.Sprintf("none while it is meant to be paused; to resume it: kubectl patch %s%s -p '{\"spec\":{\"suspend\":false}}'", ref, ns)
	case shape == ShapeNoEligibleNodes && top != nil && top.Path != nil:
		return fmt.Sprintf("none while nodes labelled %s are yet to join; if none are meant to, change %s %s (now %s) to what nodes carry (kubectl get nodes --show-labels)",
			w.cls.pool, top.Object, top.Path.String(), rules.QuoteValue(top.Value))
	case shape == ShapeUnknown || top == nil:
		return fmt.Sprintf("kubectl describe %s%s", ref, ns)
	}
	path := ""
	if top.Path != nil {
		path = top.Path.String()
	}
	hint := ruleInfo(top.Rule).Fix
	if h.LastServing == nil {
		// No revision served, so no previous value is known to work.
		hint, _, _ = strings.Cut(hint, "; the previous value")
		if hint != "" && !strings.HasSuffix(hint, ".") {
			hint += "."
		}
	}
	switch {
	case cause == CauseSpec && rollsBack(w.Kind) && h.LastServing != nil && h.LastServing != h.Current && implicatedByChange(w, top):
		return fmt.Sprintf("kubectl rollout undo %s --to-revision=%d%s", ref, h.LastServing.Number, ns) + forcedRollback(w, ns)
	case cause == CauseDependency && dependencyDespiteChange(top) && implicatedByChange(w, top):
		s := fmt.Sprintf("look outside the spec first: %s changed from %s to %s, but on the same registry host %s that revision %s pulled from",
			path, rules.QuoteValue(top.PreviousValue), rules.QuoteValue(top.Value), rules.RegistryHost(top.Value), w.LastServingRevision)
		if hint != "" {
			s += ": " + hint
		}
		return s
	case cause == CauseDependency && top.Object != w.Kind+"/"+w.Name:
		s := fmt.Sprintf("look outside %s's spec first: %s %s is %s", ref, top.Object, path, rules.QuoteValue(top.Value))
		if c := changedUnderneath(w, top); c != nil {
			s += fmt.Sprintf(", changed %s", c.At.Format(time.RFC3339))
			if c.Manager != "" {
				s += " by " + c.Manager
			}
			s += fmt.Sprintf(" after revision %s served unchanged", w.LastServingRevision)
		}
		if hint != "" {
			s += ": " + hint
		}
		return s
	case cause == CauseDependency && !ruleInfo(top.Rule).Outside:
		return fmt.Sprintf("look outside the spec first: %s is %s, %s; what it refers to changed since: restore it",
			path, rules.QuoteValue(top.Value), unchangedSince(w))
	case cause == CauseDependency:
		s := fmt.Sprintf("look outside the spec first: %s is %s, %s", path, rules.QuoteValue(top.Value), unchangedSince(w))
		if hint != "" {
			s += ": " + hint
		}
		return s
	case top.Rule == RuleEnvVarUnset && top.Variable != "" && top.PreviousValue == "":
		if strings.HasSuffix(path, ".envFrom") {
			return fmt.Sprintf("add variable %s to the ConfigMap or Secret that %s %s reads, or to the container's env", top.Variable, top.Object, path)
		}
		return fmt.Sprintf("add variable %s to %s %s", top.Variable, top.Object, path)
	case top.PreviousValue != "" && top.PreviousValue != top.Value:
		return fmt.Sprintf("set %s %s back to %s (now %s)", top.Object, path, rules.QuoteValue(top.PreviousValue), rules.QuoteValue(top.Value))
	default:
		s := fmt.Sprintf("change %s %s (now %s)", top.Object, path, rules.QuoteValue(top.Value))
		if hint != "" {
			s += ": " + hint
		}
		return s
	}
}

// forcedRollback is the step a StatefulSet's rollback needs after kubectl rollout undo, as
// " && kubectl delete pod ..."; "" when the controller replaces the failing copies itself.
// Under OrderedReady the controller replaces no copy while one it made is not Running and
// Ready (pkg/controller/statefulset/stateful_set_control.go, processReplica returns before the
// rolling update deletes anything), so a copy of the failing revision that never becomes Ready
// holds the reverted template back until someone deletes it: the documented "Forced rollback"
// (https://kubernetes.io/docs/concepts/workloads/controllers/statefulset/#forced-rollback).
// Under OnDelete nothing replaces a copy until it is deleted. Parallel and Recreate replace them.
func forcedRollback(w *workload, ns string) string {
	st, ok := w.Object.(*appsv1.StatefulSet)
	cur := w.cls.Current
	if !ok || cur == nil {
		return ""
	}
	onDelete := st.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType
	rolling := st.Spec.UpdateStrategy.Type == "" || st.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType
	if !onDelete && (!rolling || st.Spec.PodManagementPolicy == appsv1.ParallelPodManagement) {
		return ""
	}
	if w.cls.sight.byController() || w.cls.sight.Hidden > 0 {
		// The copies are not all in the snapshot: name them by the revision label the
		// controller gives each (StatefulSetRevisionLabel).
		return fmt.Sprintf(" && kubectl delete pod -l %s=%s%s", appsv1.StatefulSetRevisionLabel, cur.Name, ns)
	}
	var names []string
	for _, f := range w.cls.copies {
		if f.Rev == cur && f.Active && (onDelete || !f.Ready) {
			names = append(names, f.Pod.Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	// In ordinal order, the order the controller waits on them.
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) })
	return " && kubectl delete pod " + strings.Join(names, " ") + ns
}

// rollsBack reports whether kubectl rollout undo applies to the kind (kinds.Workload.Rollout).
func rollsBack(kind string) bool {
	k := kinds.Named(kind)
	return k != nil && k.Rollout
}

// unchangedSince says since when the spec is unchanged, for a dependency's fix: since the last
// revision that served, or, when the only one served before its failure began, since it rolled out.
func unchangedSince(w *workload) string {
	if w.LastServingRevision == "" {
		return "unchanged since it rolled out"
	}
	return "unchanged since revision " + w.LastServingRevision + " served"
}

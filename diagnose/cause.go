package diagnose

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// The cause is an argument between two hypotheses, each on facts:
//
//   - spec: the onset lies in the early life of the revision current at onset (or that
//     revision never served without this failure), and that revision changed the suspect, a
//     field the failure names or a value the failure text names; or the suspect's rule says the
//     spec itself is wrong (a name, key or port that does not exist) and no revision served
//     with it past its early life. A suspect on another object (a Service) is that object's
//     spec.
//   - dependency: the revision served without this failure before the onset, its spec
//     unchanged since, and something outside changed: dated where the snapshot can date it (a
//     Service's managedFields), else undated (a registry, an upstream, a Secret that went away).
//
// The winner is said with the facts that carry it, and the other with why it was rejected;
// when neither holds (nothing ever served, and the suspect lies outside the spec), the cause is
// unknown and both rejections are said.

// provenService is how long a revision must have served for its spec to count as proven when
// no fact shows what failed outside it (its logs were not read, nothing names a field): a
// spec that served an hour without the failure did not cause it, while one that served a
// few minutes after its rollout may have; the engine then says unknown rather than guess.
const provenService = time.Hour

// Argument is the case the engine makes for a cause.
type Argument struct {
	// Object is whose spec is at fault for a spec cause (Deployment/x, Service/web), or the
	// object whose dated change made it a dependency; empty when no object is named.
	Object string `json:"object,omitempty"`
	// For is the winning hypothesis on the facts that carry it.
	For string `json:"for"`
	// Against is the other hypothesis and why it was rejected.
	Against string `json:"against,omitempty"`
}

// argueCause decides where the fault lies and says why.
func argueCause(w *workload, shape Shape, top *Suspect, o onset) (Cause, *Argument) {
	if !shape.Broken() {
		return CauseUnknown, nil
	}
	h := &w.cls.history
	self := w.object()
	cur := h.Current
	served, servedFor, servedLong := servedBeforeOnset(cur)
	early := inEarlyLife(w, cur, o)
	curName := "the current revision"
	if cur != nil {
		curName = fmt.Sprintf("revision %d", cur.Number)
	}
	began := beganText(cur, o)

	if top == nil {
		if served && !early && servedLong {
			return CauseDependency, &Argument{
				For:     fmt.Sprintf("dependency: %s served %s before the failure began%s, and its spec is unchanged since then", curName, servedFor, began),
				Against: "not spec: nothing in the spec changed since it served",
			}
		}
		if served && !early {
			return CauseUnknown, unprovenArgument(curName, servedFor, began)
		}
		return CauseUnknown, &Argument{
			For:     "unknown: no field is implicated" + began,
			Against: neverServedText(w, cur, served, early, servedFor),
		}
	}
	path := pathOf(top)
	if strings.HasPrefix(top.Object, "Node/") {
		// A node is no part of any workload's spec: its state (not Ready, cordoned) is a
		// dependency whatever the workload's history.
		return CauseDependency, &Argument{
			Object:  top.Object,
			For:     fmt.Sprintf("dependency: %s: %s", top.Object, firstClause(top.Reason)),
			Against: fmt.Sprintf("not the spec of %s: the copies wait on the node, not on a field", self),
		}
	}
	if top.Rule == rules.RuleNoScheduler && rules.SchedulerOf(w.Template) == corev1.DefaultSchedulerName {
		// The default scheduler is the cluster's; that it does not run is no field's doing. A
		// custom name may be the spec's own mistake, and is argued as any field.
		return CauseDependency, &Argument{
			For:     fmt.Sprintf("dependency: %s", firstClause(top.Reason)),
			Against: fmt.Sprintf("not the spec of %s: it names the cluster's default scheduler", self),
		}
	}
	if top.Object != self {
		// A suspect on another object: that object's spec, unless it changed (dated) after the
		// workload served unchanged.
		if c := changedUnderneath(w, top); c != nil {
			by := ""
			if c.Manager != "" {
				by = " by " + c.Manager
			}
			return CauseDependency, &Argument{
				Object:  c.Object,
				For:     fmt.Sprintf("dependency: %s's spec changed at %s%s, after %s served unchanged (%s)", c.Object, clock(c.At), by, curName, cur.Served),
				Against: fmt.Sprintf("not the spec of %s: it has not changed since it served", self),
			}
		}
		against := fmt.Sprintf("not dependency: %s never served through %s", self, top.Object)
		if served {
			against = fmt.Sprintf("not dependency: no change to %s is dated after %s served", top.Object, curName)
		}
		return CauseSpec, &Argument{
			Object:  top.Object,
			For:     fmt.Sprintf("spec of %s: %s: %s", top.Object, path, firstClause(top.Reason)),
			Against: against,
		}
	}
	changed := implicatedByChange(w, top)
	outside := ruleInfo(top.Rule).Outside
	switch {
	case changed && dependencyDespiteChange(top):
		return CauseDependency, &Argument{
			For: fmt.Sprintf("dependency: %s changed %s but kept registry host %s, which revision %s pulled from; the registry cannot be reached now",
				curName, path, rules.RegistryHost(top.Value), w.LastServingRevision),
			Against: "not spec: the new value points at the same registry that served",
		}
	case top.Rule == rules.RuleVolumeMultiAttach:
		// Its fields (replicas, the rollout strategy) make no revision, so the history cannot
		// date them; and the spec contradicts itself whatever changed: copies on two nodes
		// cannot share a volume that attaches to one.
		return CauseSpec, &Argument{
			Object:  self,
			For:     fmt.Sprintf("spec of %s: %s: %s", self, path, firstClause(top.Reason)),
			Against: "not dependency: the spec asks copies on several nodes to share a volume that attaches to one",
		}
	case served && !early && !changed && top.Rule == rules.RuleChangedField && !servedLong:
		return CauseUnknown, unprovenArgument(curName, servedFor, began)
	case served && !early && !changed:
		return CauseDependency, &Argument{
			For: fmt.Sprintf("dependency: %s served %s without this failure before it began%s; %s is unchanged since then",
				curName, servedFor, began, path),
			Against: fmt.Sprintf("not spec: %s's spec served unchanged before the failure began", curName),
		}
	case changed && !served && top.Rule == rules.RuleChangedField && cur != nil && cur.Contested != nil:
		return CauseUnknown, &Argument{
			For: fmt.Sprintf("unknown: %s changed %s%s; %s, which a crash loop can pass for, and no failure names a field it changed",
				curName, path, changeText(top), cur.Contested.Why),
			Against: fmt.Sprintf("not spec: nothing ties the failure to the change; not dependency: nothing shows that %s served", curName),
		}
	case changed && served && top.Rule == rules.RuleChangedField:
		// The revision served a while after its rollout, then failed, and no failure names
		// what it changed: the change set is where to look, not proof.
		return CauseUnknown, &Argument{
			For: fmt.Sprintf("unknown: %s changed %s%s and served %s before the failure began%s, but no failure names a field it changed",
				curName, path, changeText(top), servedFor, began),
			Against: fmt.Sprintf("not spec: nothing ties the failure to the change; not dependency: %s served only %s after its rollout", curName, servedFor),
		}
	case changed && (early || !served):
		return CauseSpec, &Argument{
			Object:  self,
			For:     fmt.Sprintf("spec of %s: %s changed %s%s%s%s", self, curName, path, changeText(top), namedByOnset(top, o, curName), onsetDistance(cur, o)),
			Against: neverServedText(w, cur, served, early, servedFor),
		}
	case !outside && (!served || early):
		return CauseSpec, &Argument{
			Object:  self,
			For:     fmt.Sprintf("spec of %s: %s: %s", self, path, firstClause(top.Reason)),
			Against: neverServedText(w, cur, served, early, servedFor),
		}
	case served && outside:
		return CauseDependency, &Argument{
			For: fmt.Sprintf("dependency: %s served %s before the failure began%s, and the failure lies outside the spec (%s)",
				curName, servedFor, began, strings.ToLower(ruleInfo(top.Rule).Title)),
			Against: fmt.Sprintf("not spec: %s did not change %s", curName, path),
		}
	case h.LastServing != nil && !changed:
		return CauseDependency, &Argument{
			For: fmt.Sprintf("dependency: %s is unchanged since revision %d served, and the failure lies outside the spec (%s)",
				path, h.LastServing.Number, strings.ToLower(ruleInfo(top.Rule).Title)),
			Against: fmt.Sprintf("not spec: %s did not change %s", curName, path),
		}
	}
	return CauseUnknown, &Argument{
		For:     fmt.Sprintf("unknown: the failure lies outside the spec (%s), and nothing shows the outside worked before", strings.ToLower(ruleInfo(top.Rule).Title)),
		Against: fmt.Sprintf("not spec: %s is unchanged; not dependency: no revision served with it", path),
	}
}

// batchArgument is the argument for a Job's or CronJob's scheduling suspect, whose cause the
// rule alone decides: a node requirement nothing meets is the spec's, capacity the cluster's.
func batchArgument(top *Suspect, c Cause) *Argument {
	if c == CauseDependency {
		return &Argument{For: "dependency: " + firstClause(top.Reason), Against: "not spec: the rule's failure lies outside the spec (" + strings.ToLower(ruleInfo(top.Rule).Title) + ")"}
	}
	return &Argument{Object: top.Object, For: "spec of " + top.Object + ": " + pathOf(top) + " " + firstClause(top.Reason), Against: "not dependency: no node the spec accepts can run it"}
}

// unprovenArgument is the argument for a revision that served a while, then failed, with no
// fact to say what failed: too short a service to prove the spec, nothing to show the outside.
func unprovenArgument(rev, servedFor, began string) *Argument {
	return &Argument{
		For: fmt.Sprintf("unknown: %s served %s before the failure began%s, but no fact shows what failed (no failure names a field)",
			rev, servedFor, began),
		Against: fmt.Sprintf("not spec: %s's spec served unchanged; not dependency: nothing outside is shown to fail, and %s is too short a service to prove the spec",
			rev, servedFor),
	}
}

// servedBeforeOnset reports whether rev served without this failure before the onset (its
// episodes end there), for how long as the argument says it, and whether that proves its spec (provenService, or a
// presumption from its lifetime).
func servedBeforeOnset(rev *revision) (bool, string, bool) {
	if rev == nil || rev.Served == "" {
		return false, "", false
	}
	e := rev.Episode
	if e == nil || e.Presumed {
		return true, "(" + rev.Served + ")", true
	}
	return true, humanDuration(e.length()), e.length() >= provenService
}

// beganText says when the failure began, for an argument: ", from 10:42:07".
func beganText(rev *revision, o onset) string {
	if o.At.IsZero() {
		return ""
	}
	return " at " + clock(o.At) + onsetAfterRollout(rev, o)
}

// onsetDistance says when the failure began relative to the revision's rollout, and with
// what: "; the failure began 7s after it rolled out (copy x logged a failing line)".
func onsetDistance(rev *revision, o onset) string {
	if o.At.IsZero() || rev == nil || rev.Created.IsZero() || o.At.Before(rev.Created) {
		return ""
	}
	return fmt.Sprintf("; the failure began %s after it rolled out (%s)", preciseDuration(o.At.Sub(rev.Created)), o.What)
}

func onsetAfterRollout(rev *revision, o onset) string {
	if rev == nil || rev.Created.IsZero() || o.At.Before(rev.Created) {
		return ""
	}
	return fmt.Sprintf(", %s after revision %d rolled out", preciseDuration(o.At.Sub(rev.Created)), rev.Number)
}

// namedByOnset says that the first failing line names the suspect's value, which the revision
// introduced: " and the first failing line names telemetry-intake.internal:9443, which it
// introduced".
func namedByOnset(top *Suspect, o onset, rev string) string {
	if o.Line == "" || len(top.Value) < rules.MinExactValueLen || !strings.Contains(o.Line, top.Value) {
		return ""
	}
	return "; the first failing line names " + top.Value + ", which " + rev + " introduced"
}

// neverServedText is the rejection of the dependency hypothesis for a revision that did not
// serve without this failure before its early life ended.
func neverServedText(w *workload, rev *revision, served, early bool, servedFor string) string {
	switch {
	case rev == nil:
		return "not dependency: nothing shows that it ever served"
	case served && early:
		return fmt.Sprintf("not dependency: revision %d served only %s, and the failure began in its early life (%s after its rollout)",
			rev.Number, servedFor, humanDuration(earlyLife(w, rev)))
	case rev.FailedFromStart != nil:
		ff := rev.FailedFromStart
		return fmt.Sprintf("not dependency: revision %d never served without this failure (copy %s logged it %s after it started)",
			rev.Number, ff.Pod, preciseDuration(ff.At.Sub(ff.Started)))
	}
	return fmt.Sprintf("not dependency: revision %d never served without this failure", rev.Number)
}

// changeText is a changed suspect's values: " (:8443 → :9443)".
func changeText(s *Suspect) string {
	if s.PreviousValue == "" || s.PreviousValue == s.Value {
		return ""
	}
	return fmt.Sprintf(" (%s → %s)", rules.QuoteValue(s.PreviousValue), rules.QuoteValue(s.Value))
}

// firstClause is a suspect's reason up to its first sentence's end, for one line.
func firstClause(reason string) string {
	if i := strings.Index(reason, ". "); i > 0 {
		return reason[:i]
	}
	return strings.TrimSuffix(reason, ".")
}

func pathOf(s *Suspect) string {
	if s.Path == nil {
		return s.Object
	}
	return s.Path.String()
}

// implicatedByChange reports whether the revision that replaced the last serving one changed the
// suspect's field, a field above it, or one below it.
func implicatedByChange(w *workload, s *Suspect) bool {
	if s == nil || s.Path == nil || s.Object != w.Kind+"/"+w.Name {
		return false
	}
	p := s.Path.String()
	for _, c := range w.Changes {
		if pathsRelated(p, c.Path.String()) {
			return true
		}
	}
	return false
}

// dependencyDespiteChange reports whether a suspect on a field the failing revision changed
// still points outside the spec (rules.DependencyDespiteChange).
func dependencyDespiteChange(s *Suspect) bool {
	return s != nil && rules.DependencyDespiteChange(s.Rule, s.Value, s.PreviousValue)
}

package diagnose

// decideCause says where the fault lies, from the top suspect and the revision history:
//
//   - healthy, progressing and unknown shapes have nothing to attribute: unknown;
//   - a suspect on another object (a Service's selector or targetPort) is that object's spec,
//     unless that object changed (dated by its managedFields) after the workload's unchanged
//     current revision served: dependency;
//   - a suspect the failing revision changed (the path or one above or below it) is spec, unless
//     the change leaves the fault outside (a new tag on the same registry that cannot be reached);
//   - a suspect on a spec unchanged since its current revision served without this failure is
//     dependency, whatever the rule: a Secret, a ConfigMap key or a node the spec names went away
//     underneath (a revision whose failure began with its copies never counts as served);
//   - a suspect whose rule is intrinsic to the spec (a name, key or port that does not exist, a
//     node requirement nothing meets) is spec;
//   - an outside rule (registry unreachable, upstream refusing, input outgrowing a limit) on a
//     field unchanged since a revision served is dependency;
//   - otherwise (nothing ever served, so nothing shows the outside worked before) unknown.
//
// Without a suspect, a workload whose current revision served is dependency: whatever broke is
// not in a spec that has not changed.
func decideCause(w *workload, shape Shape, top *Suspect) Cause {
	if !shape.Broken() {
		return CauseUnknown
	}
	h := &w.cls.history
	if top == nil {
		if h.LastServing != nil && h.LastServing == h.Current {
			return CauseDependency
		}
		return CauseUnknown
	}
	if top.Object != w.Kind+"/"+w.Name {
		if changedUnderneath(w, top) != nil {
			return CauseDependency
		}
		return CauseSpec
	}
	if implicatedByChange(w, top) && !dependencyDespiteChange(top) {
		return CauseSpec
	}
	if top.Rule == RuleVolumeMultiAttach {
		// Its fields (replicas, the rollout strategy) make no revision, so the history cannot
		// date them; and the spec contradicts itself whatever changed: copies on two nodes
		// cannot share a volume that attaches to one.
		return CauseSpec
	}
	if h.LastServing != nil && h.LastServing == h.Current {
		return CauseDependency
	}
	if !ruleInfo(top.Rule).Outside {
		return CauseSpec
	}
	if h.LastServing != nil {
		return CauseDependency
	}
	return CauseUnknown
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

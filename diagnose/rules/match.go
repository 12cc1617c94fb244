package rules

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
)

// The named rules. IDs are stable: scripts and the documentation refer to them.
const (
	RuleNamedInFailure   RuleID = "named-in-failure"
	RuleRejectedArgument RuleID = "rejected-argument"
)

// namedFamily is the general rule: it matches what failures name against every string of the template.
var _ = register(family{
	order:  130,
	name:   "named",
	detect: func(r *ranker) { r.namedInFailure(); r.namedVariables(); r.unsetVariables() },
	rules: []RuleInfo{
		{
			RuleNamedInFailure, "A field holds an endpoint, host, port, path, flag or variable that the failure names",
			"host:port, URL, path, flag or variable name in failing events, container states and log lines",
			"Check the value against what the failure says; fix the field if it is wrong, else the named dependency.", true,
		},
		{
			RuleRejectedArgument, "The program rejects a flag, argument or value that a field gives it",
			"an unknown-flag, invalid-value or must-be-set message (facts.ClassConfig) that names a value of the template",
			"Give the program what it accepts (its usage message lists it); the previous value if a revision served with it.", false,
		},
		envVarUnsetInfo,
	},
})

// The changed rules. IDs are stable: scripts and the documentation refer to them.
const (
	RuleChangedField RuleID = "changed-field"
)

// changedFamily is the last rule: it lists the fields the failing revision changed that nothing names.
var _ = register(family{
	order:  140,
	name:   "changed",
	detect: (*ranker).changedFields,
	rules: []RuleInfo{
		{
			RuleChangedField, "Changed in the failing revision, not named by any failure",
			"revision history",
			"Compare with the previous value; roll back if the change is the likely cause.", false,
		},
	},
})

// notConfig matches template fields that name things rather than configure them (a
// container's, volume's, port's or variable's own name, the pod's labels): a failure that
// quotes a container name does not make the name a suspect.
var notConfig = regexp.MustCompile(`(?:\.(?:containers|initContainers|ephemeralContainers|volumes|volumeMounts|volumeDevices|ports|env|resizePolicy)\[\d+\]\.name|\.metadata\.labels\[[^\]]*\]|\.terminationMessagePath|\.imagePullPolicy|\.terminationMessagePolicy)$`)

// isNotConfig is notConfig.MatchString(path), the expression run only on the paths whose end
// it can match: most of a template's leaves end otherwise, and the expression cost a tenth of
// the ranking at 100,000 pods.
func isNotConfig(path string) bool {
	if !strings.HasSuffix(path, ".name") && !strings.HasSuffix(path, "]") &&
		!strings.HasSuffix(path, "Path") && !strings.HasSuffix(path, "Policy") {
		return false
	}
	return notConfig.MatchString(path)
}

// namedInFailure is the general rule: every endpoint, host:port, URL, path or flag that a
// failure names (in events, container states and failing log lines) is matched against every
// string value of the pod template, and the field holding it becomes a suspect. Signals a
// specific rule already explained are left out, so the general rule adds what they do not.
func (r *ranker) namedInFailure() {
	type hit struct {
		m    match
		sigs []*Signal
	}
	var (
		candidates []fieldpath.Leaf
		valueToks  [][]facts.Value
		hits       []hit
		walked     bool
	)
	// The template's leaves are walked only once a signal has tokens to match: a workload
	// whose copies have not failed yet (Pending, never scheduled) has none.
	walk := func() {
		walked = true
		for _, l := range fieldpath.Leaves(r.tplPath, r.in.Template) {
			if l.Text && !isNotConfig(l.PathString) {
				r.knowPath(l.Path, l.PathString)
				candidates = append(candidates, l)
				valueToks = append(valueToks, valueTokens(l.Value))
			}
		}
		hits = make([]hit, len(candidates))
	}
	// Many copies log the same failure with different timestamps; a signal whose tokens were
	// already matched adds only its copy to the hits it makes.
	seen := map[string][]int{}
	for _, s := range r.in.Signals {
		if s.Explained || s.Text == "" {
			continue
		}
		toks := s.Tokens()
		if len(toks) == 0 {
			continue
		}
		if !walked {
			walk()
		}
		key := s.TokensKey()
		if idx, ok := seen[key]; ok {
			for _, i := range idx {
				hits[i].sigs = append(hits[i].sigs, s)
			}
			continue
		}
		var idx []int
		for i, l := range candidates {
			m := matchTokens(toks, l.Value, valueToks[i], r.in.OwnHosts)
			if m.Strength == 0 {
				continue
			}
			if m.Strength > hits[i].m.Strength {
				hits[i].m = m
			}
			hits[i].sigs = append(hits[i].sigs, s)
			idx = append(idx, i)
		}
		seen[key] = idx
	}
	for i, h := range hits {
		if h.m.Strength == 0 {
			continue
		}
		first := h.sigs[0]
		for _, s := range h.sigs {
			if s.From != FromLog {
				first = s
				break
			}
		}
		reason := "the failure names " + h.m.What + r.copiesOf(h.sigs) + ": " + Clip(first.Text, 200)
		rule := RuleNamedInFailure
		if allClass(h.sigs, facts.ClassConfig) {
			// The program refused what the field gives it: the spec's own fault, whatever
			// lies outside.
			rule = RuleRejectedArgument
			reason = "the program rejects " + h.m.What + r.copiesOf(h.sigs) + ": " + Clip(first.Text, 200)
		}
		r.readAll(h.sigs)
		r.suspectTemplate(rule, candidates[i].Path, h.m.Strength, reason)
	}
}

// allClass reports whether every signal reports a failure of class c.
func allClass(sigs []*Signal, c facts.Class) bool {
	for _, s := range sigs {
		if s.Class() != c {
			return false
		}
	}
	return len(sigs) > 0
}

// namedVariables is the general rule for environment variables: a failing line that names a
// container's variable (a program exiting because DATABASE_URL is unset or wrong) implicates
// where the variable's value comes from. An optional Secret or ConfigMap key that is missing
// leaves the variable unset without any kubelet error, so the key is the suspect there.
func (r *ranker) namedVariables() {
	named := map[string][]*Signal{}
	for _, s := range r.in.Signals {
		if s.Explained || s.Text == "" {
			continue
		}
		for _, t := range s.Tokens() {
			if t.Kind == facts.ValueEnvName {
				named[t.Text] = append(named[t.Text], s)
			}
		}
	}
	if len(named) == 0 {
		return
	}
	for _, c := range r.containers() {
		for j, e := range c.c.Env {
			// A line names the variables of the container that logged it: a sidecar that sets
			// the same name is not the one that failed.
			sigs := r.loggedIn(named[e.Name], c)
			if len(sigs) == 0 {
				continue
			}
			p := c.path.Child("env").Index(j)
			r.readAll(sigs)
			reason := "the failure names variable " + e.Name + r.copiesOf(sigs) + ": " + Clip(sigs[0].Text, 200)
			switch vf := e.ValueFrom; {
			case vf != nil && vf.SecretKeyRef != nil:
				if vf.SecretKeyRef.Optional != nil && *vf.SecretKeyRef.Optional {
					reason += "; it comes from an optional key of Secret " + vf.SecretKeyRef.Name + ", unset when the key or Secret is missing"
				}
				p = p.Child("valueFrom", "secretKeyRef", "key")
			case vf != nil && vf.ConfigMapKeyRef != nil:
				if vf.ConfigMapKeyRef.Optional != nil && *vf.ConfigMapKeyRef.Optional {
					reason += "; it comes from an optional key of ConfigMap " + vf.ConfigMapKeyRef.Name + ", unset when the key or ConfigMap is missing"
				}
				p = p.Child("valueFrom", "configMapKeyRef", "key")
			case vf == nil:
				p = p.Child("value")
			}
			r.suspectTemplate(RuleNamedInFailure, p, strengthHost, reason)
		}
	}
}

// loggedIn keeps the signals that came from container c, or that do not say which container.
func (r *ranker) loggedIn(sigs []*Signal, c containerRef) []*Signal {
	var out []*Signal
	for _, s := range sigs {
		if slices.ContainsFunc(r.containersOf(s), func(o containerRef) bool { return o.c == c.c }) {
			out = append(out, s)
		}
	}
	return out
}

// changedFields adds the fields the failing revision changed that no rule implicated, below
// every implicated field: with nothing better, a change is still the first place to look.
func (r *ranker) changedFields() {
	changes, own := r.in.Changes, false
	if len(changes) == 0 {
		changes, own = r.in.OwnChanges, true
	}
	for _, c := range changes {
		if c.Path == nil {
			continue
		}
		cs := r.pathString(c.Path)
		if fieldpath.HasPrefix(cs, r.pathString(r.tplPath)+".metadata.labels") {
			// Labels identify copies; they break selection (a rule of its own), not the copies.
			continue
		}
		if r.covers(r.in.Object, cs) {
			continue
		}
		value := c.Current
		if v, ok := fieldpath.ValueAtText(r.tplPath, r.in.Template, cs); ok {
			value = v
		}
		if own {
			// The current revision served since: its own value is the one that served.
			r.record(Finding{
				Rule: RuleChangedField, Object: r.in.Object, Path: c.Path, Value: value, PreviousValue: value,
				Reason: fmt.Sprintf("changed by revision %s (from %s) before it served; no failure names a field", r.in.CurrentRevision, QuoteValue(c.Previous)),
				Score:  scoreUnnamed,
			})
			continue
		}
		r.record(Finding{
			Rule: RuleChangedField, Object: r.in.Object, Path: c.Path, Value: value, PreviousValue: c.Previous,
			Reason: "changed in the failing revision; no failure names it", Score: scoreUnnamed,
		})
	}
}

// Clip shortens s to about n bytes for a reason, on a rune boundary.
func Clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// QuoteValue words a spec value for a reason: quoted, or "unset".
func QuoteValue(v string) string {
	if v == "" {
		return "unset"
	}
	return fmt.Sprintf("%q", v)
}

package rules

import (
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
)

// RuleEnvVarUnset is the named family's rule for a variable the program says it lacks.
const RuleEnvVarUnset RuleID = "env-var-unset"

var envVarUnsetInfo = RuleInfo{
	RuleEnvVarUnset, "The failure says a variable is not set, and the container's env does not set it",
	"a failing log line or termination message that calls a variable not set, missing, required or unbound",
	"Set the variable in the container's env (or in the ConfigMap or Secret its envFrom reads).", false,
}

// unsetAfter and unsetBefore read the words around a variable's name that say the program
// lacks it: "DATABASE_URL is not set", "API_KEY must be set", "missing required env var
// API_KEY", "KeyError: 'DATABASE_URL'" (Python's os.environ), "Could not resolve placeholder
// 'DB_HOST'" (Spring), "DB_HOST: unbound variable" (sh -u). Words elsewhere in the line say
// nothing of this variable: "missing permissions for S3_BUCKET" is not about S3_BUCKET's value.
var (
	unsetAfter = regexp.MustCompile(`^["'\x60}]?\s*(?:[:=]\s*)?(?:(?:is|was|has|has not been|have not been|env(?:ironment)? variable)\s+)?` +
		`(?:not set|not been set|unset|missing|empty|undefined|not defined|not provided|not specified|not found|required|unbound variable|` +
		`must be (?:set|defined|provided|specified|non-empty))\b`)
	unsetBefore = regexp.MustCompile(`(?:\b(?:missing|required|mandatory|undefined|unset|needs?|requires?|please set|keyerror:|placeholder)\s*` +
		`(?:(?:required|mandatory)\s+)?(?:(?:env(?:ironment)?|config(?:uration)?)\s+)?(?:(?:variables?|vars?|keys?)\s*)?[:=]?\s*["'\x60$]*\{?)$`)
)

// goesOn matches a line that says the program carries on without the variable: "SENTRY_DSN not
// set, error reporting disabled" is not why a workload fails.
var goesOn = regexp.MustCompile(`(?i)\b(?:using|defaults? to|defaulting|assuming|disabled|disabling|skipping|skipped|ignored|ignoring|optional|falling back|fallback|will retry)\b`)

// saysUnset reports whether text says the program lacks the variable name: an occurrence of the
// name as a word with those words right after or right before it, in a line that is no warning
// and does not say the program goes on without it.
func saysUnset(text, name string) bool {
	return namedUnset(text, name) && facts.ReadLine(text).Level != facts.LevelWarn && !goesOn.MatchString(text)
}

// namedUnset reports whether the name occurs as a word with words saying it is unset right
// after or right before it.
func namedUnset(text, name string) bool {
	for from := 0; ; {
		i := strings.Index(text[from:], name)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(name)
		from = end
		if start > 0 && isNameByte(text[start-1]) || end < len(text) && isNameByte(text[end]) {
			continue
		}
		if unsetAfter.MatchString(strings.ToLower(text[end:min(end+40, len(text))])) ||
			unsetBefore.MatchString(strings.ToLower(text[max(start-60, 0):start])) {
			return true
		}
	}
}

func isNameByte(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' }

// unsetVariables is the rule for a variable the program says it lacks and the container does
// not set: nothing in the template holds the name, so the general rule finds no field. The
// field is the env entry the failing revision removed, else envFrom when the container has one
// (the variable may be missing from its ConfigMap or Secret, whose data is not read), else env.
func (r *ranker) unsetVariables() {
	type unset struct {
		name string
		sigs []*Signal
	}
	var found []unset
	for _, s := range r.in.Signals {
		if s.Explained || s.Text == "" {
			continue
		}
		for _, t := range s.Tokens() {
			if t.Kind != facts.ValueEnvName || !saysUnset(s.Text, t.Text) {
				continue
			}
			k := 0
			for k < len(found) && found[k].name != t.Text {
				k++
			}
			if k == len(found) {
				found = append(found, unset{name: t.Text})
			}
			// A line may name it twice (Spring's "placeholder 'DB_HOST' in value \"${DB_HOST}\"").
			if sigs := found[k].sigs; len(sigs) == 0 || sigs[len(sigs)-1] != s {
				found[k].sigs = append(sigs, s)
			}
		}
	}
	// A program that exits for want of a variable says so last; one that runs on (live but
	// idle) may have meant something else by it.
	certain := scoreCertain
	if r.in.Shape == ShapeLiveButIdle {
		certain = scoreLikely
	}
	for _, u := range found {
		// The containers that logged it, or every one when the signals do not say.
		var in []containerRef
		for _, s := range u.sigs {
			for _, c := range r.containersOf(s) {
				if !containsContainer(in, c) && !setsVariable(c.c, u.name) {
					in = append(in, c)
				}
			}
		}
		for _, c := range in {
			r.readAll(u.sigs)
			said := "the failure says variable " + u.name + " is not set" + r.copiesOf(u.sigs) + ": " + Clip(u.sigs[0].Text, 200)
			var s Finding
			switch p, prev := r.removedVariable(c, u.name); {
			case p != nil:
				s = r.templateSuspect(RuleEnvVarUnset, p, certain, said+"; the failing revision took it out of container "+c.c.Name+"'s env (it was "+Clip(prev, 120)+")")
			case len(c.c.EnvFrom) > 0:
				s = r.templateSuspect(RuleEnvVarUnset, c.path.Child("envFrom"), scoreLikely,
					said+"; container "+c.c.Name+"'s env does not set it, and it may be missing from "+envFromSources(c.c.EnvFrom)+" (their data is not read)")
			default:
				s = r.templateSuspect(RuleEnvVarUnset, c.path.Child("env"), certain, said+"; container "+c.c.Name+envSets(c.c.Env))
			}
			s.Variable = u.name
			r.record(s)
		}
	}
}

func containsContainer(cs []containerRef, c containerRef) bool {
	for _, o := range cs {
		if o.c == c.c {
			return true
		}
	}
	return false
}

// setsVariable reports whether the container's env names the variable: its value, right or
// wrong, is then the general rule's to judge (namedVariables).
func setsVariable(c *corev1.Container, name string) bool {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return true
		}
	}
	return false
}

// removedVariable finds the change of the failing revision that took the variable out of the
// container's env: an entry whose previous value names it. It returns the change's path and
// that value, or nil.
func (r *ranker) removedVariable(c containerRef, name string) (*field.Path, string) {
	env := r.pathString(c.path.Child("env"))
	for _, ch := range r.in.Changes {
		if ch.Path == nil || !fieldpath.HasPrefix(r.pathString(ch.Path), env) {
			continue
		}
		if ch.Previous == name || strings.Contains(ch.Previous, `"name":"`+name+`"`) {
			return ch.Path, ch.Previous
		}
	}
	return nil, ""
}

// envFromSources names what envFrom reads: "ConfigMap app-config and Secret app-env".
func envFromSources(from []corev1.EnvFromSource) string {
	var names []string
	for _, f := range from {
		switch {
		case f.ConfigMapRef != nil:
			names = append(names, "ConfigMap "+f.ConfigMapRef.Name)
		case f.SecretRef != nil:
			names = append(names, "Secret "+f.SecretRef.Name)
		}
	}
	switch len(names) {
	case 0:
		return "what envFrom reads"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// envSets ends a reason with what the container's env sets instead.
func envSets(env []corev1.EnvVar) string {
	if len(env) == 0 {
		return " has no env"
	}
	names := make([]string, 0, min(len(env), 6))
	for i := range env {
		if i == 5 {
			names = append(names, "…")
			break
		}
		names = append(names, env[i].Name)
	}
	return "'s env does not set it (it sets " + strings.Join(names, ", ") + ")"
}

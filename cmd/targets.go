package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// kindPod is the one kind a user may name that is not a workload: explain and audit take a pod
// for the workload that controls it, since the pager names a pod.
const kindPod = "Pod"

// podAliases are kubectl's names of pods.
var podAliases = map[string]string{"pod": kindPod, "pods": kindPod, "po": kindPod}

// kindsHelp lists the kinds explain and audit take, for errors: every workload kind's adapter,
// and pod, which stands for its workload.
var kindsHelp = kindWords(func(*kinds.Workload) bool { return true }, "pod (po)")

// rolloutKindsHelp lists the kinds whose rollout the gate follows, for errors.
var rolloutKindsHelp = kindWords(func(k *kinds.Workload) bool { return k.Rollout }, "")

// kindWords lists, as a user types them, the workload kinds keep accepts, each with its first
// short name, in the adapters' order, and extra last.
func kindWords(keep func(*kinds.Workload) bool, extra string) string {
	var words []string
	for _, k := range kinds.Workloads {
		if !keep(k) {
			continue
		}
		w := strings.ToLower(k.Kind)
		if short := k.Short(); short != w {
			w += " (" + short + ")"
		}
		words = append(words, w)
	}
	if extra != "" {
		words = append(words, extra)
	}
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// kindOf reads a kind as kubectl users type it (any case, singular, plural, short or with its
// group): a workload kind, or Pod.
func kindOf(word string) (string, bool) {
	w := strings.ToLower(word)
	if k, ok := kinds.Lookup(w); ok {
		return k.Kind, true
	}
	k, ok := podAliases[w]
	return k, ok
}

// knownKind reports whether word names a kind explain and audit take.
func knownKind(word string) bool {
	_, ok := kindOf(word)
	return ok
}

// target is what a command's arguments ask about: every workload of Kind, or the object Kind/Name
// (a workload, or a pod that stands for the workload controlling it).
type target struct {
	Kind string
	// Name is empty for every workload of Kind.
	Name string
}

// String writes the target as kubectl writes a resource: deployment/api, or deployment.
func (t target) String() string {
	if t.Name == "" {
		return strings.ToLower(t.Kind)
	}
	return strings.ToLower(t.Kind) + "/" + t.Name
}

// parseTargets reads a command's arguments as kubectl get reads them: TYPE[,TYPE...] followed by
// NAMEs, or TYPE/NAME pairs, never the two forms mixed. No arguments is no targets: everything.
func parseTargets(args []string) ([]target, error) {
	if len(args) == 0 {
		return nil, nil
	}
	slashed := 0
	for _, a := range args {
		if strings.Contains(a, "/") {
			slashed++
		}
	}
	var out []target
	switch {
	case slashed == len(args):
		for _, a := range args {
			word, name, _ := strings.Cut(a, "/")
			kind, ok := kindOf(word)
			if !ok {
				return nil, usageErrorf("unknown workload kind %q; use %s", word, kindsHelp)
			}
			if name == "" || strings.Contains(name, "/") {
				return nil, usageErrorf("invalid workload name %q in %q", name, a)
			}
			out = append(out, target{Kind: kind, Name: name})
		}
	case slashed > 0:
		return nil, usageErrorf("arguments in TYPE/NAME form cannot follow or precede a TYPE or NAME: %s; name each as TYPE/NAME, or give one TYPE then NAMEs", strings.Join(args, " "))
	default:
		var kinds []string
		for _, word := range strings.Split(args[0], ",") {
			kind, ok := kindOf(word)
			if !ok {
				return nil, usageErrorf("unknown workload kind %q; use %s", word, kindsHelp)
			}
			if kind == kindPod && len(args) == 1 {
				return nil, usageErrorf("pods are not workloads; name one (pod/NAME) for the workload that controls it")
			}
			kinds = append(kinds, kind)
		}
		for _, kind := range kinds {
			if len(args) == 1 {
				out = append(out, target{Kind: kind})
				continue
			}
			for _, name := range args[1:] {
				out = append(out, target{Kind: kind, Name: name})
			}
		}
	}
	return dedupe(out), nil
}

// dedupe keeps the first of each target.
func dedupe(ts []target) []target {
	seen := map[target]bool{}
	out := ts[:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// named reports whether any target names one object rather than a whole kind.
func named(ts []target) bool {
	for _, t := range ts {
		if t.Name != "" {
			return true
		}
	}
	return false
}

// asksAbout reports whether the targets may pick a workload of kind: no targets, a target of
// the kind, or one named object, whose controller may be of any kind.
func asksAbout(ts []target, kind string) bool {
	if len(ts) == 0 {
		return true
	}
	for _, t := range ts {
		if t.Kind == kind || t.Name != "" {
			return true
		}
	}
	return false
}

// picked is a report narrowed to what the arguments name.
type picked struct {
	report *diagnose.Report
	// notes say which workload a named object stands for (pick's resolution notes).
	notes []string
	// unresolved are the named targets that stand for no workload, each with why, in the
	// order they were named.
	unresolved []unresolved
}

// unresolved is a named target that stands for no workload: not found (err nil), or found and
// not controlled by a workload.
type unresolved struct {
	target target
	err    error
}

// pick narrows r to the workloads targets name, in namespace ("" for every namespace of the
// source): every workload of a kind, a named workload, or the workload controlling a named pod,
// ReplicaSet or Job. The summary is counted again over what is kept. No targets keeps r.
func pick(snap *snapshot.Snapshot, r *diagnose.Report, targets []target, namespace string) picked {
	if len(targets) == 0 {
		return picked{report: r}
	}
	keep := map[*diagnose.Diagnosis]bool{}
	var p picked
	ws := indexReport(r)
	for _, t := range targets {
		if t.Name == "" {
			for i := range r.Workloads {
				if r.Workloads[i].Kind == t.Kind {
					keep[&r.Workloads[i]] = true
				}
			}
			continue
		}
		found := resolve(snap, ws, t.Kind, t.Name, namespace)
		if len(found) == 0 {
			p.unresolved = append(p.unresolved, unresolved{target: t})
		}
		for _, res := range found {
			if res.Err != nil {
				p.unresolved = append(p.unresolved, unresolved{target: t, err: res.Err})
				continue
			}
			keep[res.Diagnosis] = true
			if n := res.Note(); n != "" {
				p.notes = append(p.notes, n)
			}
		}
	}
	out := *r
	out.Workloads = nil
	out.Summary = map[diagnose.Shape]int{}
	for i := range r.Workloads {
		if d := &r.Workloads[i]; keep[d] {
			out.Workloads = append(out.Workloads, *d)
			out.Summary[d.Shape]++
		}
	}
	p.report = &out
	return p
}

// unresolvedError says which named targets stand for no workload, nil when every one does.
func (p picked) unresolvedError(namespace string) error {
	if len(p.unresolved) == 0 {
		return nil
	}
	where := "in any namespace"
	if namespace != "" {
		where = "in namespace " + namespace
	}
	msgs := make([]string, 0, len(p.unresolved))
	for _, u := range p.unresolved {
		if u.err != nil {
			msgs = append(msgs, u.err.Error())
			continue
		}
		msgs = append(msgs, fmt.Sprintf("%s not found %s", u.target, where))
	}
	return errors.New(strings.Join(msgs, "; "))
}

package redact

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Scope hides the credentials of one workload in the raw data a front end shows of it (its pod
// template, its copies' logs, events and messages), by the same rules and with the same marks
// as the pass. A nil Scope hides nothing.
type Scope struct {
	r *Redactor
	w *workload
}

// Scope returns the Scope of the workload kind/namespace/name of s; nil for a nil Redactor.
func (r *Redactor) Scope(s *snapshot.Snapshot, kind, namespace, name string) *Scope {
	if r == nil {
		return nil
	}
	ws := &workloads{s: s}
	return &Scope{r: r, w: ws.find(kind, namespace, name)}
}

// Text is s with its credentials marked: those its form shows and the workload's own.
func (sc *Scope) Text(s string) string {
	if sc == nil {
		return s
	}
	return sc.r.text(s, sc.w.known)
}

// Lines is Text over lines; the slice is copied only when a line changes.
func (sc *Scope) Lines(lines []string) []string {
	if sc == nil {
		return lines
	}
	if out := editSlice(lines, func(l *string) bool {
		t := sc.Text(*l)
		changed := t != *l
		*l = t
		return changed
	}); out != nil {
		return out
	}
	return lines
}

// Template returns t, or a copy with its credentials marked: the values of credential env vars,
// credential flags' arguments, credential probe headers (Authorization), and what the text of
// any other value, argument or probe command shows.
func (sc *Scope) Template(t *corev1.PodTemplateSpec) *corev1.PodTemplateSpec {
	if sc == nil || t == nil {
		return t
	}
	out := t.DeepCopy()
	changed := false
	set := func(p *string, v string) {
		if v != *p {
			*p, changed = v, true
		}
	}
	args := func(xs []string) {
		for i := range xs {
			if IsMark(xs[i]) {
				continue
			}
			if argCredential(xs, i) {
				set(&xs[i], sc.r.Mark(xs[i]))
			} else {
				set(&xs[i], sc.Text(xs[i]))
			}
		}
	}
	probe := func(p *corev1.Probe) {
		if p == nil {
			return
		}
		if p.Exec != nil {
			args(p.Exec.Command)
		}
		if p.HTTPGet != nil {
			for i := range p.HTTPGet.HTTPHeaders {
				h := &p.HTTPGet.HTTPHeaders[i]
				if strings.EqualFold(h.Name, "authorization") || Credential(h.Name, h.Value) {
					set(&h.Value, sc.authorization(h.Value))
				}
			}
		}
	}
	containers := func(cs []corev1.Container) {
		for i := range cs {
			c := &cs[i]
			for j := range c.Env {
				e := &c.Env[j]
				switch {
				case e.Value == "" || IsMark(e.Value):
				case Credential(e.Name, e.Value):
					set(&e.Value, sc.r.Mark(e.Value))
				default:
					set(&e.Value, sc.Text(e.Value))
				}
			}
			args(c.Command)
			args(c.Args)
			probe(c.LivenessProbe)
			probe(c.ReadinessProbe)
			probe(c.StartupProbe)
		}
	}
	containers(out.Spec.InitContainers)
	containers(out.Spec.Containers)
	if !changed {
		return t
	}
	return out
}

// authorization marks a header value's credentials, keeping its scheme (Bearer, Basic).
func (sc *Scope) authorization(v string) string {
	if v == "" || IsMark(v) {
		return v
	}
	if scheme, cred, ok := strings.Cut(v, " "); ok && isScheme(scheme) && cred != "" && !IsMark(cred) {
		return scheme + " " + sc.r.Mark(cred)
	}
	return sc.r.Mark(v)
}

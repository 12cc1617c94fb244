package diagnose

import (
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// nameElements fills Suspect.Element for each suspect of the workload's own pod template, once,
// so every front end names `env[0]` by its variable (`env LEDGER_DB_ADDR`) without reopening
// the snapshot: the audit table, the console and the markdown all read the same field.
func nameElements(w *workload, ss []Suspect) {
	if w.Template == nil || len(ss) == 0 {
		return
	}
	tp := w.TemplatePath
	if tp == nil {
		tp = specTemplate
	}
	prefix := specOf(tp).String() + "."
	for i := range ss {
		s := &ss[i]
		if s.Path == nil || s.Object != w.object() {
			continue
		}
		p := s.Path.String()
		if !strings.HasPrefix(p, prefix) {
			continue
		}
		rest := p[len(prefix):]
		s.Element = elementIn(&w.Template.Spec, rest)
		if s.Element == "" && w.PreviousTemplate != nil {
			// The failing revision took the element out: the revision that served names it.
			s.Element = elementIn(&w.PreviousTemplate.Spec, rest)
		}
	}
}

// elementIn names the list element a path inside a pod spec indexes, where the index alone
// says little: the variable of env[i], the ConfigMap or Secret of envFrom[i], the volume of
// volumes[i] and volumeMounts[i]; "" for any other path or an index past the list.
func elementIn(spec *corev1.PodSpec, rest string) string {
	list, i, rest := indexed(rest)
	switch list {
	case "volumes":
		if i < len(spec.Volumes) {
			return spec.Volumes[i].Name
		}
		return ""
	case "containers", "initContainers":
	default:
		return ""
	}
	cs := spec.Containers
	if list == "initContainers" {
		cs = spec.InitContainers
	}
	if i >= len(cs) {
		return ""
	}
	c := &cs[i]
	list, j, _ := indexed(rest)
	switch list {
	case "env":
		if j < len(c.Env) {
			return c.Env[j].Name
		}
	case "envFrom":
		if j < len(c.EnvFrom) {
			switch src := &c.EnvFrom[j]; {
			case src.ConfigMapRef != nil:
				return src.ConfigMapRef.Name
			case src.SecretRef != nil:
				return src.SecretRef.Name
			}
		}
	case "volumeMounts":
		if j < len(c.VolumeMounts) {
			return c.VolumeMounts[j].Name
		}
	}
	return ""
}

// indexed reads `name[i]` off the front of a path, and what follows its dot. An element that
// is not indexed by a number has i past the end of every list.
func indexed(p string) (name string, i int, rest string) {
	head, rest, _ := strings.Cut(p, ".")
	name, sub, ok := strings.Cut(head, "[")
	if !ok || !strings.HasSuffix(sub, "]") {
		return name, math.MaxInt, rest
	}
	n, err := strconv.Atoi(strings.TrimSuffix(sub, "]"))
	if err != nil || n < 0 {
		return name, math.MaxInt, rest
	}
	return name, n, rest
}

package report

import (
	"strings"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
)

// ShortSuspect names a diagnosis's top suspect in a few words for a table cell: `image`,
// `env INGEST_ENDPOINT`, `Service selector`, `memory limit`. It is "" when there is no suspect.
func ShortSuspect(d *diagnose.Diagnosis) string {
	if d == nil || len(d.Suspects) == 0 {
		return ""
	}
	return ShortSuspectOf(d, &d.Suspects[0])
}

// ShortSuspectOf names any one of d's suspects in a few words: the one short form of a
// suspect, which the audit table, the markdown report and the console's rows, Diagnosis tab and
// summary all print. It reads only the diagnosis: a list element is named by the
// Suspect.Element the engine wrote (`env LEDGER_DB_ADDR`), by its index only when that is
// empty (`env[0]`). The result is cleaned (see Clean).
func ShortSuspectOf(d *diagnose.Diagnosis, s *diagnose.Suspect) string {
	if d == nil || s == nil {
		return ""
	}
	return Clean(shortName(d, s))
}

// maxShortValue bounds how much of a flag's value a short name quotes; a table cell is narrow.
const maxShortValue = 32

func shortName(d *diagnose.Diagnosis, s *diagnose.Suspect) string {
	kind, name, _ := strings.Cut(s.Object, "/")
	segs := s.Steps()
	if s.Object != "" && (kind != d.Kind || name != d.Name) {
		// Another object is to blame (a Service, a quota): say which kind and which field.
		f := lastField(segs)
		if f == "" {
			return kind
		}
		return kind + " " + f
	}
	if len(segs) == 0 {
		return ""
	}
	if s.Rule == diagnose.RuleEnvVarUnset && s.Variable != "" {
		return unsetName(segs, s)
	}
	if segs[0].Name == "spec" {
		segs = segs[1:]
	}
	if len(segs) > 1 && segs[0].Name == "jobTemplate" && segs[1].Name == "spec" {
		// A CronJob's pod template is spec.jobTemplate.spec.template.
		segs = segs[2:]
	}
	if len(segs) > 0 && segs[0].Name == "template" {
		segs = segs[1:]
		if len(segs) > 0 && segs[0].Name == "spec" {
			return podSpecName(segs[1:], s.Element, s.Value)
		}
		return lastField(segs)
	}
	if len(segs) > 0 && segs[0].Name == "volumeClaimTemplates" {
		return "volumeClaimTemplate " + lastField(segs)
	}
	return lastField(segs)
}

// unsetName names an env-var-unset suspect by its variable: `env DATABASE_URL unset`, `env
// DATABASE_URL removed` (the failing revision took the entry out), `envFrom: API_KEY unset`.
func unsetName(segs []fieldpath.Segment, s *diagnose.Suspect) string {
	n := "env " + s.Variable + " unset"
	switch {
	case segs[len(segs)-1].Name == "envFrom":
		n = "envFrom: " + s.Variable + " unset"
	case s.PreviousValue != "":
		n = "env " + s.Variable + " removed"
	}
	for _, sg := range segs {
		if sg.Name == "initContainers" {
			return "init " + n
		}
	}
	return n
}

// podSpecName names a path inside a pod spec; element is the name of the list element the
// path indexes (Suspect.Element), value the suspect's current value.
func podSpecName(segs []fieldpath.Segment, element, value string) string {
	if len(segs) == 0 {
		return "pod template"
	}
	switch segs[0].Name {
	case "containers", "initContainers", "ephemeralContainers":
		n := containerFieldName(segs[1:], element, value)
		if segs[0].Name == "initContainers" {
			return "init " + n
		}
		return n
	case "volumes":
		return elementName("volume", segs[0], element)
	case "affinity":
		if len(segs) > 1 {
			switch segs[1].Name {
			case "nodeAffinity":
				return "node affinity"
			case "podAffinity":
				return "pod affinity"
			case "podAntiAffinity":
				return "pod anti-affinity"
			}
		}
		return "affinity"
	case "securityContext":
		if f := lastField(segs[1:]); f != "" {
			return f
		}
	}
	return segs[0].Name
}

// containerFieldName names a path inside one container, as podSpecName does.
func containerFieldName(segs []fieldpath.Segment, element, value string) string {
	if len(segs) == 0 {
		return "container"
	}
	switch segs[0].Name {
	case "env":
		return elementName("env", segs[0], element) + envSuffix(segs[1:])
	case "envFrom":
		src := ""
		for _, s := range segs[1:] {
			switch s.Name {
			case "configMapRef":
				src = "configMap"
			case "secretRef":
				src = "secret"
			}
		}
		return strings.Join(nonEmpty("envFrom", src, element), " ")
	case "args", "command":
		// One element of a command line reads better as the flag itself: "args -listen=:8080".
		if _, ok := segs[0].Index(); ok && value != "" {
			return segs[0].Name + " " + truncateRunes(value, maxShortValue)
		}
		return segs[0].Name
	case "resources":
		// resources.limits.memory (or limits[memory] in key notation)
		if len(segs) >= 2 {
			kind := strings.TrimSuffix(segs[1].Name, "s")
			if len(segs) >= 3 {
				key := segs[2].Name
				if key == "" {
					key = segs[2].Sub
				}
				return key + " " + kind
			}
			if segs[1].Sub != "" {
				return segs[1].Sub + " " + kind
			}
			return kind
		}
		return "resources"
	case "readinessProbe", "livenessProbe", "startupProbe":
		probe := strings.TrimSuffix(segs[0].Name, "Probe") + " probe"
		if f := lastField(segs[1:]); f != "" {
			return probe + " " + f
		}
		return probe
	case "volumeMounts":
		return elementName("volumeMount", segs[0], element)
	case "ports":
		if f := lastField(segs[1:]); f != "" {
			return f
		}
		return "ports"
	case "securityContext":
		// readOnlyRootFilesystem, runAsNonRoot: the setting says enough.
		if f := lastField(segs[1:]); f != "" {
			return f
		}
		return "securityContext"
	}
	return segs[0].Name
}

// truncateRunes cuts s to at most n runes, marking a cut with an ellipsis.
func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// envSuffix says which part of an env var's source is suspect; the value itself needs no word.
func envSuffix(segs []fieldpath.Segment) string {
	ref, field := "", ""
	for _, s := range segs {
		switch s.Name {
		case "secretKeyRef":
			ref = "secret"
		case "configMapKeyRef":
			ref = "configMap"
		case "fieldRef", "resourceFieldRef":
			ref = s.Name
		case "key":
			field = "key"
		}
	}
	switch {
	case ref == "":
		return ""
	case field == "":
		return " " + ref
	}
	return " " + ref + " " + field
}

// elementName names the list element seg indexes: "label NAME" when the engine named it, else
// the path's own "name[i]".
func elementName(label string, seg fieldpath.Segment, element string) string {
	if _, ok := seg.Index(); ok && element != "" {
		return label + " " + element
	}
	if seg.Sub == "" {
		return label
	}
	return seg.Name + "[" + seg.Sub + "]"
}

// nonEmpty is words without the empty ones.
func nonEmpty(words ...string) []string {
	out := words[:0]
	for _, w := range words {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// lastField is the last named element of a path, with its map key when it has one
// (`targetPort`, `selector`, `hard[pods]`).
func lastField(segs []fieldpath.Segment) string {
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i].Name == "" {
			continue
		}
		if segs[i].Name == "type" && i > 0 && segs[i-1].Name != "" && segs[i].Sub == "" {
			// "type" alone says nothing: strategy type, seccompProfile type.
			return segs[i-1].Name + " type"
		}
		if segs[i].Sub != "" {
			if _, isIndex := segs[i].Index(); !isIndex {
				return segs[i].Name + "[" + segs[i].Sub + "]"
			}
		}
		return segs[i].Name
	}
	return ""
}

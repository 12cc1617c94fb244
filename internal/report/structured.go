package report

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"

	"sigs.k8s.io/yaml"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// jsonPrinter writes the report schema as indented JSON.
type jsonPrinter struct{}

func (jsonPrinter) PrintReport(w io.Writer, r *diagnose.Report) error {
	return writeReportJSON(w, normalize(r))
}

// yamlPrinter writes the same document as YAML; keys come from the same JSON tags.
type yamlPrinter struct{}

func (yamlPrinter) PrintReport(w io.Writer, r *diagnose.Report) error {
	return writeReportYAML(w, normalize(r))
}

// writeJSON writes any document as the json printer writes a report: encoding/json, indented
// two spaces, every invisible character escaped.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	// Compact, then indentJSON: the Encoder's own indenting re-scans the document.
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeJSON(indentJSON(nil, buf.Bytes(), 0)))
	return err
}

// writeYAML writes v as sigs.k8s.io/yaml does, with every invisible character escaped in a
// double-quoted string.
func writeYAML(w io.Writer, v any) error {
	j, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b, err := yamlOfJSON(j)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// yamlOfJSON is JSON text as writeYAML writes it.
func yamlOfJSON(j []byte) ([]byte, error) {
	j, marked := markInvisibleJSON(j)
	b, err := yaml.JSONToYAML(j)
	if err != nil {
		return nil, err
	}
	if marked {
		b = unmarkYAML(b)
	}
	return b, nil
}

// normalize returns a copy of r whose lists and maps are empty rather than null, so consumers of
// the schema can iterate every documented key without a null check.
func normalize(r *diagnose.Report) *diagnose.Report {
	out := *r
	if out.Visibility == nil {
		out.Visibility = []snapshot.Visibility{}
	}
	if out.Summary == nil {
		out.Summary = map[diagnose.Shape]int{}
	}
	if out.SharedDependencies == nil {
		out.SharedDependencies = []diagnose.SharedDependency{}
	}
	out.Workloads = make([]diagnose.Diagnosis, len(r.Workloads))
	for i := range r.Workloads {
		out.Workloads[i] = normalizeDiagnosis(r.Workloads[i])
	}
	return &out
}

func normalizeDiagnosis(d diagnose.Diagnosis) diagnose.Diagnosis {
	if d.Suspects == nil {
		d.Suspects = []diagnose.Suspect{}
	}
	if d.Evidence == nil {
		d.Evidence = []diagnose.Evidence{}
	}
	// Copy before filling in, the evidence slice being shared with the caller's report; only
	// when something is to be filled in: a large report's evidence runs to 200,000 items.
	if slices.ContainsFunc(d.Evidence, func(e diagnose.Evidence) bool { return e.Objects == nil }) {
		ev := slices.Clone(d.Evidence)
		for i := range ev {
			if ev[i].Objects == nil {
				ev[i].Objects = []string{}
			}
		}
		d.Evidence = ev
	}
	if d.SignalGaps == nil {
		d.SignalGaps = []diagnose.SignalGap{}
	}
	if d.Revisions != nil && d.Revisions.ChangedPaths == nil {
		rev := *d.Revisions
		rev.ChangedPaths = []string{}
		d.Revisions = &rev
	}
	return d
}

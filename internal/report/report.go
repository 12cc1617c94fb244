package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Printer writes a whole report in one format.
type Printer interface {
	PrintReport(w io.Writer, r *diagnose.Report) error
}

// Formats lists the audit output formats, the first being the default.
var Formats = []string{"table", "wide", "json", "yaml", "markdown"}

// AllFormats lists every -o value of audit as help and errors write them: Formats, name and the
// template formats with their argument elided.
func AllFormats() []string {
	out := append(append([]string(nil), Formats...), FormatName)
	for _, f := range TemplateFormats {
		out = append(out, f+"=...")
	}
	return out
}

// ExplainFormats lists the output formats of one workload's explanation.
var ExplainFormats = []string{"text", "json", "yaml", "markdown"}

// TemplateFunc returns the current pod template of a workload, or nil when it is unknown. Human
// printers use it to name what a suspect path points at (the env var behind env[0]).
type TemplateFunc func(kind, namespace, name string) *corev1.PodTemplateSpec

// Options tune the human printers.
type Options struct {
	// Templates resolves pod templates for short suspect names; nil falls back to indexes.
	Templates TemplateFunc
	// NoHeaders leaves out the header row of the table and custom-columns formats.
	NoHeaders bool
	// SortBy is one of SortKeys or a JSONPath (CheckSortBy) for the row formats; "" is shape
	// (WorstFirst).
	SortBy string
	// Labels resolves workloads' labels; ShowLabels and LabelColumns add them to the table as
	// kubectl get's --show-labels and -L do.
	Labels       LabelFunc
	ShowLabels   bool
	LabelColumns []string
	// WithNamespace shows the table's NAMESPACE column even when every row shares one, so rows
	// printed a few at a time (a watch) line up with the first table.
	WithNamespace bool
}

// NewPrinter returns the printer of one of Formats.
func NewPrinter(format string, opts Options) (Printer, error) {
	switch format {
	case "table", "":
		return &tablePrinter{opts: opts}, nil
	case "wide":
		return &tablePrinter{opts: opts, wide: true}, nil
	case "json":
		return jsonPrinter{}, nil
	case "yaml":
		return yamlPrinter{}, nil
	case "markdown", "md":
		return &markdownPrinter{opts: opts}, nil
	case FormatName:
		return namePrinter{opts: opts}, nil
	}
	if name, arg, ok := strings.Cut(format, "="); ok && contains(TemplateFormats, name) {
		if name == formatCustomColumns {
			return newCustomColumnsPrinter(arg, opts)
		}
		return newTemplatePrinter(format)
	}
	return nil, fmt.Errorf("unknown output format %q; use one of %s", format, strings.Join(AllFormats(), ", "))
}

// WorstFirst returns the report's workloads ordered worst shape first, then the biggest
// serving deficit (declared minus serving), then by namespace, kind and name, so human output
// reads the same whatever order the engine produced. The console lists its rows in this order
// too.
func WorstFirst(r *diagnose.Report) []*diagnose.Diagnosis {
	out := make([]*diagnose.Diagnosis, 0, len(r.Workloads))
	for i := range r.Workloads {
		out = append(out, &r.Workloads[i])
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if sa, sb := a.Shape.Severity(), b.Shape.Severity(); sa != sb {
			return sa < sb
		}
		if da, db := a.Counts.Declared-a.Counts.Serving, b.Counts.Declared-b.Counts.Serving; da != db {
			return da > db
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Name < b.Name
	})
	return out
}

// PathText writes a field path in its usual notation; a missing path is "" (field.Path writes
// "<nil>").
func PathText(p *field.Path) string {
	if p == nil {
		return ""
	}
	return p.String()
}

// WorkloadRef is how a workload is written for people: lower-case kind/name, the form
// `kubectl-diagnose explain` accepts.
func WorkloadRef(d *diagnose.Diagnosis) string {
	return strings.ToLower(d.Kind) + "/" + d.Name
}

// severalNamespaces reports whether the workloads span more than one namespace.
func severalNamespaces(ds []*diagnose.Diagnosis) bool {
	for _, d := range ds {
		if d.Namespace != ds[0].Namespace {
			return true
		}
	}
	return false
}

// template resolves a diagnosis's pod template through opts, nil-safe.
func (o Options) template(d *diagnose.Diagnosis) *corev1.PodTemplateSpec {
	if o.Templates == nil {
		return nil
	}
	return o.Templates(d.Kind, d.Namespace, d.Name)
}

// TemplatesOf resolves pod templates from the snapshot a report was made of.
func TemplatesOf(s *snapshot.Snapshot) TemplateFunc {
	type key struct{ kind, namespace, name string }
	m := map[key]*corev1.PodTemplateSpec{}
	for _, o := range s.Deployments {
		m[key{"Deployment", o.Namespace, o.Name}] = &o.Spec.Template
	}
	for _, o := range s.StatefulSets {
		m[key{"StatefulSet", o.Namespace, o.Name}] = &o.Spec.Template
	}
	for _, o := range s.DaemonSets {
		m[key{"DaemonSet", o.Namespace, o.Name}] = &o.Spec.Template
	}
	for _, o := range s.ReplicaSets {
		m[key{"ReplicaSet", o.Namespace, o.Name}] = &o.Spec.Template
	}
	return func(kind, namespace, name string) *corev1.PodTemplateSpec {
		return m[key{kind, namespace, name}]
	}
}

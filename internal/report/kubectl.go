package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
)

// The kubectl output formats -o accepts besides Formats: name, and the template formats
// followed by "=" and their argument.
const (
	FormatName          = "name"
	formatCustomColumns = "custom-columns"
)

// TemplateFormats are the -o formats that take an argument after "=", as kubectl's do.
var TemplateFormats = []string{"jsonpath", "jsonpath-as-json", "jsonpath-file", formatCustomColumns, formatGoTemplate, formatGoTemplateFile}

// The go-template formats, as kubectl names them.
const (
	formatGoTemplate     = "go-template"
	formatGoTemplateFile = "go-template-file"
)

// SortKeys are the --sort-by orders; the first is the default.
var SortKeys = []string{"shape", "age", "restarts", "name"}

// RowFormat reports whether format prints one line per workload, so that a watch can print the
// rows that changed on their own.
func RowFormat(format string) bool {
	switch format {
	case "", "table", "wide", FormatName:
		return true
	}
	return strings.HasPrefix(format, formatCustomColumns+"=")
}

// Sorted returns the report's workloads in the order of key, one of SortKeys ("" is shape) or a
// JSONPath (sortByJSONPath): shape is WorstFirst; age puts the youngest copy first and workloads
// without copies last; restarts puts the most restarts first; name sorts by name, then
// namespace and kind. Ties keep the WorstFirst order.
func Sorted(r *diagnose.Report, key string) ([]*diagnose.Diagnosis, error) {
	ds := WorstFirst(r)
	switch key {
	case "", SortKeys[0]:
	case "age":
		sort.SliceStable(ds, func(i, j int) bool {
			a, b := ds[i].YoungestCopySeconds, ds[j].YoungestCopySeconds
			switch {
			case a == nil || b == nil:
				return a != nil && b == nil
			default:
				return *a < *b
			}
		})
	case "restarts":
		sort.SliceStable(ds, func(i, j int) bool { return ds[i].Counts.Restarts > ds[j].Counts.Restarts })
	case "name":
		sort.SliceStable(ds, func(i, j int) bool {
			a, b := ds[i], ds[j]
			if a.Name != b.Name {
				return a.Name < b.Name
			}
			if a.Namespace != b.Namespace {
				return a.Namespace < b.Namespace
			}
			return a.Kind < b.Kind
		})
	default:
		return sortByJSONPath(ds, key)
	}
	return ds, nil
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// workloadGroup is the API group and version of a workload kind the engine diagnoses.
func workloadGroup(kind string) string {
	if k := kinds.Named(kind); k != nil {
		return k.GVK.GroupVersion().String()
	}
	return "apps/v1"
}

// namePrinter writes kind.group/name per workload, as `kubectl get -o name` does, with
// cli-runtime's NamePrinter; `kubectl diagnose explain` accepts the result.
type namePrinter struct{ opts Options }

func (p namePrinter) PrintReport(w io.Writer, r *diagnose.Report) error {
	np := &printers.NamePrinter{}
	ds, err := Sorted(r, p.opts.SortBy)
	if err != nil {
		return err
	}
	for _, d := range ds {
		obj := &metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: workloadGroup(d.Kind), Kind: d.Kind},
			ObjectMeta: metav1.ObjectMeta{Namespace: Clean(d.Namespace), Name: Clean(d.Name)},
		}
		if err := np.PrintObj(obj, w); err != nil {
			return err
		}
	}
	return nil
}

// templatePrinter applies a kubectl JSONPath or Go template to the document -o json prints,
// with cli-runtime's printers: `{.workloads[*].name}` and `{{range .workloads}}{{.name}}{{end}}`
// read as they do against -o json.
type templatePrinter struct{ p printers.ResourcePrinter }

func newTemplatePrinter(format string) (Printer, error) {
	allowMissing := true // kubectl's default for -o jsonpath and -o go-template
	var p printers.ResourcePrinter
	var err error
	if strings.HasPrefix(format, formatGoTemplate) {
		flags := genericclioptions.GoTemplatePrintFlags{AllowMissingKeys: &allowMissing}
		p, err = flags.ToPrinter(format)
	} else {
		flags := genericclioptions.JSONPathPrintFlags{AllowMissingKeys: &allowMissing}
		p, err = flags.ToPrinter(format)
	}
	if err != nil {
		return nil, fmt.Errorf("-o %s: %w", format, err)
	}
	return templatePrinter{p: p}, nil
}

func (p templatePrinter) PrintReport(w io.Writer, r *diagnose.Report) error {
	doc, err := toUnstructured(normalize(r))
	if err != nil {
		return err
	}
	return p.p.PrintObj(&unstructured.Unstructured{Object: doc}, w)
}

// customColumnsPrinter writes one row per workload with the columns of a kubectl custom-columns
// spec (HEADER:.jsonpath,...), each path applied to the workload's object in -o json's
// workloads list, and prints them with cli-runtime's table printer.
type customColumnsPrinter struct {
	opts    Options
	columns []metav1.TableColumnDefinition
	paths   []*jsonpath.JSONPath
}

func newCustomColumnsPrinter(spec string, opts Options) (Printer, error) {
	if spec == "" {
		return nil, fmt.Errorf("custom-columns format specified but no custom columns given")
	}
	p := &customColumnsPrinter{opts: opts}
	for _, col := range strings.Split(spec, ",") {
		header, path, ok := strings.Cut(col, ":")
		if !ok || header == "" || path == "" {
			return nil, fmt.Errorf("unexpected custom-columns spec: %s, expected <header>:<json-path-expr>", col)
		}
		expr, err := relaxedJSONPath(path)
		if err != nil {
			return nil, err
		}
		jp := jsonpath.New(header).AllowMissingKeys(true)
		if err := jp.Parse(expr); err != nil {
			return nil, fmt.Errorf("custom-columns %s: %w", col, err)
		}
		p.columns = append(p.columns, metav1.TableColumnDefinition{Name: header, Type: "string"})
		p.paths = append(p.paths, jp)
	}
	return p, nil
}

// relaxedJSONPath accepts a path with or without braces and the leading dot, as kubectl's
// custom-columns does: "name", ".name" and "{.name}" are the same column.
func relaxedJSONPath(path string) (string, error) {
	path = strings.TrimSpace(path)
	if strings.HasPrefix(path, "{") != strings.HasSuffix(path, "}") {
		return "", fmt.Errorf("unbalanced braces in custom-columns path %q", path)
	}
	path = strings.TrimSuffix(strings.TrimPrefix(path, "{"), "}")
	if !strings.HasPrefix(path, ".") {
		path = "." + path
	}
	return "{" + path + "}", nil
}

func (p *customColumnsPrinter) PrintReport(w io.Writer, r *diagnose.Report) error {
	rows, err := p.rows(r)
	if err != nil {
		return err
	}
	table := &metav1.Table{ColumnDefinitions: p.columns, Rows: rows}
	return printers.NewTablePrinter(printers.PrintOptions{NoHeaders: p.opts.NoHeaders}).PrintObj(table, w)
}

// rows are the table rows of one report's workloads, in the --sort-by order.
func (p *customColumnsPrinter) rows(r *diagnose.Report) ([]metav1.TableRow, error) {
	var rows []metav1.TableRow
	ds, err := Sorted(r, p.opts.SortBy)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		obj, err := toUnstructured(normalizeDiagnosis(*d))
		if err != nil {
			return nil, err
		}
		cells := make([]any, len(p.paths))
		for i, jp := range p.paths {
			// A path that parsed can still fail on one workload's data (suspects[0] of a healthy
			// workload has no element): that cell is missing, like a missing key, rather than
			// the end of the table.
			values, _ := jp.FindResults(obj)
			var parts []string
			for _, vs := range values {
				for _, v := range vs {
					parts = append(parts, Clean(valueText(v)))
				}
			}
			if len(parts) == 0 {
				parts = []string{"<none>"}
			}
			cells[i] = strings.Join(parts, ",")
		}
		rows = append(rows, metav1.TableRow{Cells: cells})
	}
	return rows, nil
}

// valueText writes one JSONPath result as kubectl's custom-columns does (%v), except that
// objects and lists are written as JSON rather than Go's map syntax.
func valueText(v reflect.Value) string {
	x := v.Interface()
	switch x.(type) {
	case map[string]any, []any:
		var b bytes.Buffer
		if err := json.NewEncoder(&b).Encode(x); err == nil {
			return strings.TrimSpace(b.String())
		}
	}
	return fmt.Sprintf("%v", x)
}

// toUnstructured turns a value into the generic JSON form JSONPath walks.
func toUnstructured(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

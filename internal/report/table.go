package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// none fills a cell that has nothing to say.
const none = "-"

// tablePrinter writes one row per workload, worst first; wide adds the full suspect path and
// the suggested fix.
type tablePrinter struct {
	opts Options
	wide bool
}

func (p *tablePrinter) PrintReport(w io.Writer, r *diagnose.Report) error {
	return p.print(w, []Section{{Report: r, Labels: p.opts.Labels}}, false)
}

// PrintFleet writes one table for every context: a leading CONTEXT column, the rows of each
// context together in the order of the sections, each context's sorted as one report's.
func (p *tablePrinter) PrintFleet(w io.Writer, secs []Section) error {
	return p.print(w, secs, true)
}

func (p *tablePrinter) print(w io.Writer, secs []Section, withContext bool) error {
	type sectionRows struct {
		sec Section
		ds  []*diagnose.Diagnosis
	}
	all := make([]sectionRows, 0, len(secs))
	var flat []*diagnose.Diagnosis
	for _, sec := range secs {
		ds, err := Sorted(sec.Report, p.opts.SortBy)
		if err != nil {
			return err
		}
		all = append(all, sectionRows{sec, ds})
		flat = append(flat, ds...)
	}
	withNS := p.opts.WithNamespace || severalNamespaces(flat)
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	rows := &errWriter{w: tw}
	var cols []string
	if withContext {
		cols = append(cols, "CONTEXT")
	}
	cols = append(cols, "SHAPE")
	if withNS {
		cols = append(cols, "NAMESPACE")
	}
	cols = append(cols, "WORKLOAD", "COPIES", "SERVING", "YOUNGEST", "RESTARTS", "SUSPECT", "CAUSE")
	if p.wide {
		cols = append(cols, "PATH", "FIX")
	}
	cols = append(cols, p.opts.labelHeaders()...)
	if !p.opts.NoHeaders {
		rows.printf("%s\n", strings.Join(cols, "\t"))
	}
	for _, sr := range all {
		for _, d := range sr.ds {
			var row []string
			if withContext {
				row = append(row, sr.sec.Context)
			}
			row = append(row, ShapeCell(d))
			if withNS {
				row = append(row, d.Namespace)
			}
			row = append(row,
				WorkloadRef(d),
				fmt.Sprintf("%d/%d", d.Counts.Existing, d.Counts.Declared),
				fmt.Sprint(d.Counts.Serving),
				Age(d.YoungestCopySeconds),
				fmt.Sprint(d.Counts.Restarts),
				orNone(ShortSuspect(d)),
				CauseLabel(d),
			)
			if p.wide {
				row = append(row, orNone(SuspectRef(d)), orNone(d.Fix))
			}
			row = append(row, p.opts.labelCells(sr.sec.Labels, d)...)
			for i := range row {
				row[i] = Clean(row[i])
			}
			rows.printf("%s\n", strings.Join(row, "\t"))
		}
	}
	if err := flushTable(tw, rows); err != nil {
		return err
	}
	if p.opts.NoHeaders {
		// Rows only: what a script reads line by line.
		return nil
	}
	out := &errWriter{w: w}
	first := true
	for _, sr := range all {
		if sr.sec.Report == nil {
			continue
		}
		for _, sd := range sr.sec.Report.SharedDependencies {
			if first {
				out.printf("\n")
				first = false
			}
			prefix := ""
			if withContext {
				prefix = sr.sec.Context + ": "
			}
			out.printf("%s\n", Clean(prefix+SharedDependencyLine(&sd, withNS)))
		}
	}
	return out.err
}

// SharedDependencyLine says a shared dependency in one line: "shared dependency mysql:3306
// (Service/mysql): 3 workloads fail reaching it at once, victims not causes: Deployment/cart,
// ...", or "shared dependency registry harbor.example: 2 workloads cannot pull their images from
// it at once, ..." for a registry. withNS names each workload's namespace.
func SharedDependencyLine(sd *diagnose.SharedDependency, withNS bool) string {
	what := sd.Target
	switch {
	case sd.Object != "" && withNS:
		what += " (" + sd.Object + " in " + sd.Namespace + ")"
	case sd.Object != "":
		what += " (" + sd.Object + ")"
	}
	names := make([]string, len(sd.Workloads))
	for i, n := range sd.Workloads {
		kind, rest, _ := strings.Cut(n, "/")
		if _, name, ok := strings.Cut(rest, "/"); ok && !withNS {
			n = kind + "/" + name
		}
		names[i] = n
	}
	verb := "fail reaching it"
	if sd.Pull {
		what, verb = "registry "+what, "cannot pull their images from it"
	}
	return fmt.Sprintf("shared dependency %s: %d workloads %s at once, victims not causes: %s",
		what, len(sd.Workloads), verb, strings.Join(names, ", "))
}

// Age renders copy-age seconds the way kubectl renders ages (20m, 4h12m, 3d); "-" when there
// is no copy.
func Age(seconds *int64) string {
	if seconds == nil {
		return none
	}
	return duration.HumanDuration(time.Duration(*seconds) * time.Second)
}

// CopyAge is a copy's age as kubectl prints a pod's: <unknown> without a creation time,
// <invalid> for one after the reference time (duration.HumanDuration's word for a negative age).
func CopyAge(seconds *int64) string {
	if seconds == nil {
		return "<unknown>"
	}
	return Age(seconds)
}

// CauseLabel is the cause for a table cell: a workload that is not broken has nothing to
// attribute, so its "unknown" cause reads as "-".
func CauseLabel(d *diagnose.Diagnosis) string {
	if !d.Shape.Broken() && (d.Cause == diagnose.CauseUnknown || d.Cause == "") {
		return none
	}
	return orNone(string(d.Cause))
}

// SuspectRef is the top suspect as object and full path, the object omitted when it is the
// workload itself: `spec.template.spec.containers[0].image`, `Service/api-gateway spec.selector`.
func SuspectRef(d *diagnose.Diagnosis) string {
	if len(d.Suspects) == 0 {
		return ""
	}
	return suspectRef(d, &d.Suspects[0])
}

func suspectRef(d *diagnose.Diagnosis, s *diagnose.Suspect) string {
	path := PathText(s.Path)
	if s.Object == "" || s.Object == d.Kind+"/"+d.Name {
		return path
	}
	if path == "" {
		return s.Object
	}
	return s.Object + " " + path
}

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}

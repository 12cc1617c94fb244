package cmd

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// failOnBroken is the --fail-on word for the three failure shapes.
const failOnBroken = "broken"

// AuditOptions are the options of `kubectl-diagnose audit`.
type AuditOptions struct {
	genericiooptions.IOStreams
	Source *SourceOptions

	// Output is -o: one of report.Formats.
	Output string
	// FailOnRaw is --fail-on as typed; FailOn is the set of shapes it names.
	FailOnRaw []string
	FailOn    map[diagnose.Shape]bool
	// LabelSelector (-l) and FieldSelector (--field-selector) pick workloads, as kubectl get's do;
	// Complete parses them into Source.Selector.
	LabelSelector, FieldSelector string
	// Watch (-w) prints the table, then the rows that change, until interrupted.
	Watch bool
	// NoHeaders leaves out the header row.
	NoHeaders bool
	// SortBy orders the rows: one of report.SortKeys, or a JSONPath into each workload.
	SortBy string
	// ShowLabels (--show-labels) and LabelColumns (-L) add the workloads' labels to the table.
	ShowLabels   bool
	LabelColumns []string
	// Targets are the TYPE[/NAME] arguments: the workloads to print; none prints every one.
	Targets []target
	// command is the command as the user typed it, for hints ("kubectl diagnose").
	command string

	// open opens the source; tests replace it.
	open func() (*openedSource, error)
	// openContext opens one context of a fleet, nil for the source's own (runFleet); now dates a
	// context that could not be read. Tests replace them.
	openContext func(name string) (*openedSource, error)
	now         func() time.Time
}

// NewCmdAudit returns the audit command. runF, when set, replaces Run so tests can see what
// argv parsed to.
func NewCmdAudit(streams genericiooptions.IOStreams, source *SourceOptions, runF func(*AuditOptions) error) *cobra.Command {
	o := &AuditOptions{IOStreams: streams, Source: source}
	cmd := &cobra.Command{
		Use:   "audit [TYPE[,TYPE...] [NAME...] | TYPE/NAME...] [--dump PATH] [-n NAMESPACE | -A] [-l SELECTOR] [-o FORMAT] [-w] [--fail-on SHAPES]",
		Short: "Print the diagnosis of every workload, worst first",
		Long: `Print one row per workload, worst first: its shape (what its copies actually do), the copies
existing and declared, how many serve, the youngest copy, restarts, the spec field most likely
responsible and whether the fault is in the spec or in something it depends on.

Shapes: never-starts, starts-and-dies, live-but-idle, unknown, progressing, no-eligible-nodes,
suspended, healthy. no-eligible-nodes (a DaemonSet waiting for a node pool not there yet) and
suspended (spec.suspend) are intended states, not failures: --fail-on broken leaves them out.

A workload annotated kubediagnose.dev/waive: "SHAPE-OR-RULE; REASON" keeps its verdict, is
marked waived (SHAPE reads never-starts,waived) and is not counted by --fail-on.

Arguments pick workloads as kubectl get's do: a TYPE (deploy, sts, ds, rs, job, cj, or several
joined by commas) with or without NAMEs, or TYPE/NAME pairs. A pod/NAME stands for the workload
that controls it, as does a ReplicaSet a Deployment owns or a Job a CronJob owns; stderr says
so. A name not found is an error after the rows that were.`,
		Example: `  # Audit the namespace of the current context
  kubectl diagnose audit

  # Audit a saved dump, as JSON, failing a CI job when anything is broken
  kubectl diagnose audit --dump ./incident -o json --fail-on broken

  # Audit what kubectl prints
  kubectl get deploy,rs,pods,events,svc -o json | kubectl diagnose audit --dump -

  # The workloads labelled tier=web, by restarts, and follow them as they change
  kubectl diagnose audit -l tier=web --sort-by restarts -w

  # Deployments only; two of them; the workload behind the pod the pager named
  kubectl diagnose audit deploy
  kubectl diagnose audit deploy/api deploy/web
  kubectl diagnose audit pod/api-6d4b9c7f5-x2x8q

  # Sorted by a field of -o json's workloads, with a column per label, as kubectl get does
  kubectl diagnose audit --sort-by .counts.serving -L app.kubernetes.io/version

  # Three clusters in parallel, one section each; exit 3 if any of them has a broken workload
  kubectl diagnose audit --context prod-eu,prod-us,staging --fail-on broken

  # Names only, for a script; or the columns you choose
  kubectl diagnose audit -A -o name --fail-on broken
  kubectl diagnose audit -o custom-columns=NAME:.name,SHAPE:.shape,SUSPECT:.suspects[0].path`,
		RunE: func(c *cobra.Command, args []string) error {
			o.command = c.Root().DisplayName()
			targets, err := parseTargets(args)
			if err != nil {
				return err
			}
			o.Targets = targets
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return o.Run(c)
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", "Output format: "+strings.Join(report.AllFormats(), "|")+". jsonpath applies to the document -o json prints; custom-columns paths to each of its workloads.")
	cmd.Flags().StringSliceVar(&o.FailOnRaw, "fail-on", nil, "Exit 3 when a workload has one of these shapes (comma-separated; 'broken' = never-starts,starts-and-dies,live-but-idle). A waived workload never counts. With --watch, exit the moment one does.")
	cmd.Flags().StringVarP(&o.LabelSelector, "selector", "l", "", "Label selector of the workloads to audit (e.g. -l 'tier=web,env!=dev'); sent to the API server, applied alike to a dump. A Deployment's ReplicaSets follow it.")
	cmd.Flags().StringVar(&o.FieldSelector, "field-selector", "", "Field selector of the workloads to audit: metadata.name and metadata.namespace, as the API server supports for them (e.g. --field-selector metadata.name=api).")
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "After the table, print the rows whose shape, counts, suspect or cause change, until interrupted (live clusters; table, wide, name and custom-columns).")
	cmd.Flags().BoolVar(&o.NoHeaders, "no-headers", false, "Leave out the header row (table, wide, custom-columns).")
	o.Source.AddFleetFlags(cmd.Flags())
	o.Source.addShowSecretsFlag(cmd.Flags())
	cmd.Flags().StringVar(&o.SortBy, "sort-by", report.SortKeys[0], "Order of the rows: "+strings.Join(report.SortKeys, "|")+" (worst first; youngest copy first; most restarts first; by name), or a JSONPath into each of -o json's workloads, as kubectl's (e.g. '{.counts.serving}').")
	cmd.Flags().BoolVar(&o.ShowLabels, "show-labels", false, "Add a LABELS column with each workload's labels (table and wide).")
	cmd.Flags().StringSliceVarP(&o.LabelColumns, "label-columns", "L", nil, "Add a column per label key, holding each workload's value of it (comma-separated or repeated; table and wide).")
	o.Source.AddDemoFlag(cmd.Flags(), "Audit a built-in demo (namespace telemetry); no cluster needed.")
	return cmd
}

// Complete parses the shared flags and --fail-on.
func (o *AuditOptions) Complete() error {
	if err := o.Source.Complete(); err != nil {
		return err
	}
	fo, err := parseFailOn(o.FailOnRaw)
	if err != nil {
		return err
	}
	o.FailOn = fo
	sel, err := snapshot.ParseSelector(o.LabelSelector, o.FieldSelector)
	if err != nil {
		return &UsageError{Err: err}
	}
	o.Source.Selector = sel
	if o.open == nil {
		o.open = o.Source.open
	}
	if o.now == nil {
		o.now = time.Now
	}
	return nil
}

// Validate rejects bad flag values before anything is read.
func (o *AuditOptions) Validate() error {
	if _, err := report.NewPrinter(o.Output, o.printOptions(nil)); err != nil {
		return &UsageError{Err: err}
	}
	if err := report.CheckSortBy(o.SortBy); err != nil {
		return &UsageError{Err: err}
	}
	if o.Source.Fleet.On() {
		if o.Watch {
			return usageErrorf("--watch follows one context; with several contexts run one watch per context")
		}
		if !report.FleetFormat(o.Output) {
			return usageErrorf("-o %s cannot say which context a workload is in; with several contexts use -o custom-columns=..., json or yaml", o.Output)
		}
	}
	if o.Watch {
		if o.Source.DumpPath != "" {
			return usageErrorf("--watch follows a live cluster; a dump does not change")
		}
		if !report.RowFormat(o.Output) {
			return usageErrorf("--watch prints rows: use -o table, wide, name or custom-columns=..., not %s", o.Output)
		}
	}
	return o.Source.Validate()
}

// Run reads the source, diagnoses it and prints the report; with --fail-on it returns a
// *FailOnError after printing when a workload matches.
func (o *AuditOptions) Run(c *cobra.Command) error {
	if o.Source.Fleet.On() {
		return o.runFleet(c.Context())
	}
	src, err := o.open()
	if err != nil {
		return err
	}
	src.progressOut = progressTo(o.ErrOut)
	snap, r, err := src.diagnose(c.Context())
	if err != nil {
		return err
	}
	ns := src.namespaceLabel(o.Source)
	p := pick(snap, r, o.Targets, ns)
	if err := o.printNotes("", p.notes); err != nil {
		return err
	}
	if o.Watch {
		if err := p.unresolvedError(ns); err != nil {
			return err
		}
		return o.watch(c.Context(), src, snap, p.report)
	}
	if err := o.print(snap, p.report, ns); err != nil {
		return err
	}
	return p.unresolvedError(ns)
}

// printNotes writes, before the report, which workload each named object stands for; prefix
// names the context of a fleet.
func (o *AuditOptions) printNotes(prefix string, notes []string) error {
	for _, n := range notes {
		if _, err := fmt.Fprintf(o.ErrOut, "%s%s\n", prefix, n); err != nil {
			return fmt.Errorf("write notice: %w", err)
		}
	}
	return nil
}

// printOptions are the printers' options from the flags; snap, when set, resolves templates and
// labels.
func (o *AuditOptions) printOptions(snap *snapshot.Snapshot) report.Options {
	opts := report.Options{
		NoHeaders: o.NoHeaders, SortBy: o.SortBy, ShowLabels: o.ShowLabels, LabelColumns: o.LabelColumns,
		// As kubectl get -A: every namespace asked for, so every row says which.
		WithNamespace: o.Source.AllNamespaces,
	}
	if snap != nil {
		if o.ShowLabels || len(o.LabelColumns) > 0 {
			opts.Labels = report.LabelsOf(snap)
		}
	}
	return opts
}

func (o *AuditOptions) print(snap *snapshot.Snapshot, r *diagnose.Report, namespace string) error {
	if err := warnVisibility(o.ErrOut, r.Visibility); err != nil {
		return err
	}
	if len(r.Workloads) == 0 && report.RowFormat(o.Output) {
		if named(o.Targets) {
			// Named workloads that are not there: the error that follows says which.
			return nil
		}
		// Like kubectl: nothing to list is a notice, not data.
		if _, err := fmt.Fprintln(o.ErrOut, noWorkloadsNotice(namespace)); err != nil {
			return fmt.Errorf("write notice: %w", err)
		}
		return failOnUnseen(r.Visibility, o.FailOn, o.Targets)
	}
	p, err := report.NewPrinter(o.Output, o.printOptions(snap))
	if err != nil {
		return err
	}
	if err := p.PrintReport(o.Out, r); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := failOn(r, o.FailOn); err != nil {
		return err
	}
	return failOnUnseen(r.Visibility, o.FailOn, o.Targets)
}

// failOnUnseen refuses to pass --fail-on when a workload kind could not be listed: a workload
// the tool did not see may have the shape asked about. Arguments that name kinds alone (audit
// deploy) leave the other kinds out of it.
func failOnUnseen(vis []snapshot.Visibility, shapes map[diagnose.Shape]bool, targets []target) error {
	if len(shapes) == 0 {
		return nil
	}
	var unseen []string
	for _, v := range vis {
		if !isWorkloadKind(v.Kind) || !asksAbout(targets, v.Kind) {
			continue
		}
		where := v.Kind + "s"
		if v.Namespace != "" {
			where += " in namespace " + v.Namespace
		}
		unseen = append(unseen, report.Clean(where))
	}
	if len(unseen) == 0 {
		return nil
	}
	return fmt.Errorf("--fail-on cannot pass: could not list %s (see the warnings above)", strings.Join(unseen, ", "))
}

// isWorkloadKind reports whether kind is one a diagnosis is about, one explain accepts.
func isWorkloadKind(kind string) bool { return kinds.Named(kind) != nil }

// parseFailOn turns the --fail-on words into shapes.
func parseFailOn(raw []string) (map[diagnose.Shape]bool, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	out := map[diagnose.Shape]bool{}
	for _, w := range raw {
		w = strings.TrimSpace(strings.ToLower(w))
		switch {
		case w == failOnBroken:
			for _, s := range diagnose.Shapes {
				if s.Broken() {
					out[s] = true
				}
			}
		case slices.Contains(diagnose.Shapes, diagnose.Shape(w)):
			out[diagnose.Shape(w)] = true
		default:
			names := make([]string, 0, len(diagnose.Shapes)+1)
			for _, s := range diagnose.Shapes {
				names = append(names, string(s))
			}
			return nil, usageErrorf("unknown shape %q in --fail-on; use %s or %s", w, strings.Join(names, ", "), failOnBroken)
		}
	}
	return out, nil
}

// failOn returns a *FailOnError when a workload has one of the shapes; a waived workload
// (its kubediagnose.dev/waive annotation names its verdict) is shown marked and not counted.
func failOn(r *diagnose.Report, shapes map[diagnose.Shape]bool) error {
	matched := map[diagnose.Shape]int{}
	for i := range r.Workloads {
		if s := r.Workloads[i].Shape; shapes[s] && r.Workloads[i].Waived == nil {
			matched[s]++
		}
	}
	if len(matched) == 0 {
		return nil
	}
	return &FailOnError{Matched: matched}
}

// warnVisibility tells the reader what the source could not see, so a partial report is never
// presented as complete.
func warnVisibility(w io.Writer, vis []snapshot.Visibility) error {
	return warnVisibilityIn(w, "", vis)
}

// warnVisibilityIn is warnVisibility with a prefix after "warning: ", such as "context b: ".
func warnVisibilityIn(w io.Writer, prefix string, vis []snapshot.Visibility) error {
	for _, v := range vis {
		if v.Kind == "" {
			// A note on the source as a whole, such as a dump of mixed moments.
			if _, err := fmt.Fprintf(w, "warning: %s%s\n", prefix, report.Clean(v.Reason)); err != nil {
				return fmt.Errorf("write warning: %w", err)
			}
			continue
		}
		where := v.Kind
		if v.Namespace != "" {
			where += " in namespace " + v.Namespace
		}
		if _, err := fmt.Fprintf(w, "warning: %scould not read %s: %s\n", prefix, report.Clean(where), report.Clean(v.Reason)); err != nil {
			return fmt.Errorf("write warning: %w", err)
		}
	}
	return nil
}

func noWorkloadsNotice(namespace string) string {
	if namespace != "" {
		return fmt.Sprintf("No workloads found in namespace %s.", namespace)
	}
	return "No workloads found."
}

// noArgs rejects positional arguments as a usage error.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%q takes no arguments, got %q", c.CommandPath(), args)
	}
	return nil
}

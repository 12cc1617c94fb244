package cmd

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
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
}

// NewCmdAudit returns the audit command. runF, when set, replaces Run so tests can see what
// argv parsed to.
func NewCmdAudit(streams genericiooptions.IOStreams, source *SourceOptions, runF func(*AuditOptions) error) *cobra.Command {
	o := &AuditOptions{IOStreams: streams, Source: source}
	cmd := &cobra.Command{
		Use:   "audit [--dump PATH] [-n NAMESPACE | -A] [-o FORMAT] [--fail-on SHAPES]",
		Short: "Print the diagnosis of every workload, worst first",
		Long: `Print one row per workload, worst first: its shape (what its copies actually do), the copies
existing and declared, how many serve, the youngest copy, restarts, the spec field most likely
responsible and whether the fault is in the spec or in something it depends on.

Shapes: never-starts, starts-and-dies, live-but-idle, unknown, progressing, healthy.`,
		Example: `  # Audit the namespace of the current context
  kubectl diagnose audit

  # Audit a saved dump, as JSON, failing a CI job when anything is broken
  kubectl diagnose audit --dump ./incident -o json --fail-on broken

  # Audit what kubectl prints
  kubectl get deploy,rs,pods,events,svc -o json | kubectl diagnose audit --dump -`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
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
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", "Output format: "+strings.Join(report.Formats, "|")+".")
	cmd.Flags().StringSliceVar(&o.FailOnRaw, "fail-on", nil, "Exit 3 when a workload has one of these shapes (comma-separated; 'broken' = never-starts,starts-and-dies,live-but-idle).")
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
	return nil
}

// Validate rejects bad flag values before anything is read.
func (o *AuditOptions) Validate() error {
	if !slices.Contains(report.Formats, o.Output) {
		return usageErrorf("unknown output format %q; use one of %s", o.Output, strings.Join(report.Formats, ", "))
	}
	return o.Source.Validate()
}

// Run reads the source, diagnoses it and prints the report; with --fail-on it returns a
// *FailOnError after printing when a workload matches.
func (o *AuditOptions) Run(c *cobra.Command) error {
	src, err := o.Source.open()
	if err != nil {
		return err
	}
	src.progressOut = progressTo(o.ErrOut)
	snap, r, err := src.diagnose(c.Context())
	if err != nil {
		return err
	}
	return o.print(snap, r, src.namespaceLabel(o.Source))
}

func (o *AuditOptions) print(snap *snapshot.Snapshot, r *diagnose.Report, namespace string) error {
	if err := warnVisibility(o.ErrOut, r.Visibility); err != nil {
		return err
	}
	if len(r.Workloads) == 0 && (o.Output == "table" || o.Output == "wide") {
		// Like kubectl: nothing to list is a notice, not data.
		if _, err := fmt.Fprintln(o.ErrOut, noWorkloadsNotice(namespace)); err != nil {
			return fmt.Errorf("write notice: %w", err)
		}
		return failOnUnseen(r.Visibility, o.FailOn)
	}
	p, err := report.NewPrinter(o.Output, report.Options{Templates: report.TemplatesOf(snap)})
	if err != nil {
		return err
	}
	if err := p.PrintReport(o.Out, r); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := failOn(r, o.FailOn); err != nil {
		return err
	}
	return failOnUnseen(r.Visibility, o.FailOn)
}

// failOnUnseen refuses to pass --fail-on when a workload kind could not be listed: a workload
// the tool did not see may have the shape asked about.
func failOnUnseen(vis []snapshot.Visibility, shapes map[diagnose.Shape]bool) error {
	if len(shapes) == 0 {
		return nil
	}
	var unseen []string
	for _, v := range vis {
		if !isWorkloadKind(v.Kind) {
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
func isWorkloadKind(kind string) bool {
	for _, k := range kindAliases {
		if k == kind {
			return true
		}
	}
	return false
}

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

// failOn returns a *FailOnError when a workload has one of the shapes.
func failOn(r *diagnose.Report, shapes map[diagnose.Shape]bool) error {
	matched := map[diagnose.Shape]int{}
	for i := range r.Workloads {
		if s := r.Workloads[i].Shape; shapes[s] {
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
	for _, v := range vis {
		if v.Kind == "" {
			// A note on the source as a whole, such as a dump of mixed moments.
			if _, err := fmt.Fprintf(w, "warning: %s\n", report.Clean(v.Reason)); err != nil {
				return fmt.Errorf("write warning: %w", err)
			}
			continue
		}
		where := v.Kind
		if v.Namespace != "" {
			where += " in namespace " + v.Namespace
		}
		if _, err := fmt.Fprintf(w, "warning: could not read %s: %s\n", report.Clean(where), report.Clean(v.Reason)); err != nil {
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

package cmd

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// ExplainOptions are the options of `kubectl-diagnose explain`.
type ExplainOptions struct {
	genericiooptions.IOStreams
	Source *SourceOptions

	// Kind is the canonical kind (a workload kind, or Pod for the workload that controls the
	// pod) and Name its name, from KIND/NAME.
	Kind, Name string
	// Output is -o: one of report.ExplainFormats.
	Output string
	// command is the command as the user typed it, for hints ("kubectl diagnose").
	command string
}

// NewCmdExplain returns the explain command; runF, when set, replaces Run.
func NewCmdExplain(streams genericiooptions.IOStreams, source *SourceOptions, runF func(*ExplainOptions) error) *cobra.Command {
	o := &ExplainOptions{IOStreams: streams, Source: source}
	cmd := &cobra.Command{
		Use:   "explain KIND/NAME",
		Short: "Explain one workload in full: counts, evidence, ranked suspects, revision diff, fix",
		Long: `Explain one workload in full: its counts, the evidence behind its shape, the ranked suspect
spec fields with their current and previous values, what changed since it last served, the
signal gaps in its spec and a suggested next step.

KIND is deployment (deploy), statefulset (sts), daemonset (ds), replicaset (rs), job or
cronjob (cj), or pod (po): a pod, a ReplicaSet a Deployment owns or a Job a CronJob owns is
taken for the workload that controls it, which stderr names.`,
		Example: `  kubectl diagnose explain deploy/telemetry-ingester -n telemetry
  kubectl diagnose explain sts/search-indexer --dump ./incident -o yaml

  # The pod the pager named: its Deployment, StatefulSet, DaemonSet, Job or CronJob
  kubectl diagnose explain pod/telemetry-ingester-6d4b9c7f5-x2x8q -n telemetry

  # For the incident ticket
  kubectl diagnose explain deploy/telemetry-ingester -n telemetry -o markdown`,
		RunE: func(c *cobra.Command, args []string) error {
			o.command = c.Root().DisplayName()
			if err := o.Complete(args); err != nil {
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
	cmd.Flags().StringVarP(&o.Output, "output", "o", "text", "Output format: "+strings.Join(report.ExplainFormats, "|")+".")
	o.Source.addShowSecretsFlag(cmd.Flags())
	o.Source.AddDemoFlag(cmd.Flags(), "Explain a workload of a built-in demo (namespace telemetry); no cluster needed.")
	return cmd
}

// Complete parses KIND/NAME (or KIND NAME) and the shared flags.
func (o *ExplainOptions) Complete(args []string) error {
	kind, name, err := workloadArgs("explain", args)
	if err != nil {
		return err
	}
	canonical, ok := kindOf(kind)
	if !ok {
		return usageErrorf("unknown workload kind %q; use %s", kind, kindsHelp)
	}
	o.Kind, o.Name = canonical, name
	return o.Source.Complete()
}

// workloadArgs reads the one workload a command takes, as KIND/NAME or KIND NAME, the way
// kubectl reads it.
func workloadArgs(verb string, args []string) (kind, name string, err error) {
	switch len(args) {
	case 1:
		var ok bool
		if kind, name, ok = strings.Cut(args[0], "/"); !ok {
			return "", "", usageErrorf("want KIND/NAME, e.g. deploy/%s", args[0])
		}
	case 2:
		if strings.Contains(args[0], "/") || strings.Contains(args[1], "/") {
			return "", "", usageErrorf("%s takes one workload, got %d: %s", verb, len(args), strings.Join(args, " "))
		}
		kind, name = args[0], args[1]
	default:
		return "", "", usageErrorf("%s takes one workload as KIND/NAME, e.g. deploy/telemetry-ingester", verb)
	}
	if name == "" || strings.Contains(name, "/") {
		return "", "", usageErrorf("invalid workload name %q", name)
	}
	return kind, name, nil
}

// Validate rejects bad flag values.
func (o *ExplainOptions) Validate() error {
	if !slices.Contains(report.ExplainFormats, o.Output) {
		return usageErrorf("unknown output format %q; use one of %s", o.Output, strings.Join(report.ExplainFormats, ", "))
	}
	if err := o.Source.oneContext("explain"); err != nil {
		return err
	}
	return o.Source.Validate()
}

// Run reads the source, diagnoses it and prints the one workload, the one controlling the
// object named when that is not a workload.
func (o *ExplainOptions) Run(c *cobra.Command) error {
	src, err := o.Source.open()
	if err != nil {
		return err
	}
	src.progressOut = progressTo(o.ErrOut)
	snap, r, err := src.diagnose(c.Context())
	if err != nil {
		return err
	}
	res, err := o.find(snap, r, src.namespaceLabel(o.Source))
	if err != nil {
		return err
	}
	if err := warnVisibility(o.ErrOut, r.Visibility); err != nil {
		return err
	}
	if note := res.Note(); note != "" {
		if _, err := fmt.Fprintf(o.ErrOut, "%s; explaining %s\n", note, report.WorkloadRef(res.Diagnosis)); err != nil {
			return fmt.Errorf("write notice: %w", err)
		}
	}
	return report.PrintDiagnosis(o.Out, res.Diagnosis, o.Output)
}

// find picks the workload out of the report: the one named, or the one controlling the object
// named. Without -n a dump is searched in every namespace; a name found in several is ambiguous.
func (o *ExplainOptions) find(snap *snapshot.Snapshot, r *diagnose.Report, namespace string) (resolution, error) {
	ref := refOf(o.Kind, o.Name)
	found := resolve(snap, indexReport(r), o.Kind, o.Name, namespace)
	switch len(found) {
	case 1:
		return found[0], found[0].Err
	case 0:
		var otherKinds []string
		for i := range r.Workloads {
			d := &r.Workloads[i]
			if d.Name == o.Name && d.Kind != o.Kind && (namespace == "" || d.Namespace == namespace) {
				otherKinds = append(otherKinds, report.WorkloadRef(d))
			}
		}
		where := "in any namespace"
		if namespace != "" {
			where = "in namespace " + namespace
		}
		msg := fmt.Sprintf("%s not found %s", ref, where)
		if len(otherKinds) > 0 {
			sort.Strings(otherKinds)
			msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(slices.Compact(otherKinds), ", "))
		}
		return resolution{}, fmt.Errorf("%s; list the workloads with: %s", msg, o.auditHint(namespace))
	}
	var nss []string
	for _, f := range found {
		nss = append(nss, f.Named.namespace)
	}
	sort.Strings(nss)
	return resolution{}, usageErrorf("%s exists in namespaces %s; pick one with -n", ref, strings.Join(nss, ", "))
}

// auditHint is the audit command line that lists what the same flags can see.
func (o *ExplainOptions) auditHint(namespace string) string {
	hint := o.command + " audit"
	switch {
	case o.Source.Demo:
		hint += " --demo"
	case o.Source.DumpPath != "":
		hint += " --dump " + o.Source.DumpPath
	}
	switch {
	case o.Source.AllNamespaces:
		hint += " -A"
	case namespace != "":
		hint += " -n " + namespace
	}
	return hint
}

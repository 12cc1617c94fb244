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
)

// kindAliases maps what people type (kubectl's names, any case) to a workload kind.
var kindAliases = map[string]string{
	"deployment": "Deployment", "deployments": "Deployment", "deploy": "Deployment",
	"deployment.apps": "Deployment", "deployments.apps": "Deployment",
	"statefulset": "StatefulSet", "statefulsets": "StatefulSet", "sts": "StatefulSet",
	"statefulset.apps": "StatefulSet", "statefulsets.apps": "StatefulSet",
	"daemonset": "DaemonSet", "daemonsets": "DaemonSet", "ds": "DaemonSet",
	"daemonset.apps": "DaemonSet", "daemonsets.apps": "DaemonSet",
	"replicaset": "ReplicaSet", "replicasets": "ReplicaSet", "rs": "ReplicaSet",
	"replicaset.apps": "ReplicaSet", "replicasets.apps": "ReplicaSet",
	"job": "Job", "jobs": "Job", "job.batch": "Job", "jobs.batch": "Job",
	"cronjob": "CronJob", "cronjobs": "CronJob", "cj": "CronJob",
	"cronjob.batch": "CronJob", "cronjobs.batch": "CronJob",
}

// ExplainOptions are the options of `kubectl-diagnose explain`.
type ExplainOptions struct {
	genericiooptions.IOStreams
	Source *SourceOptions

	// Kind is the canonical workload kind and Name its name, from KIND/NAME.
	Kind, Name string
	// Output is -o: one of report.ExplainFormats.
	Output string
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
cronjob (cj).`,
		Example: `  kubectl diagnose explain deploy/telemetry-ingester -n telemetry
  kubectl diagnose explain sts/search-indexer --dump ./incident -o yaml`,
		RunE: func(c *cobra.Command, args []string) error {
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
	return cmd
}

// Complete parses KIND/NAME (or KIND NAME) and the shared flags.
func (o *ExplainOptions) Complete(args []string) error {
	kind, name, err := workloadArgs("explain", args)
	if err != nil {
		return err
	}
	canonical, ok := kindAliases[strings.ToLower(kind)]
	if !ok {
		return usageErrorf("unknown workload kind %q; use deployment (deploy), statefulset (sts), daemonset (ds), replicaset (rs), job or cronjob (cj)", kind)
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

// Run reads the source, diagnoses it and prints the one workload.
func (o *ExplainOptions) Run(c *cobra.Command) error {
	src, err := o.Source.open()
	if err != nil {
		return err
	}
	src.progressOut = progressTo(o.ErrOut)
	_, r, err := src.diagnose(c.Context())
	if err != nil {
		return err
	}
	d, err := o.find(r, src.namespaceLabel(o.Source))
	if err != nil {
		return err
	}
	if err := warnVisibility(o.ErrOut, r.Visibility); err != nil {
		return err
	}
	return report.PrintDiagnosis(o.Out, d, o.Output)
}

// find picks the workload out of the report. Without -n a dump is searched in every namespace;
// a name found in several is ambiguous.
func (o *ExplainOptions) find(r *diagnose.Report, namespace string) (*diagnose.Diagnosis, error) {
	ref := strings.ToLower(o.Kind) + "/" + o.Name
	var found []*diagnose.Diagnosis
	var otherKinds []string
	for i := range r.Workloads {
		d := &r.Workloads[i]
		if d.Name != o.Name || (namespace != "" && d.Namespace != namespace) {
			continue
		}
		if d.Kind == o.Kind {
			found = append(found, d)
		} else {
			otherKinds = append(otherKinds, report.WorkloadRef(d))
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		where := "in any namespace"
		if namespace != "" {
			where = "in namespace " + namespace
		}
		msg := fmt.Sprintf("%s not found %s", ref, where)
		if len(otherKinds) > 0 {
			sort.Strings(otherKinds)
			msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(slices.Compact(otherKinds), ", "))
		}
		return nil, fmt.Errorf("%s; list the workloads with: %s", msg, o.auditHint(namespace))
	}
	var nss []string
	for _, d := range found {
		nss = append(nss, d.Namespace)
	}
	sort.Strings(nss)
	return nil, usageErrorf("%s exists in namespaces %s; pick one with -n", ref, strings.Join(nss, ", "))
}

// auditHint is the audit command line that lists what the same flags can see.
func (o *ExplainOptions) auditHint(namespace string) string {
	hint := "kubectl-diagnose audit"
	if o.Source.DumpPath != "" {
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

package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubediagnose/kubectl-diagnose/internal/demo"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/live"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// DumpOptions are the options of `kubectl-diagnose dump`.
type DumpOptions struct {
	genericiooptions.IOStreams
	ConfigFlags *genericclioptions.ConfigFlags

	// OutputDirectory is --output-directory; Force is --force.
	OutputDirectory string
	Force           bool
	// Namespaces is -n (read from ConfigFlags by Complete); AllNamespaces is -A.
	Namespaces    []string
	AllNamespaces bool
	// Metrics are the Prometheus flags; with a Prometheus the dump also saves its answers.
	Metrics MetricsOptions
	// Demo is --demo: write the built-in demo instead of reading a cluster.
	Demo bool

	// newSource opens the cluster; tests replace it with an offline source.
	newSource func(flags *genericclioptions.ConfigFlags, opts live.Options) (snapshot.Source, error)
}

// NewCmdDump returns the dump command, which saves what the live source reads so a diagnosis
// can be shared and replayed offline with --dump.
func NewCmdDump(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	return newCmdDump(streams, flags, nil)
}

// newCmdDump is NewCmdDump with a runF hook that, when set, replaces Run so tests can see what
// argv parsed to.
func newCmdDump(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags, runF func(*DumpOptions) error) *cobra.Command {
	o := &DumpOptions{IOStreams: streams, ConfigFlags: flags, newSource: openLiveSource}
	cmd := &cobra.Command{
		Use:   "dump --output-directory DIR [-n NAMESPACE | -A] [--force]",
		Short: "Save what the tool reads from the cluster, to diagnose it offline later",
		Long: `Read the cluster as audit does (workloads, their copies, events, services, endpoint slices,
claims, quotas, nodes, and the log tails of failing copies and of a Ready copy whose env names
an endpoint) and write it in the layout of 'kubectl cluster-info dump --output-directory',
which 'kubectl diagnose --dump DIR' reads back.

Directories are created 0700 and files 0600: a dump holds pod specs, env values and logs. An
existing directory that is not empty is refused unless --force is given; then the files of the
dump it holds are removed first. Each file is written whole under a temporary name and renamed,
never through a link, and a manifest written last lists them: a dump that stopped part way,
or a file missing or cut since, is named as a warning when the dump is read. Secrets and
ConfigMaps are never read.`,
		Example: `  # Save the current namespace, then diagnose it offline
  kubectl diagnose dump --output-directory ./incident
  kubectl diagnose audit --dump ./incident`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Complete(c); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return o.Run(c.Context())
		},
	}
	cmd.Flags().StringVar(&o.OutputDirectory, "output-directory", "", "Directory to write the dump into (required).")
	cmd.Flags().BoolVar(&o.Force, "force", false, "Write into a directory that is not empty, replacing the dump it holds (other files are kept).")
	// The root command's -A, when there is one, is the same flag; this one serves the command
	// on its own.
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Dump every namespace.")
	// The root command's Prometheus flags, when there is one, are these same names; these serve
	// the command on its own.
	o.Metrics.AddFlags(cmd.Flags())
	cmd.Flags().BoolVar(&o.Demo, "demo", false, "Write the built-in demo (namespace telemetry) instead of reading a cluster, to try --dump on.")
	return cmd
}

// Complete reads -n from the kubeconfig flags and refuses the shared flags that only mean
// something to a command reading a dump.
func (o *DumpOptions) Complete(c *cobra.Command) error {
	if f := c.Flags().Lookup("dump"); f != nil && f.Changed {
		return usageErrorf("--dump cannot be used with dump, which reads the live cluster; to diagnose %s run: %s audit --dump %s", f.Value, c.Root().DisplayName(), f.Value)
	}
	if f := c.Flags().Lookup("at"); f != nil && f.Changed {
		return usageErrorf("--at cannot be used with dump: a dump records the time it was read, and audit --dump --at sets another")
	}
	o.Namespaces = nil
	if o.ConfigFlags != nil && o.ConfigFlags.Namespace != nil && *o.ConfigFlags.Namespace != "" {
		o.Namespaces = []string{*o.ConfigFlags.Namespace}
	}
	if f := c.Flags().Lookup("all-namespaces"); f != nil && f.Changed && f.Value.String() == "true" {
		o.AllNamespaces = true
	}
	return o.Metrics.Complete()
}

// Validate rejects a missing directory and contradictory flags.
func (o *DumpOptions) Validate() error {
	if o.OutputDirectory == "" {
		return usageErrorf("--output-directory is required")
	}
	if o.AllNamespaces && len(o.Namespaces) > 0 {
		return usageErrorf("--namespace and --all-namespaces cannot be used together")
	}
	if o.Demo && o.Metrics.Config != nil {
		return usageErrorf("--demo is a built-in dump; --prometheus cannot be used with it")
	}
	return nil
}

// Run reads the cluster and writes the dump.
func (o *DumpOptions) Run(ctx context.Context) error {
	// Refuse before reading the cluster: a refused dump should not cost a full read.
	if !o.Force {
		if err := refuseNonEmpty(o.OutputDirectory); err != nil {
			return err
		}
	}
	kube, err := o.source()
	if err != nil {
		return err
	}
	src, err := o.Metrics.withMetrics(kube)
	if err != nil {
		return err
	}
	snap, err := readWithProgress(ctx, src, progressTo(o.ErrOut))
	if err != nil {
		return err
	}
	if err := dump.Write(o.OutputDirectory, snap, o.Force); err != nil {
		return err
	}
	for _, v := range snap.Visibility {
		where := ""
		if v.Namespace != "" {
			where = " in " + v.Namespace
		}
		if _, err := fmt.Fprintf(o.ErrOut, "warning: not dumped: %s%s: %s\n", report.Clean(v.Kind), report.Clean(where), report.Clean(v.Reason)); err != nil {
			return fmt.Errorf("write warning: %w", err)
		}
	}
	if _, err := fmt.Fprintf(o.ErrOut, "Dumped %s to %s\n", dumpedWhat(snap), report.Clean(o.OutputDirectory)); err != nil {
		return fmt.Errorf("write notice: %w", err)
	}
	return nil
}

// source is what the dump reads: the cluster, or the demo scoped by -n as a dump is.
func (o *DumpOptions) source() (snapshot.Source, error) {
	if o.Demo {
		return &scopedSource{src: demo.Source(), namespaces: o.Namespaces, origin: "the demo"}, nil
	}
	return o.newSource(o.ConfigFlags, live.Options{Namespaces: o.Namespaces, AllNamespaces: o.AllNamespaces})
}

func openLiveSource(flags *genericclioptions.ConfigFlags, opts live.Options) (snapshot.Source, error) {
	return live.New(flags, opts)
}

// refuseNonEmpty fails when dir exists and holds anything.
func refuseNonEmpty(dir string) error {
	f, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("write dump: %w", err)
	}
	defer func() { _ = f.Close() }() // opened for reading; nothing to lose on close
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("write dump: %w", err)
	}
	if !info.IsDir() {
		return fmt.Errorf("write dump %q: not a directory", dir)
	}
	if _, err := f.Readdirnames(1); !errors.Is(err, io.EOF) {
		if err != nil {
			return fmt.Errorf("write dump: %w", err)
		}
		return fmt.Errorf("write dump %q: directory is not empty; use --force to overwrite", dir)
	}
	return nil
}

func dumpedWhat(s *snapshot.Snapshot) string {
	n := s.Len()
	scope := "every namespace"
	switch len(s.Namespaces) {
	case 0:
	case 1:
		scope = "namespace " + s.Namespaces[0]
	default:
		scope = fmt.Sprintf("%d namespaces", len(s.Namespaces))
	}
	if s.Metrics != nil {
		return fmt.Sprintf("%d objects, %d log tails and %d Prometheus series of %s", n, len(s.Logs), len(s.Metrics.Series), scope)
	}
	return fmt.Sprintf("%d objects and %d log tails of %s", n, len(s.Logs), scope)
}

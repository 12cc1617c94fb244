package cmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
	"github.com/kubediagnose/kubectl-diagnose/internal/live"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
	"github.com/kubediagnose/kubectl-diagnose/internal/rollout"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// defaultRolloutTimeout matches the Deployment controller's default progressDeadlineSeconds:
// by then a stuck Deployment is ProgressDeadlineExceeded, which the gate reads as failed.
const defaultRolloutTimeout = 10 * time.Minute

// watchFunc streams snapshots of a live namespace until ctx ends.
type watchFunc func(ctx context.Context) (<-chan *snapshot.Snapshot, <-chan error)

// RolloutOptions are the options of `kubectl-diagnose rollout`.
type RolloutOptions struct {
	genericiooptions.IOStreams
	Source *SourceOptions

	// Kind is the canonical workload kind and Name its name, from KIND/NAME.
	Kind, Name string
	// Settle is --settle; zero means the workload's minReadySeconds plus one readiness period.
	Settle time.Duration
	// Timeout is --timeout; zero means no bound.
	Timeout time.Duration
	// Output is -o: one of rollout.Formats.
	Output string

	// openWatch opens the live watch and names the namespace it reads; tests replace it.
	openWatch func(o *RolloutOptions) (namespace string, watch watchFunc, err error)
	// tick, when positive, replaces rollout.DefaultTick; tests shorten it.
	tick time.Duration
}

// NewCmdRollout returns the rollout command; runF, when set, replaces Run.
func NewCmdRollout(streams genericiooptions.IOStreams, source *SourceOptions, runF func(*RolloutOptions) error) *cobra.Command {
	o := &RolloutOptions{IOStreams: streams, Source: source, openWatch: openRolloutWatch}
	cmd := &cobra.Command{
		Use:   "rollout KIND/NAME [--settle DURATION] [--timeout DURATION] [-o text|json]",
		Short: "Follow a workload's rollout and exit 0 when it serves, 4 when it fails, 5 at --timeout",
		Long: `Follow the current rollout of one workload through watches (get, list and watch only) and
decide as early as the evidence allows:

  exit 0  the new revision's copies are updated, available and serving, and stayed so for
          --settle (default: the workload's minReadySeconds plus one readiness probe period)
  exit 4  the new revision's copies took a failure shape (never-starts, starts-and-dies,
          live-but-idle), or the controller reported ProgressDeadlineExceeded; the diagnosis
          follows: shape, ranked suspects, what changed since the last serving revision, the fix
  exit 5  --timeout passed first; the state at that moment follows

Copies inside their probes' warm-up window, a surge copy briefly not Ready and a slow image pull
are a rollout under way, not a failure. With --prometheus the rollout passes only once its
copies produce output: every throughput sample since it looked done is above zero (the
workload's own query, or the common request counters; without either it is not gated). One progress line per change goes to stderr; the
verdict goes to stdout. Ctrl-C exits 130 without a verdict.

KIND is deployment (deploy), statefulset (sts) or daemonset (ds).`,
		Example: `  # Gate a CI job on a deployment's rollout
  kubectl apply -f deploy.yaml && kubectl diagnose rollout deploy/telemetry-ingester -n telemetry

  # The verdict as JSON, giving up after five minutes
  kubectl diagnose rollout sts/search-indexer --timeout 5m -o json`,
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
			return o.Run(c.Context())
		},
	}
	cmd.Flags().DurationVar(&o.Settle, "settle", 0, "How long the finished rollout must keep serving before exit 0 (default: minReadySeconds plus one readiness probe period).")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", defaultRolloutTimeout, "Exit 5 when the rollout is still undecided after this long; 0 waits without bound.")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "text", "Output format: "+strings.Join(rollout.Formats, "|")+".")
	o.Source.addShowSecretsFlag(cmd.Flags())
	return cmd
}

// Complete parses KIND/NAME (or KIND NAME) and the shared flags.
func (o *RolloutOptions) Complete(args []string) error {
	kind, name, err := workloadArgs("rollout", args)
	if err != nil {
		return err
	}
	k, ok := kinds.Lookup(kind)
	if !ok || !k.Rollout {
		return usageErrorf("cannot follow the rollout of %q; use %s", kind, rolloutKindsHelp)
	}
	o.Kind, o.Name = k.Kind, name
	return o.Source.Complete()
}

// Validate rejects flags that cannot apply to following a live rollout.
func (o *RolloutOptions) Validate() error {
	switch {
	case !slices.Contains(rollout.Formats, o.Output):
		return usageErrorf("unknown output format %q; use one of %s", o.Output, strings.Join(rollout.Formats, ", "))
	case o.Source.DumpPath != "":
		return usageErrorf("rollout follows a live cluster; --dump cannot be used (use explain on a dump)")
	case o.Source.AllNamespaces:
		return usageErrorf("rollout follows one workload; --all-namespaces cannot be used, pick its namespace with -n")
	case o.Source.At != nil:
		return usageErrorf("rollout follows the cluster as it is now; --at cannot be used")
	case o.Settle < 0:
		return usageErrorf("invalid --settle %s: want a duration of 0 or more", o.Settle)
	case o.Timeout < 0:
		return usageErrorf("invalid --timeout %s: want a duration of 0 or more", o.Timeout)
	}
	if err := o.Source.oneContext("rollout"); err != nil {
		return err
	}
	return o.Source.Validate()
}

// openRolloutWatch opens the live source of the namespace -n (or the context) names.
func openRolloutWatch(o *RolloutOptions) (string, watchFunc, error) {
	src, err := live.New(o.Source.ConfigFlags, live.Options{Namespaces: o.Source.namespaces()})
	if err != nil {
		return "", nil, err
	}
	return src.Namespaces()[0], src.Watch, nil
}

// Run follows the rollout and prints the verdict. A failed rollout returns a
// *RolloutFailedError, a timeout a *RolloutTimeoutError and a signal an *InterruptedError, each
// after what there is to print has been printed.
func (o *RolloutOptions) Run(ctx context.Context) error {
	ns, watch, err := o.openWatch(o)
	if err != nil {
		return err
	}
	target := rollout.Target{Kind: o.Kind, Namespace: ns, Name: o.Name}
	// The watch outlives the gate by nothing: it stops when the verdict is in.
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	snaps, errs := watch(wctx)
	// With --prometheus the rollout passes only once its copies produce output.
	var throughput rollout.ThroughputQuery
	prom, err := o.Source.Metrics.source()
	if err != nil {
		return err
	}
	if prom != nil {
		mt := &rollout.MetricsThroughput{Source: prom}
		snaps, throughput = mt.Feed(snaps), mt
	}
	var progressErr error
	gate := &rollout.Gate{
		Target: target, Settle: o.Settle, Timeout: o.Timeout, Tick: o.tick, Throughput: throughput,
		Redact: o.Source.redactor(),
		Progress: func(ev rollout.Event) {
			if _, err := fmt.Fprintln(o.ErrOut, rollout.ProgressLine(ev)); err != nil && progressErr == nil {
				progressErr = fmt.Errorf("write progress: %w", err)
			}
		},
		Warn: func(err error) {
			if _, werr := fmt.Fprintf(o.ErrOut, "warning: %s; the watch retries\n", report.Clean(err.Error())); werr != nil && progressErr == nil {
				progressErr = fmt.Errorf("write warning: %w", werr)
			}
		},
	}
	if _, err := fmt.Fprintf(o.ErrOut, "Following the rollout of %s in namespace %s.\n", target.Ref(), report.Clean(ns)); err != nil {
		return fmt.Errorf("write progress: %w", err)
	}
	res, err := gate.Run(wctx, snaps, errs)
	switch {
	case ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled)):
		return &InterruptedError{}
	case err != nil:
		return err
	case progressErr != nil:
		return progressErr
	}
	if err := warnVisibility(o.ErrOut, res.Visibility); err != nil {
		return err
	}
	if err := rollout.PrintResult(o.Out, res, o.Output); err != nil {
		return fmt.Errorf("write the rollout result: %w", err)
	}
	switch res.Decision.Phase {
	case rollout.PhaseFailed:
		why := "ProgressDeadlineExceeded"
		if d := res.Diagnosis; d != nil && d.Shape.Broken() {
			why = string(d.Shape)
		}
		return &RolloutFailedError{Workload: target.Ref(), Why: why}
	case rollout.PhaseTimedOut:
		return &RolloutTimeoutError{Workload: target.Ref(), Timeout: o.Timeout}
	}
	return nil
}

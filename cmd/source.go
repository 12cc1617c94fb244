package cmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/live"
	"github.com/kubediagnose/kubectl-diagnose/internal/redact"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// SourceOptions are the flags every command shares: where to read (a dump or the cluster the
// kubeconfig flags name), which namespaces, and the reference time.
type SourceOptions struct {
	ConfigFlags   *genericclioptions.ConfigFlags
	AllNamespaces bool
	// DumpPath is --dump: a file, a directory or "-" for stdin; empty means the live cluster.
	DumpPath string
	// Demo is --demo: the embedded demo dump instead of a cluster (the commands that read a
	// source: the console, audit, explain).
	Demo bool
	// AtRaw is --at as typed; At is it parsed by Complete.
	AtRaw string
	At    *time.Time

	// MaxObjectSizeMiB and MaxDumpSizeMiB are --max-object-size and --max-dump-size: what a
	// dump read may hold, per object and in all.
	MaxObjectSizeMiB int64
	MaxDumpSizeMiB   int64

	// Namespace is -n, read from ConfigFlags by Complete.
	Namespace string
	// Stdin feeds --dump -.
	Stdin io.Reader
	// Metrics are the Prometheus flags.
	Metrics MetricsOptions
	// Selector picks workloads (audit's -l and --field-selector); the zero value picks all.
	Selector snapshot.Selector
	// Fleet is --context a,b,c and --all-contexts (audit and the console).
	Fleet FleetOptions
	// fleetKubeconfig, set for one context of a fleet, is the fleet's kubeconfig, read once:
	// the context's source is built from it instead of reading the files again.
	fleetKubeconfig *live.Kubeconfig
	// forConsole reads a dump for the console, which shows what its read waits for and can
	// stop it: it waits for the named pipes of a directory (dump.Options.WaitForPipes).
	forConsole bool
	// settleMemory settles the process's memory policy once a command that goes on has read its
	// first snapshot (internal/memory): a live watch once its informers take over
	// (live.Options.AfterFirstRead), serve on a dump once it has diagnosed it; nil leaves the
	// policy as it is.
	settleMemory func()
	// ShowSecrets is --show-secrets: print credentials as read (see internal/redact).
	ShowSecrets bool
}

// NewSourceOptions returns options with kubectl's flag defaults.
func NewSourceOptions(stdin io.Reader) *SourceOptions {
	return &SourceOptions{
		ConfigFlags: genericclioptions.NewConfigFlags(true), Stdin: stdin,
		MaxObjectSizeMiB: dump.DefaultMaxObjectSize >> 20, MaxDumpSizeMiB: dump.DefaultMaxDumpSize >> 20,
		Fleet: FleetOptions{MaxParallel: DefaultMaxParallelContexts},
	}
}

// AddFlags binds the shared flags.
func (o *SourceOptions) AddFlags(fs *pflag.FlagSet) {
	o.ConfigFlags.AddFlags(fs)
	if f := fs.Lookup("context"); f != nil {
		f.Usage = "The name of the kubeconfig context to use; audit and the console take a comma-separated list of contexts, read in parallel."
	}
	// kubectl's words say 0 waits without bound; here it is live.DefaultRequestTimeout, so that
	// no read waits forever on a server, or on a credential plugin, that does not answer.
	if f := fs.Lookup("request-timeout"); f != nil {
		f.Usage = fmt.Sprintf("How long to wait for each server request, and for the kubeconfig's credential plugin, before giving up, e.g. 1s, 2m, 3h. 0 means %s; nothing waits without bound.", live.DefaultRequestTimeout)
	}
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Diagnose every namespace (of the cluster, or of the dump, which is the default for a dump).")
	fs.StringVar(&o.DumpPath, "dump", "", "Read a dump instead of a cluster: a file or directory of kubectl JSON/YAML output or 'kubectl cluster-info dump', or - for stdin.")
	fs.Int64Var(&o.MaxObjectSizeMiB, "max-object-size", o.MaxObjectSizeMiB, "Largest object (list item or YAML document) a dump may hold, in MiB.")
	fs.Int64Var(&o.MaxDumpSizeMiB, "max-dump-size", o.MaxDumpSizeMiB, "Most a dump read may read, all files together, in MiB.")
	fs.StringVar(&o.AtRaw, "at", "", "Reference time (RFC3339) that ages are computed against; default: the newest timestamp in a dump, or now.")
	o.Metrics.AddFlags(fs)
}

// AddDemoFlag binds --demo, with what it does for the command.
func (o *SourceOptions) AddDemoFlag(fs *pflag.FlagSet, usage string) {
	fs.BoolVar(&o.Demo, "demo", false, usage)
}

// Complete reads the namespace and parses --at.
func (o *SourceOptions) Complete() error {
	if o.ConfigFlags.Namespace != nil {
		o.Namespace = *o.ConfigFlags.Namespace
	}
	o.At = nil
	if o.AtRaw != "" {
		t, err := time.Parse(time.RFC3339, o.AtRaw)
		if err != nil {
			return usageErrorf("invalid --at %q: want an RFC3339 time such as 2026-11-24T14:32:10Z", o.AtRaw)
		}
		t = t.UTC()
		o.At = &t
	}
	if err := o.completeFleet(); err != nil {
		return err
	}
	return o.Metrics.Complete()
}

// Validate rejects contradictory flags.
func (o *SourceOptions) Validate() error {
	if o.AllNamespaces && o.Namespace != "" {
		return usageErrorf("--namespace and --all-namespaces cannot be used together")
	}
	if o.Demo {
		switch {
		case o.DumpPath != "":
			return usageErrorf("--demo and --dump cannot be used together")
		case o.Fleet.On():
			return usageErrorf("--demo is one built-in cluster; it cannot be used with several contexts")
		case o.Metrics.Config != nil:
			return usageErrorf("--demo is a built-in dump; --prometheus cannot be used with it")
		}
	}
	const maxMiB = 1 << 20 // 1 TiB, far past any dump and short of overflowing bytes
	if o.MaxObjectSizeMiB <= 0 || o.MaxDumpSizeMiB <= 0 || o.MaxObjectSizeMiB > maxMiB || o.MaxDumpSizeMiB > maxMiB {
		return usageErrorf("--max-object-size and --max-dump-size take 1 to %d MiB, got %d and %d", maxMiB, o.MaxObjectSizeMiB, o.MaxDumpSizeMiB)
	}
	return o.validateFleet()
}

// namespaces is what -n/-A select: nil means every namespace (of a dump) or the context's (live).
func (o *SourceOptions) namespaces() []string {
	if o.AllNamespaces || o.Namespace == "" {
		return nil
	}
	return []string{o.Namespace}
}

// openedSource is a source ready to read, and how to present it.
type openedSource struct {
	// Source reads snapshots scoped by -n and --at.
	snapshot.Source
	// Label is "dump", "live" or "demo".
	Label string
	// Context is the kube context of a live source.
	Context string
	// live is the unscoped live source, nil for a dump; the console takes it as is so it can
	// use what the source offers (progress, watches).
	live snapshot.Source
	// liveNamespaces are the namespaces a live source reads; empty means all.
	liveNamespaces []string
	// switchNamespace returns a live source for another namespace.
	switchNamespace func(ns string) snapshot.Source
	// watch streams snapshots of a live source as the cluster changes.
	watch func(ctx context.Context) (<-chan *snapshot.Snapshot, <-chan error)
	// consoleWatch is watch with the console's hooks (its first read's progress and early rows,
	// and the hold on following changes until the first diagnosis).
	consoleWatch func(ctx context.Context, hooks snapshot.WatchHooks) (<-chan *snapshot.Snapshot, <-chan error)
	// listNamespaces names the cluster's namespaces for the console's prompt.
	listNamespaces func(ctx context.Context) ([]string, error)
	// progressOut, when set, is where diagnose draws its progress line.
	progressOut io.Writer
	// redact hides credentials in the reports diagnose returns; nil shows them (--show-secrets).
	redact *redact.Redactor
}

// open returns the source the flags select: the demo, the dump, else the live cluster.
func (o *SourceOptions) open() (*openedSource, error) {
	if o.Demo {
		return openDemo(o), nil
	}
	src, err := o.openKube()
	if err != nil {
		return nil, err
	}
	if src.Source, err = o.Metrics.withMetrics(src.Source); err != nil {
		return nil, err
	}
	src.redact = o.redactor()
	return src, nil
}

func (o *SourceOptions) openKube() (*openedSource, error) {
	if o.DumpPath != "" {
		src := dump.Source{Path: o.DumpPath, Stdin: o.Stdin, Options: dump.Options{
			MaxObjectSize: o.MaxObjectSizeMiB << 20, MaxDumpSize: o.MaxDumpSizeMiB << 20,
			Namespace: o.Namespace, Namespaces: o.namespaces(), At: o.At,
			// The console's header says what the read waits for, and q stops it.
			WaitForPipes: o.forConsole,
		}}
		return &openedSource{Source: &scopedSource{src: src, namespaces: o.namespaces(), at: o.At, origin: o.dumpOrigin(), selector: o.Selector}, Label: "dump"}, nil
	}
	return openLive(o)
}

// diagnose reads one snapshot and runs the engine on it. The report is the one the front ends
// show: its credentials are hidden unless --show-secrets.
func (s *openedSource) diagnose(ctx context.Context) (*snapshot.Snapshot, *diagnose.Report, error) {
	snap, err := readWithProgress(ctx, s.Source, s.progressOut)
	if err != nil {
		return nil, nil, err
	}
	r, err := diagnose.Until(snap, ctx.Done())
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", context.Cause(ctx), err)
	}
	return snap, s.redact.Report(r, snap), nil
}

// namespaceLabel names the one namespace read, or "" for several or all.
func (s *openedSource) namespaceLabel(o *SourceOptions) string {
	if s.live != nil && len(s.liveNamespaces) == 1 {
		return s.liveNamespaces[0]
	}
	return o.Namespace
}

func (o *SourceOptions) dumpOrigin() string {
	if o.DumpPath == dump.Stdin {
		return "the dump on stdin"
	}
	return fmt.Sprintf("dump %s", o.DumpPath)
}

// scopedSource applies -n and --at to every snapshot of a source. A live source is scoped by
// the server already; a dump holds whatever namespaces were dumped and is filtered here.
type scopedSource struct {
	src        snapshot.Source
	namespaces []string
	at         *time.Time
	// origin names the source in errors, e.g. "dump ./incident".
	origin string
	// selector picks workloads; a live server has applied it already to all but ReplicaSets.
	selector snapshot.Selector
}

// Snapshot reads and scopes one snapshot.
func (s *scopedSource) Snapshot(ctx context.Context) (*snapshot.Snapshot, error) {
	return s.scope(s.src.Snapshot(ctx))
}

// SnapshotWithProgress reads as Snapshot does, passing progress to a source that reports it.
func (s *scopedSource) SnapshotWithProgress(ctx context.Context, progress func(what string, n int)) (*snapshot.Snapshot, error) {
	if ps, ok := s.src.(progressSource); ok {
		return s.scope(ps.SnapshotWithProgress(ctx, progress))
	}
	return s.Snapshot(ctx)
}

// rowsSource is a source that hands over its workloads before the rest of its read; a dump
// is one.
type rowsSource interface {
	SnapshotWithRows(ctx context.Context, progress func(what string, n int), rows func(*snapshot.Snapshot)) (*snapshot.Snapshot, error)
}

// SnapshotWithRows reads as SnapshotWithProgress does and hands rows the workloads as soon as
// the source has read them, scoped as the snapshot will be, so the console lists the rows the
// diagnosis will have.
func (s *scopedSource) SnapshotWithRows(ctx context.Context, progress func(what string, n int), rows func(*snapshot.Snapshot)) (*snapshot.Snapshot, error) {
	rs, ok := s.src.(rowsSource)
	if !ok {
		return s.SnapshotWithProgress(ctx, progress)
	}
	var early func(*snapshot.Snapshot)
	if rows != nil {
		early = func(snap *snapshot.Snapshot) {
			if len(s.namespaces) > 0 {
				// A namespace not in the dump is the snapshot's error to name, not the rows'.
				snap = snap.FilterNamespaces(s.namespaces)
			}
			snap = snap.FilterWorkloads(s.selector)
			if s.at != nil {
				snap.ReferenceTime = *s.at
			}
			rows(snap)
		}
	}
	return s.scope(rs.SnapshotWithRows(ctx, progress, early))
}

// Throttled passes on the count of a source that keeps one.
func (s *scopedSource) Throttled() (int, time.Duration) {
	if ts, ok := s.src.(throttledSource); ok {
		return ts.Throttled()
	}
	return 0, 0
}

func (s *scopedSource) scope(snap *snapshot.Snapshot, err error) (*snapshot.Snapshot, error) {
	if err != nil {
		return nil, err
	}
	if len(s.namespaces) > 0 {
		for _, ns := range s.namespaces {
			if !snap.HasNamespace(ns) {
				return nil, fmt.Errorf("namespace %q is not in %s; it holds %s", ns, s.origin, listOrNone(snap.Namespaces))
			}
		}
		snap = snap.FilterNamespaces(s.namespaces)
	}
	snap = snap.FilterWorkloads(s.selector)
	if s.at != nil {
		snap.ReferenceTime = *s.at
	}
	return snap, nil
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "no namespaced objects"
	}
	return strings.Join(xs, ", ")
}

// settle settles the process's memory policy (settleMemory), if the command set one.
func (o *SourceOptions) settle() {
	if o.settleMemory != nil {
		o.settleMemory()
	}
}

package cmd

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/serve"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// DefaultListen is serve's address: every interface, the port the Deployment manifest exposes.
const DefaultListen = ":8080"

// ServeOptions are the options of `kubectl-diagnose serve`.
type ServeOptions struct {
	genericiooptions.IOStreams
	Source *SourceOptions

	// Listen is the address (host:port) the HTTP server listens on.
	Listen string
	// LabelSelector and FieldSelector pick workloads as audit's do; Complete parses them.
	LabelSelector, FieldSelector string
	// Refresh is how long a picture may stand without a diagnosis before the last snapshot is
	// diagnosed again at the current time; 0 never.
	Refresh time.Duration

	// open opens the source; tests replace it.
	open func() (*openedSource, error)
	// listening, when set, is told the address once the server listens; tests read the port.
	listening func(addr net.Addr)
}

// NewCmdServe returns the serve command. runF, when set, replaces Run so tests can see what
// argv parsed to.
func NewCmdServe(streams genericiooptions.IOStreams, source *SourceOptions, runF func(*ServeOptions) error) *cobra.Command {
	o := &ServeOptions{IOStreams: streams, Source: source}
	cmd := &cobra.Command{
		Use:   "serve [--listen HOST:PORT] [-n NAMESPACE | -A] [-l SELECTOR]",
		Short: "Keep the diagnosis current and serve it to Prometheus: /metrics, /report, /healthz, /readyz",
		Long: `Follow the cluster through watches, as the console does, and serve the diagnosis over HTTP:

  /metrics  per-workload series (shape, declared, existing and serving copies, youngest copy
            age, cause and top suspect rule) for a fleet's Prometheus to aggregate and alert on
  /report   the audit JSON, as 'audit -o json' prints it
  /healthz  200 while the process serves
  /readyz   200 once the first read is in; 503 and the reason while reads fail

It runs in a cluster under a read-only ServiceAccount (deploy/ holds the manifests and an
alerting rule), with in-cluster credentials when there is no kubeconfig, or anywhere a
kubeconfig reaches the cluster. With --dump it serves a dump's diagnosis, which never changes.
SIGTERM or Ctrl-C stops it after the scrapes in flight (exit 143 or 130).`,
		Example: `  # Every namespace, on :8080, as the Deployment in deploy/ runs it
  kubectl diagnose serve -A

  # One namespace on loopback, from a workstation
  kubectl diagnose serve -n payments --listen 127.0.0.1:9090

  # A saved incident, to try alerting rules against it
  kubectl diagnose serve --dump ./incident --listen 127.0.0.1:8080`,
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
			return o.Run(c.Context())
		},
	}
	cmd.Flags().StringVar(&o.Listen, "listen", DefaultListen, "Address (HOST:PORT) the HTTP server listens on; an empty host is every interface.")
	cmd.Flags().StringVarP(&o.LabelSelector, "selector", "l", "", "Label selector of the workloads to serve (e.g. -l 'tier=web'); sent to the API server, as audit's.")
	cmd.Flags().StringVar(&o.FieldSelector, "field-selector", "", "Field selector of the workloads to serve: metadata.name and metadata.namespace.")
	cmd.Flags().DurationVar(&o.Refresh, "refresh", 30*time.Second, "Diagnose the last snapshot again after this long without a change, so verdicts that age (a probe's warm-up, a rollout's deadline) follow the clock; 0 never.")
	return cmd
}

// Complete parses the shared flags and the selectors.
func (o *ServeOptions) Complete() error {
	if err := o.Source.Complete(); err != nil {
		return err
	}
	sel, err := snapshot.ParseSelector(o.LabelSelector, o.FieldSelector)
	if err != nil {
		return &UsageError{Err: err}
	}
	o.Source.Selector = sel
	if o.open == nil {
		o.open = o.Source.open
	}
	return nil
}

// Validate rejects bad flag values before anything is read or listened on.
func (o *ServeOptions) Validate() error {
	if _, port, err := net.SplitHostPort(o.Listen); err != nil || port == "" {
		return usageErrorf("invalid --listen %q: want HOST:PORT, e.g. :8080 or 127.0.0.1:8080", o.Listen)
	}
	if o.Refresh < 0 {
		return usageErrorf("--refresh must be 0 or positive, got %s", o.Refresh)
	}
	if o.Source.At != nil && o.Source.DumpPath == "" {
		return usageErrorf("--at fixes the reference time of one read; serve follows a live cluster at the current time")
	}
	return o.Source.Validate()
}

// Run listens, reads the source and serves its diagnosis until ctx is done. A live source is
// followed; a dump is read and diagnosed once.
func (o *ServeOptions) Run(ctx context.Context) error {
	ln, err := serve.Listen(o.Listen)
	if err != nil {
		return err
	}
	defer func() { _ = ln.Close() }() // Serve closes it; this covers the returns before it
	src, err := o.open()
	if err != nil {
		return err
	}
	picture := &serve.Picture{}
	var now func() time.Time
	if src.live != nil {
		now = time.Now
	}
	h := serve.Handler(picture, serve.NewCollector(picture, now), o.ErrOut)
	if err := o.logf("serving /metrics, /report, /healthz and /readyz on %s (%s)", listenURL(ln.Addr()), src.describe(o.Source)); err != nil {
		return err
	}
	if o.listening != nil {
		o.listening(ln.Addr())
	}
	if src.watch == nil {
		// A dump does not change: one read, served until stopped.
		snap, err := readWithProgress(ctx, src.Source, nil)
		if err != nil {
			return err
		}
		start := time.Now()
		r, err := diagnose.Until(snap, ctx.Done())
		if err != nil {
			return fmt.Errorf("%w: %w", context.Cause(ctx), err)
		}
		picture.Update(r, time.Since(start))
		return serve.Serve(ctx, ln, h)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	followed := make(chan error, 1)
	go func() {
		f := &serve.Follower{
			Picture: picture, Refresh: o.Refresh, Log: o.ErrOut,
			Prepare: func(s *snapshot.Snapshot) *snapshot.Snapshot { return s.FilterWorkloads(o.Source.Selector) },
		}
		snaps, errs := src.watch(ctx)
		err := f.Follow(ctx, snaps, errs)
		if err != nil {
			cancel(err)
		}
		followed <- err
	}()
	served := serve.Serve(ctx, ln, h)
	cancel(nil)
	if err := <-followed; err != nil {
		return err
	}
	return served
}

func (o *ServeOptions) logf(format string, args ...any) error {
	if _, err := fmt.Fprintf(o.ErrOut, format+"\n", args...); err != nil {
		return fmt.Errorf("write log: %w", err)
	}
	return nil
}

// describe names what is served, for the server's first log line.
func (s *openedSource) describe(o *SourceOptions) string {
	if s.live == nil {
		return "dump " + o.DumpPath
	}
	where := "every namespace"
	if ns := s.liveNamespaces; len(ns) == 1 {
		where = "namespace " + ns[0]
	} else if len(ns) > 1 {
		where = fmt.Sprintf("%d namespaces", len(ns))
	}
	if s.Context != "" {
		return "context " + s.Context + ", " + where
	}
	return where
}

// listenURL is the base URL of an address; every interface reads as its port on localhost.
func listenURL(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		return fmt.Sprintf("http://localhost:%d", tcp.Port)
	}
	return "http://" + a.String()
}

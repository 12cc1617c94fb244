package cmd

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/live"
	"github.com/kubediagnose/kubectl-diagnose/internal/redact"
	"github.com/kubediagnose/kubectl-diagnose/internal/serve"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// DefaultListen is serve's address: loopback only, so that a server started by hand answers no
// one else. The Deployment in deploy/ passes its own (--listen :8080).
const DefaultListen = "127.0.0.1:8080"

// The --report-auth words.
const (
	reportAuthKubernetes = "kubernetes"
	reportAuthNone       = "none"
)

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
	// Report serves /report; ReportAuth says how its callers are checked: "kubernetes"
	// (TokenReview and SubjectAccessReview) or "none" (loopback only).
	Report     bool
	ReportAuth string
	// AcceptHostsRaw is --accept-hosts as typed; Complete sets acceptHosts from it, or from
	// serve.DefaultAcceptHosts on a loopback --listen.
	AcceptHostsRaw string
	acceptHosts    []*regexp.Regexp

	// reviewer builds the /report callers' Reviewer; tests replace it.
	reviewer func() (*serve.Reviewer, error)

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
  /report   with --report: the audit JSON, as 'audit -o json' prints it, credentials redacted
  /healthz  200 while the process serves
  /readyz   200 once the first read is in; 503 and the reason while reads fail

It listens on 127.0.0.1:8080 unless --listen says otherwise, and on a loopback address answers
only Host headers --accept-hosts accepts (DNS rebinding). /report is off unless --report; its
callers then send a Kubernetes bearer token, which serve checks with a TokenReview, and read
the namespaces where a SubjectAccessReview says they may list pods and get pods/log
(--report-auth kubernetes, needing system:auth-delegator), or, on a loopback address only,
nobody is checked (--report-auth none). Credentials are always redacted; serve has no
--show-secrets. docs/security.md says what it reads and serves, and to whom.

It runs in a cluster under a read-only ServiceAccount (deploy/ holds the manifests, a
NetworkPolicy and an alerting rule), with in-cluster credentials when there is no kubeconfig,
or anywhere a kubeconfig reaches the cluster. With --dump it serves a dump's diagnosis, which
never changes. SIGTERM or Ctrl-C stops it after the scrapes in flight (exit 143 or 130).`,
		Example: `  # Every namespace, on every interface, /report for callers with the rights: as the
  # Deployment in deploy/ runs it
  kubectl diagnose serve -A --listen :8080 --report

  # One namespace on loopback, from a workstation
  kubectl diagnose serve -n payments --listen 127.0.0.1:9090

  # A saved incident with its report, to try alerting rules and scripts against it
  kubectl diagnose serve --dump ./incident --report --report-auth none`,
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
	cmd.Flags().StringVar(&o.Listen, "listen", DefaultListen, "Address (HOST:PORT) the HTTP server listens on; an empty host (:8080) is every interface.")
	cmd.Flags().BoolVar(&o.Report, "report", false, "Serve /report, the audit JSON (credentials redacted), to the callers --report-auth lets in.")
	cmd.Flags().StringVar(&o.ReportAuth, "report-auth", reportAuthKubernetes, "How /report callers are checked: kubernetes (a bearer token, checked with a TokenReview; each caller reads the namespaces where a SubjectAccessReview says it may list pods and get pods/log) or none (anyone who reaches the server; a loopback --listen only).")
	cmd.Flags().StringVar(&o.AcceptHostsRaw, "accept-hosts", "", "Regular expressions (comma-separated) of the Host headers to answer, as kubectl proxy's; default on a loopback --listen: "+serve.DefaultAcceptHosts+", elsewhere any.")
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
	if o.reviewer == nil {
		o.reviewer = o.newReviewer
	}
	if o.ReportAuth == "" {
		o.ReportAuth = reportAuthKubernetes
	}
	accept := o.AcceptHostsRaw
	if accept == "" && loopback(o.Listen) {
		accept = serve.DefaultAcceptHosts
	}
	if o.acceptHosts, err = serve.ParseAcceptHosts(accept); err != nil {
		return &UsageError{Err: err}
	}
	return nil
}

// loopback says whether a HOST:PORT listens on this machine's loopback interface alone.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// newReviewer checks /report callers with the API server the kubeconfig flags name: the
// serve's own identity creates the TokenReviews and SubjectAccessReviews.
func (o *ServeOptions) newReviewer() (*serve.Reviewer, error) {
	cfg, _, err := live.Config(o.Source.ConfigFlags)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for reviewing /report callers: %w", err)
	}
	return &serve.Reviewer{Tokens: cs.AuthenticationV1().TokenReviews(), Access: cs.AuthorizationV1().SubjectAccessReviews()}, nil
}

// Validate rejects bad flag values before anything is read or listened on.
func (o *ServeOptions) Validate() error {
	if _, port, err := net.SplitHostPort(o.Listen); err != nil || port == "" {
		return usageErrorf("invalid --listen %q: want HOST:PORT, e.g. :8080 or 127.0.0.1:8080", o.Listen)
	}
	if o.Refresh < 0 {
		return usageErrorf("--refresh must be 0 or positive, got %s", o.Refresh)
	}
	switch {
	case o.ReportAuth != reportAuthKubernetes && o.ReportAuth != reportAuthNone:
		return usageErrorf("invalid --report-auth %q: use %s or %s", o.ReportAuth, reportAuthKubernetes, reportAuthNone)
	case o.Report && o.ReportAuth == reportAuthNone && !loopback(o.Listen):
		return usageErrorf("--report-auth none serves /report to whoever reaches the server; it needs a loopback --listen such as 127.0.0.1:8080, got %q", o.Listen)
	case o.Report && o.ReportAuth == reportAuthKubernetes && o.Source.DumpPath != "":
		return usageErrorf("--report of a dump has no cluster to check its callers with: add --report-auth none (on a loopback --listen)")
	}
	if o.Source.At != nil && o.Source.DumpPath == "" {
		return usageErrorf("--at fixes the reference time of one read; serve follows a live cluster at the current time")
	}
	// One serve per cluster: a fleet's Prometheus aggregates them, so serve never fans out.
	if err := o.Source.oneContext("serve"); err != nil {
		return err
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
	opts := serve.Options{Report: o.Report, AcceptHosts: o.acceptHosts}
	if o.Report && o.ReportAuth == reportAuthKubernetes {
		if opts.Reviewer, err = o.reviewer(); err != nil {
			return err
		}
	}
	// A server never shows a credential: what it answers is read by others than the one who
	// started it, so it has no --show-secrets.
	red := redact.New()
	h := serve.Handler(picture, serve.NewCollector(picture, now), o.ErrOut, opts)
	if err := o.logf("serving %s on %s (%s)", o.endpoints(), listenURL(ln.Addr()), src.describe(o.Source)); err != nil {
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
		picture.Update(red.Report(r, snap), time.Since(start))
		// The read is over; what the server allocates from here is each answer's.
		o.Source.settle()
		return serve.Serve(ctx, ln, h)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	followed := make(chan error, 1)
	go func() {
		f := &serve.Follower{
			Picture: picture, Refresh: o.Refresh, Log: o.ErrOut, Redact: red,
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

// endpoints names what the server answers, and who may read /report.
func (o *ServeOptions) endpoints() string {
	switch {
	case !o.Report:
		return "/metrics, /healthz and /readyz (/report is off)"
	case o.ReportAuth == reportAuthNone:
		return "/metrics, /report (to anyone who reaches this address), /healthz and /readyz"
	}
	return "/metrics, /report (to bearer tokens that may list pods and get pods/log, per namespace), /healthz and /readyz"
}

// listenURL is the base URL of the address the server is bound to, as bound: an address of
// every interface says so, and is not passed off as localhost.
func listenURL(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		return fmt.Sprintf("http://%s (every interface)", a)
	}
	return "http://" + a.String()
}

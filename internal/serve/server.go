package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// ShutdownGrace is how long a stopping server lets scrapes in flight finish.
const ShutdownGrace = 5 * time.Second

// Options say what the handler serves, and to whom.
type Options struct {
	// Report serves /report, the audit JSON; without it /report answers 404. It holds the
	// diagnosis of every workload read: evidence, log lines, suspect values (redacted).
	Report bool
	// Reviewer, when set, checks every /report caller's bearer token and serves it the
	// namespaces it may read (Reviewer); nil serves /report to whoever reaches the server, for
	// a server on loopback.
	Reviewer *Reviewer
	// AcceptHosts, when set, are the Host headers (without port) the server answers, as
	// kubectl proxy's --accept-hosts: a page of another site that resolves its own name to
	// 127.0.0.1 (DNS rebinding) is refused.
	AcceptHosts []*regexp.Regexp
}

// Handler serves the picture: /metrics, /report, /healthz, /readyz. errLog receives what a
// scrape could not encode and why a caller could not be checked.
func Handler(p *Picture, c *Collector, errLog io.Writer, opts Options) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      log.New(errLog, "warning: /metrics: ", 0),
		ErrorHandling: promhttp.ContinueOnError,
	}))
	mux.Handle("GET /report", &reportHandler{picture: p, opts: opts, log: errLog})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok\n") // the status is the answer; a gone client needs no body
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if ok, why := p.Ready(); !ok {
			http.Error(w, why, http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok\n") // as /healthz
	})
	paths := "/metrics /healthz /readyz"
	if opts.Report {
		paths = "/metrics /report /healthz /readyz"
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "kubectl-diagnose serve: "+paths+"\n") // as /healthz
	})
	if len(opts.AcceptHosts) == 0 {
		return mux
	}
	return hostFilter{accept: opts.AcceptHosts, next: mux}
}

// reportHandler serves /report: the picture's report, of the namespaces the caller may read.
type reportHandler struct {
	picture *Picture
	opts    Options
	log     io.Writer
}

func (h *reportHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if !h.opts.Report {
		http.Error(w, "/report is off: start serve with --report (docs/security.md says who may read it)", http.StatusNotFound)
		return
	}
	r := h.picture.Report()
	if r == nil {
		_, why := h.picture.Ready()
		http.Error(w, why, http.StatusServiceUnavailable)
		return
	}
	// The answer depends on who asks and holds what the cluster's pods hold.
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Vary", "Authorization")
	if v := h.opts.Reviewer; v != nil {
		g, err := v.Review(req.Context(), bearerToken(req), reportNamespaces(r))
		switch {
		case errors.Is(err, ErrUnauthenticated):
			w.Header().Set("WWW-Authenticate", `Bearer realm="kubectl-diagnose"`)
			http.Error(w, "Unauthorized: "+err.Error()+"; send a Kubernetes bearer token (Authorization: Bearer ...)", http.StatusUnauthorized)
			return
		case err != nil:
			_, _ = fmt.Fprintf(h.log, "warning: /report: %s\n", oneLine(err.Error())) // a log that fails is no reason to fail the answer
			http.Error(w, "cannot check the caller's access: "+oneLine(err.Error()), http.StatusServiceUnavailable)
			return
		}
		var allowed bool
		if r, allowed = g.filter(r); !allowed {
			http.Error(w, fmt.Sprintf("Forbidden: %s may not list pods and get pods/log in any namespace this server reports on", oneLine(g.User)), http.StatusForbidden)
			return
		}
	}
	pr, err := report.NewPrinter("json", report.Options{})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	// A client that hangs up mid-report loses only its own copy.
	_ = pr.PrintReport(w, r)
}

// bearerToken is the token of an "Authorization: Bearer" header, "" without one.
func bearerToken(req *http.Request) string {
	scheme, token, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// reportNamespaces lists the namespaces a report holds anything of, sorted.
func reportNamespaces(r *diagnose.Report) []string {
	seen := map[string]bool{}
	for i := range r.Workloads {
		seen[r.Workloads[i].Namespace] = true
	}
	for _, v := range r.Visibility {
		if v.Namespace != "" {
			seen[v.Namespace] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// filter returns the part of r the grant covers: its namespaces' workloads and visibility, and
// what concerns no namespace. allowed is false when r holds namespaces and the grant covers
// none of them.
func (g Grant) filter(r *diagnose.Report) (_ *diagnose.Report, allowed bool) {
	if g.All {
		return r, true
	}
	out := *r
	out.Workloads, out.Visibility = []diagnose.Diagnosis{}, []snapshot.Visibility{}
	out.Summary = map[diagnose.Shape]int{}
	for _, s := range diagnose.Shapes {
		out.Summary[s] = 0
	}
	for i := range r.Workloads {
		if d := &r.Workloads[i]; g.Namespaces[d.Namespace] {
			out.Workloads = append(out.Workloads, *d)
			out.Summary[d.Shape]++
		}
	}
	for _, v := range r.Visibility {
		if v.Namespace == "" || g.Namespaces[v.Namespace] {
			out.Visibility = append(out.Visibility, v)
		}
	}
	return &out, len(g.Namespaces) > 0 || len(reportNamespaces(r)) == 0
}

// hostFilter answers only requests whose Host header one of accept matches, as kubectl
// proxy's FilterServer does (k8s.io/kubectl/pkg/proxy).
type hostFilter struct {
	accept []*regexp.Regexp
	next   http.Handler
}

func (f hostFilter) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	host, _, err := net.SplitHostPort(req.Host)
	if err != nil {
		host = req.Host
	}
	for _, re := range f.accept {
		// An IPv6 host is matched as written in a URL, [::1], and without its brackets.
		if re.MatchString(host) || strings.Contains(host, ":") && re.MatchString("["+host+"]") {
			f.next.ServeHTTP(w, req)
			return
		}
	}
	http.Error(w, fmt.Sprintf("Forbidden: Host %q is not one this server answers (--accept-hosts)", oneLine(host)), http.StatusForbidden)
}

// DefaultAcceptHosts is kubectl proxy's default --accept-hosts: the loopback names.
const DefaultAcceptHosts = `^localhost$,^127\.0\.0\.1$,^\[::1\]$`

// ParseAcceptHosts reads a comma-separated list of regular expressions, as kubectl proxy's
// --accept-hosts.
func ParseAcceptHosts(list string) ([]*regexp.Regexp, error) {
	if list == "" {
		return nil, nil
	}
	var out []*regexp.Regexp
	for _, p := range strings.Split(list, ",") {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("--accept-hosts %q: %w", p, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// Listen opens the server's address; a port in use or a host that is not this machine's fails
// here, before anything is read.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Serve serves h on ln until ctx is done, then lets scrapes in flight finish for ShutdownGrace.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	failed := make(chan error, 1)
	go func() { failed <- srv.Serve(ln) }()
	select {
	case err := <-failed:
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	stop, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(stop); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("stop serving on %s: %w", ln.Addr(), err)
	}
	return nil
}

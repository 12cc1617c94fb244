package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kubediagnose/kubectl-diagnose/internal/report"
)

// ShutdownGrace is how long a stopping server lets scrapes in flight finish.
const ShutdownGrace = 5 * time.Second

// Handler serves the picture: /metrics, /report, /healthz, /readyz. errLog receives what a
// scrape could not encode.
func Handler(p *Picture, c *Collector, errLog io.Writer) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      log.New(errLog, "warning: /metrics: ", 0),
		ErrorHandling: promhttp.ContinueOnError,
	}))
	mux.HandleFunc("GET /report", func(w http.ResponseWriter, _ *http.Request) {
		r := p.Report()
		if r == nil {
			_, why := p.Ready()
			http.Error(w, why, http.StatusServiceUnavailable)
			return
		}
		pr, err := report.NewPrinter("json", report.Options{})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		// A client that hangs up mid-report loses only its own copy.
		_ = pr.PrintReport(w, r)
	})
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
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "kubectl-diagnose serve: /metrics /report /healthz /readyz\n") // as /healthz
	})
	return mux
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

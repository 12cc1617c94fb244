package promtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ScrapeInterval is the generated config's scrape interval; short, so a test sees rates change
// within seconds.
const ScrapeInterval = time.Second

// DefaultBinary is where Debian's prometheus package installs the server.
const DefaultBinary = "/usr/bin/prometheus"

// Server is a Prometheus process of the test's own.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:PORT.
	URL string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// Binary returns the Prometheus binary to run: $PROMETHEUS_BINARY or DefaultBinary.
func Binary() string {
	if b := os.Getenv("PROMETHEUS_BINARY"); b != "" {
		return b
	}
	return DefaultBinary
}

// StartPrometheus starts Prometheus on loopback scraping the targets (host:port) every
// ScrapeInterval, keeping the targets' own namespace and pod labels, and waits until it is
// ready. A missing binary fails the test, naming the package that installs it.
func StartPrometheus(t testing.TB, targets ...string) *Server {
	t.Helper()
	return Start(t, Config{Targets: targets})
}

// Config is what a test's Prometheus scrapes and evaluates.
type Config struct {
	// Targets are host:port of the exporters it scrapes, keeping their labels.
	Targets []string
	// RuleFiles are Prometheus rule files it loads and evaluates every ScrapeInterval.
	RuleFiles []string
}

// Start starts Prometheus on loopback with c, as StartPrometheus does.
func Start(t testing.TB, c Config) *Server {
	t.Helper()
	bin := Binary()
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("prometheus: %v; install Debian's prometheus package (apt-get install prometheus) or set PROMETHEUS_BINARY", err)
	}
	dir := t.TempDir()
	quote := func(xs []string) string {
		q := make([]string, len(xs))
		for i, x := range xs {
			q[i] = fmt.Sprintf("%q", x)
		}
		return strings.Join(q, ", ")
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: %s
  evaluation_interval: %s
rule_files: [%s]
scrape_configs:
  - job_name: exporter
    honor_labels: true
    static_configs:
      - targets: [%s]
`, ScrapeInterval, ScrapeInterval, quote(c.RuleFiles), quote(c.Targets))
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatalf("prometheus: %v", err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatalf("prometheus: %v", err)
	}
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatalf("prometheus: %v", err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("prometheus: start %s: %v", bin, err)
	}
	s := &Server{URL: "http://" + addr, cmd: cmd, done: make(chan struct{}), log: logf}
	go func() {
		_ = cmd.Wait() // its exit is seen through done; a crash shows in the log
		close(s.done)
	}()
	t.Cleanup(func() {
		s.Stop()
		_ = logf.Close() // the log is read, not written, from here
	})
	if err := s.waitReady(30 * time.Second); err != nil {
		s.Stop()
		b, _ := os.ReadFile(logf.Name())
		t.Fatalf("prometheus: %v\n%s", err, b)
	}
	return s
}

// Stop stops the server (SIGTERM, then SIGKILL after 10s) and waits for it; it is idempotent.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM) // it may have exited already; done says so
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill() // it ignored SIGTERM; nothing else to do
		<-s.done
	}
}

func (s *Server) waitReady(within time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/-/ready", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close() // only the status matters
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.done:
			return errors.New("exited before it was ready")
		case <-ctx.Done():
			return fmt.Errorf("not ready within %s", within)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = ln.Close() }() // only its port was wanted
	return ln.Addr().(*net.TCPAddr).Port, nil
}

package serve

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/internal/report"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

func TestHandlerEndpoints(t *testing.T) {
	p := &Picture{}
	h := Handler(p, NewCollector(p, nil), io.Discard, Options{Report: true})

	if code, body := get(t, h, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "the first read is not in yet") {
		t.Errorf("/readyz before a read: %d %q", code, body)
	}
	if code, _ := get(t, h, "/report"); code != http.StatusServiceUnavailable {
		t.Errorf("/report before a read: %d, want 503", code)
	}
	if code, body := get(t, h, "/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	p.Fail(errors.New("cannot reach the API server at 10.0.0.1:6443: dial tcp: connection refused\n\x1b[31m"), time.Now())
	if code, body := get(t, h, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "nothing read yet: cannot reach the API server at 10.0.0.1:6443") || strings.Contains(body, "\x1b") {
		t.Errorf("/readyz with the first read failing: %d %q", code, body)
	}

	r := scenario(t, "dev-ingester")
	p.Update(r, time.Second)
	if code, body := get(t, h, "/readyz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/readyz after a read: %d %q", code, body)
	}
	code, body := get(t, h, "/report")
	var want bytes.Buffer
	pr, _ := report.NewPrinter("json", report.Options{})
	if err := pr.PrintReport(&want, r); err != nil {
		t.Fatal(err)
	}
	if code != http.StatusOK || body != want.String() {
		t.Errorf("/report: %d, want the bytes audit -o json prints\n%s", code, body)
	}
	code, body = get(t, h, "/metrics")
	for _, s := range []string{
		`kubectl_diagnose_workload_serving_copies{kind="Deployment",name="telemetry-ingester",namespace="dev-ingester"} 0`,
		`kubectl_diagnose_workload_shape{kind="Deployment",name="telemetry-ingester",namespace="dev-ingester",shape="live-but-idle"} 1`,
		"# TYPE kubectl_diagnose_read_errors_total counter",
		"go_goroutines ", "process_resident_memory_bytes ",
	} {
		if code != http.StatusOK || !strings.Contains(body, s) {
			t.Errorf("/metrics (%d) lacks %q", code, s)
		}
	}

	// Reads fail after a good one: not ready, and the reason says since when and of when the
	// picture is.
	since := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	p.Fail(errors.New("watch of pods: connection refused"), since)
	p.Fail(errors.New("watch of pods: connection refused again"), since.Add(time.Minute))
	code, body = get(t, h, "/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "reads failing since 2026-12-01T10:00:00Z: watch of pods: connection refused again; the picture is of 2026-11-24T14:30:20Z") {
		t.Errorf("/readyz with reads failing: %d %q", code, body)
	}
	if _, body := get(t, h, "/metrics"); !strings.Contains(body, "kubectl_diagnose_read_failing 1") || !strings.Contains(body, "kubectl_diagnose_read_errors_total 3") {
		t.Errorf("/metrics with reads failing lacks read_failing 1 and 3 errors")
	}
	if code, _ := get(t, h, "/report"); code != http.StatusOK {
		t.Errorf("/report with reads failing: %d, want the last picture", code)
	}
	p.Update(r, time.Second)
	if code, _ := get(t, h, "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after reads recovered: %d", code)
	}
	if code, _ := get(t, h, "/nothing"); code != http.StatusNotFound {
		t.Errorf("/nothing: %d, want 404", code)
	}
}

func TestServeStopsWhenTheContextEnds(t *testing.T) {
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(ln.Addr().String()); err == nil || !strings.Contains(err.Error(), "listen on "+ln.Addr().String()) {
		t.Errorf("a second listener on the same port: %v", err)
	}
	p := &Picture{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, Handler(p, NewCollector(p, nil), io.Discard, Options{})) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after cancel: %v", err)
		}
	case <-time.After(ShutdownGrace + time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/healthz"); err == nil {
		t.Error("the server still answers after it stopped")
	}
}

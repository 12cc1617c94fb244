package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAListCutOffByTheServerIsOneLine: an API server that gives up on a list mid-answer (its own
// request timeout, or a restart) is one line naming that, exit 1, and none of client-go's own
// log lines ("Unexpected error when reading response body") on stderr beside it.
func TestAListCutOffByTheServerIsOneLine(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a"`)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}))
	srv.EnableHTTP2 = false // a closed connection mid-body: client-go logs it through klog
	srv.StartTLS()
	defer srv.Close()
	kubeconfig := filepath.Join(t.TempDir(), "config")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: abc}
contexts:
- name: cut
  context: {cluster: c, user: u, namespace: telemetry}
current-context: cut
`, srv.URL)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	c := exec.Command(binary(t), "audit", "--kubeconfig", kubeconfig)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	err := c.Run()
	msg := stderr.String()
	if code := exitCode(err); code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q", code, msg)
	}
	if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "error: the API server at ") || !strings.Contains(msg, "cut off its answer to a list") {
		t.Errorf("stderr = %q, want one line saying the server cut off its answer", msg)
	}
}

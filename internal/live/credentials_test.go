package live

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// execPlugin writes a credential plugin that notes each run in runs and then runs body, and a
// kubeconfig whose user gets its credentials from it; the server counts what reaches it.
func execPlugin(t *testing.T, body, timeout string) (src *Source, runs func() int, requests *atomic.Int64) {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "runs")
	plugin := filepath.Join(dir, "sso-login")
	script := fmt.Sprintf("#!/bin/sh\necho $$ >> %q\n%s\n", log, body)
	if err := os.WriteFile(plugin, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	requests = &atomic.Int64{}
	// TLS: client-go reads a user's credentials only for a server it reaches securely.
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		forbiddenStatus(w, r)
	}))
	t.Cleanup(srv.Close)
	kubeconfig := filepath.Join(dir, "config")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: %q
      interactiveMode: Never
contexts:
- name: sso
  context: {cluster: c, user: u, namespace: telemetry}
current-context: sso
`, srv.URL, plugin)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	pids := func() []int {
		data, _ := os.ReadFile(log)
		var out []int
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
		return out
	}
	// A plugin left hanging is ended with the test, never left behind.
	t.Cleanup(func() {
		for _, pid := range pids() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	flags.Timeout = &timeout
	src, err := New(flags, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return src, func() int { return len(pids()) }, requests
}

// TestAFailingCredentialPluginRunsOnce: a plugin that fails (an expired SSO session) is run once
// for one read, not once per request sent at once, and the error names it, not the server.
func TestAFailingCredentialPluginRunsOnce(t *testing.T) {
	src, runs, requests := execPlugin(t, "exit 1", "5s")
	_, err := src.Snapshot(context.Background())
	var cred *CredentialError
	if !errors.As(err, &cred) || cred.Err == nil || !strings.HasPrefix(err.Error(), `the credential plugin "`) ||
		strings.Contains(err.Error(), "cannot reach the API server") || strings.Contains(err.Error(), "getting credentials") {
		t.Errorf("err = %v, want the plugin's failure, not the server's", err)
	}
	if n := runs(); n != 1 {
		t.Errorf("the plugin ran %d times for one read, want once", n)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests reached the server without credentials", n)
	}
}

// TestAHangingCredentialPluginIsBounded: a plugin that never answers (a login prompt nobody
// sees) ends the read at --request-timeout with an error naming it, and at once when the
// read's context ends.
func TestAHangingCredentialPluginIsBounded(t *testing.T) {
	t.Run("--request-timeout", func(t *testing.T) {
		src, runs, requests := execPlugin(t, "exec sleep 60", "1s")
		start := time.Now()
		_, err := src.Snapshot(context.Background())
		took := time.Since(start)
		var cred *CredentialError
		if !errors.As(err, &cred) || cred.Timeout != time.Second || !strings.Contains(err.Error(), "gave no credentials within 1s") {
			t.Errorf("err = %v, want the plugin named with the 1s bound", err)
		}
		if took > 5*time.Second {
			t.Errorf("the read took %v, want about the 1s bound", took)
		}
		if n := runs(); n != 1 {
			t.Errorf("the plugin ran %d times, want once", n)
		}
		if n := requests.Load(); n != 0 {
			t.Errorf("%d requests reached the server", n)
		}
	})
	t.Run("a signal", func(t *testing.T) {
		src, _, _ := execPlugin(t, "exec sleep 60", "30s")
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(300*time.Millisecond, cancel)
		start := time.Now()
		_, err := src.Snapshot(ctx)
		if took := time.Since(start); err == nil || took > 3*time.Second {
			t.Errorf("err %v after %v; want the read to end within moments of its context", err, took)
		}
	})
}

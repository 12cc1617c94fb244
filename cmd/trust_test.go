package cmd

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestFleetContextWithAStuckCredentialPluginIsOneLine: one context's credential plugin never
// answers (a login prompt nobody sees); the others are read and printed, and the stuck one is
// its own warning, at --request-timeout.
func TestFleetContextWithAStuckCredentialPluginIsOneLine(t *testing.T) {
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	plugin := filepath.Join(dir, "sso-login")
	if err := os.WriteFile(plugin, fmt.Appendf(nil, "#!/bin/sh\necho $$ >> %q\nexec sleep 60\n", pids), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		data, _ := os.ReadFile(pids)
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		t.Error("a request reached the server without credentials")
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	kc := filepath.Join(dir, "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: not-a-secret}
- name: sso
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: %q, interactiveMode: Never}
contexts:
- name: a
  context: {cluster: c, user: u, namespace: ns-a}
- name: b
  context: {cluster: c, user: u, namespace: ns-b}
- name: stuck
  context: {cluster: c, user: sso, namespace: ns-stuck}
current-context: a
`, srv.URL, plugin)
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := parseArgs("audit", "--context", "a,stuck,b", "--request-timeout", "1s", "--kubeconfig", kc)
	if err != nil {
		t.Fatal(err)
	}
	o := p.audit
	var out, errOut bytes.Buffer
	o.Out, o.ErrOut = &out, &errOut
	dumps := map[string]string{"a": "dev-ingester", "b": "dev-thumbs"}
	read := o.Source.oneRead()
	o.openContext = func(name string) (*openedSource, error) {
		id, ok := dumps[name]
		if !ok {
			return read.forContext(name).open()
		}
		s := NewSourceOptions(nil)
		s.DumpPath = scenarioDump(id)
		return s.open()
	}
	start := time.Now()
	err = o.runFleet(context.Background())
	took := time.Since(start)
	if err == nil || took > 8*time.Second {
		t.Errorf("fleet ended after %v with %v; want an error for the stuck context at about the 1s bound", took, err)
	}
	if !strings.Contains(out.String(), "deployment/telemetry-ingester") || !strings.Contains(out.String(), "deployment/thumbnailer") {
		t.Errorf("the contexts that answer are not printed:\n%s", out.String())
	}
	want := fmt.Sprintf("warning: context stuck: the credential plugin %q of the kubeconfig user gave no credentials within 1s", plugin)
	if !strings.HasPrefix(errOut.String(), want) || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("stderr = %q, want one line %q...", errOut.String(), want)
	}
}

// TestRequestTimeoutSaysWhatZeroDoes: kubectl's help says 0 waits without bound; here 0 is the
// default bound, and the help says so.
func TestRequestTimeoutSaysWhatZeroDoes(t *testing.T) {
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	f := newRootCmd(streams, hooks{}).PersistentFlags().Lookup("request-timeout")
	if f == nil || !strings.Contains(f.Usage, "0 means 10s") || strings.Contains(f.Usage, "zero means don't timeout") {
		t.Errorf("--request-timeout: %+v", f)
	}
}

package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/http2"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// cutOffList answers every list with the start of a pod list and then aborts the response, as
// kube-apiserver's timeout filter does to a list that outlives its --request-timeout: over HTTP/2
// the stream is reset (INTERNAL_ERROR), over HTTP/1.1 the connection is closed mid-body.
func cutOffList(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a"`)
	w.(http.Flusher).Flush()
	panic(http.ErrAbortHandler)
}

// tlsSource is hostileSource for a TLS server whose certificate it does not check.
func tlsSource(t *testing.T, srv *httptest.Server) *Source {
	t.Helper()
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
	timeout := "5s"
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	flags.Timeout = &timeout
	src, err := New(flags, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return src
}

func TestAListCutOffByTheServerIsNotCalledANonAPIServer(t *testing.T) {
	for _, proto := range []string{"HTTP/2", "HTTP/1.1"} {
		t.Run(proto, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(http.HandlerFunc(cutOffList))
			srv.EnableHTTP2 = proto == "HTTP/2"
			srv.Config.ErrorLog = nil
			srv.StartTLS()
			defer srv.Close()
			_, err := tlsSource(t, srv).Snapshot(context.Background())
			if err == nil {
				t.Fatal("Snapshot succeeded; want an error")
			}
			msg := err.Error()
			t.Log(msg)
			if strings.Contains(msg, "not a Kubernetes API server") || strings.Contains(msg, "\n") {
				t.Errorf("error = %q; want one line that does not call the server something else", msg)
			}
			var serr http2.StreamError
			if cause := errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &serr); !cause {
				t.Errorf("error %q does not wrap the stream reset or the cut connection", msg)
			}
			for _, w := range []string{"cut off its answer to a list", "request timeout", "retry"} {
				if !strings.Contains(msg, w) {
					t.Errorf("error = %q, want it to contain %q", msg, w)
				}
			}
		})
	}
}

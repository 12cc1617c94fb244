package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/net/http2"
)

// cutOffList answers every list with the start of a pod list and then aborts the response, as
// kube-apiserver's timeout filter does to a list that outlives its --request-timeout: over HTTP/2
// the stream is reset (INTERNAL_ERROR), over HTTP/1.1 the connection is closed mid-body.
func cutOffList(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a"`)
	w.(http.Flusher).Flush()
	panic(http.ErrAbortHandler)
}

func TestAListCutOffByTheServerIsNotCalledANonAPIServer(t *testing.T) {
	for _, proto := range []string{"HTTP/2", "HTTP/1.1"} {
		t.Run(proto, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(http.HandlerFunc(cutOffList))
			srv.EnableHTTP2 = proto == "HTTP/2"
			srv.Config.ErrorLog = nil
			srv.StartTLS()
			defer srv.Close()
			_, err := kubeconfigSource(t, srv.URL, ", insecure-skip-tls-verify: true", "5s").Snapshot(context.Background())
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

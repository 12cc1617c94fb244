package tmux

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/controlplane"
)

// apiProxy stands between the console and a real API server, as a load balancer would: it
// passes every request through unchanged, can run a hook before a request is passed on (to
// stop the server at an exact point of a read), and notes what the server answered.
type apiProxy struct {
	srv *httptest.Server

	mu sync.Mutex
	// before, when set, runs before each request is passed on; it may stop the API server.
	before func(*http.Request)
	// seen records which of the watched-for texts a response body contained.
	seen map[string]bool
	look []string
}

func newAPIProxy(t *testing.T, cp *controlplane.ControlPlane, look ...string) *apiProxy {
	t.Helper()
	target, err := url.Parse(cp.Host())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(cp.CAData()) {
		t.Fatal("no CA certificate from the control plane")
	}
	p := &apiProxy{seen: map[string]bool{}, look: look}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = target.Host
		},
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}},
		// Watches stream: pass each event on as it comes.
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			resp.Body = &tap{rc: resp.Body, p: p}
			return nil
		},
		// An API server that is gone drops the connection; so does the proxy, rather than
		// answer 502 for it.
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					_ = conn.Close()
					return
				}
			}
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	// TLS on the console's side too: client-go sends no bearer token over plain HTTP.
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		before := p.before
		p.mu.Unlock()
		if before != nil {
			before(r)
		}
		rp.ServeHTTP(w, r)
	}))
	// HTTP/1.1, so a connection can be dropped as a dying server drops it.
	p.srv.EnableHTTP2 = false
	p.srv.StartTLS()
	t.Cleanup(p.srv.Close)
	return p
}

func (p *apiProxy) setBefore(f func(*http.Request)) {
	p.mu.Lock()
	p.before = f
	p.mu.Unlock()
}

// saw reports whether a response contained text.
func (p *apiProxy) saw(text string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[text]
}

// kubeconfig writes a kubeconfig for the admin that reaches the API server through the proxy.
func (p *apiProxy) kubeconfig(t *testing.T, cp *controlplane.ControlPlane, namespace string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	kc.Clusters["proxied"] = &clientcmdapi.Cluster{Server: p.srv.URL, CertificateAuthorityData: ca}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: cp.AdminConfig().BearerToken}
	kc.Contexts["proxied"] = &clientcmdapi.Context{Cluster: "proxied", AuthInfo: "admin", Namespace: namespace}
	kc.CurrentContext = "proxied"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// tap looks for the proxy's texts in a response body as it streams through; it keeps the end
// of the last read so a text split across two reads is found.
type tap struct {
	rc   io.ReadCloser
	p    *apiProxy
	tail []byte
}

func (t *tap) Read(b []byte) (int, error) {
	n, err := t.rc.Read(b)
	if n > 0 {
		buf := append(t.tail, b[:n]...)
		t.p.mu.Lock()
		for _, x := range t.p.look {
			if bytes.Contains(buf, []byte(x)) {
				t.p.seen[x] = true
			}
		}
		t.p.mu.Unlock()
		keep := min(len(buf), 256)
		t.tail = append([]byte(nil), buf[len(buf)-keep:]...)
	}
	return n, err
}

func (t *tap) Close() error { return t.rc.Close() }

package live

import (
	"context"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// tlsServer is an HTTP/2 server over TLS that counts the connections made to it and answers
// every list with an empty one.
func tlsServer(t *testing.T) (*httptest.Server, *atomic.Int32, []byte) {
	t.Helper()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[]}`)
	}))
	srv.EnableHTTP2 = true
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return srv, &conns, ca
}

// TestSourcesOfOneServerShareOneConnection: twenty sources of one server and identity, eight of
// them at a time each listing with the source's list parallelism, open one connection, not one per
// request that raced to it. (Past 100 requests at once an HTTP/2 client opens another
// connection until the server's settings say how many streams it takes; a fleet may send its
// bound times its list parallelism, 8 × 14 by default, and the stream gate holds them to
// maxStreams.)
func TestSourcesOfOneServerShareOneConnection(t *testing.T) {
	srv, conns, ca := tlsServer(t)
	c := NewConnections()
	var srcs []*Source
	for i := range 20 {
		cfg := &rest.Config{Host: srv.URL, BearerToken: "token-of-admin", TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
		src, err := newSource(cfg, fmt.Sprintf("ctx-%d", i), fmt.Sprintf("ns-%d", i), Options{}, c, nil)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, src)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20*listParallelism)
	bound := make(chan struct{}, 8)
	for _, src := range srcs {
		bound <- struct{}{}
		var mine sync.WaitGroup
		for range listParallelism {
			mine.Add(1)
			wg.Go(func() {
				defer mine.Done()
				if _, err := src.client.CoreV1().Pods(src.namespaces[0]).List(context.Background(), metav1.ListOptions{}); err != nil {
					errs <- err
				}
			})
		}
		go func() { mine.Wait(); <-bound }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections to one server, want 1", n)
	}
	if len(c.shared) != 1 {
		t.Errorf("%d transports for one server and identity, want 1", len(c.shared))
	}
}

// TestConnectionsKeepIdentitiesApart: another token, another server or a config with a dialer
// of its own gets a transport of its own.
func TestConnectionsKeepIdentitiesApart(t *testing.T) {
	c := NewConnections()
	base := &rest.Config{Host: "https://10.0.0.1:6443", BearerToken: "a"}
	same := rest.CopyConfig(base)
	otherToken := rest.CopyConfig(base)
	otherToken.BearerToken = "b"
	otherHost := rest.CopyConfig(base)
	otherHost.Host = "https://10.0.0.2:6443"
	dialer := rest.CopyConfig(base)
	dialer.Dial = (&net.Dialer{}).DialContext
	rt := func(cfg *rest.Config) *transport {
		t.Helper()
		r, err := c.transport(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	first := rt(base)
	if rt(same) != first {
		t.Errorf("the same server and identity got another transport")
	}
	for name, cfg := range map[string]*rest.Config{"another token": otherToken, "another server": otherHost, "a dialer": dialer} {
		if rt(cfg) == first {
			t.Errorf("%s shares the first transport", name)
		}
	}
	if rt(dialer) == rt(dialer) { //nolint:staticcheck // two calls, two configs: a shared transport would make them equal
		t.Errorf("a config with a dialer of its own is shared; it cannot be compared")
	}
}

// TestKubeconfigIsReadOnce: every context's source comes from the one read, with its own
// server and namespace and the flags' overrides, even after the file is gone.
func TestKubeconfigIsReadOnce(t *testing.T) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["east"] = &clientcmdapi.Cluster{Server: "https://east.example:6443", InsecureSkipTLSVerify: true}
	kc.Clusters["west"] = &clientcmdapi.Cluster{Server: "https://west.example:6443", InsecureSkipTLSVerify: true}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: "from-the-file"}
	kc.Contexts["east-shop"] = &clientcmdapi.Context{Cluster: "east", AuthInfo: "admin", Namespace: "shop"}
	kc.Contexts["west-pay"] = &clientcmdapi.Context{Cluster: "west", AuthInfo: "admin", Namespace: "pay"}
	kc.Contexts["west-default"] = &clientcmdapi.Context{Cluster: "west", AuthInfo: "admin"}
	kc.CurrentContext = "east-shop"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &path
	loaded, err := LoadKubeconfig(flags)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if got := loaded.Contexts(); fmt.Sprint(got) != "[east-shop west-default west-pay]" {
		t.Errorf("contexts %v", got)
	}
	tests := []struct {
		context, server, namespace string
	}{
		{"east-shop", "https://east.example:6443", "shop"},
		{"west-pay", "https://west.example:6443", "pay"},
		{"west-default", "https://west.example:6443", "default"},
	}
	for _, tt := range tests {
		src, err := loaded.Source(tt.context, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tt.context, err)
		}
		if i := src.Info(); i.Server != tt.server || i.Context != tt.context || fmt.Sprint(src.Namespaces()) != "["+tt.namespace+"]" {
			t.Errorf("%s: server %s context %s namespaces %v; want %s in %s", tt.context, i.Server, i.Context, src.Namespaces(), tt.server, tt.namespace)
		}
	}
	if len(loaded.conns.shared) != 2 {
		t.Errorf("%d transports for two servers with one identity, want 2", len(loaded.conns.shared))
	}
	if _, err := loaded.Source("north", Options{}); err == nil {
		t.Errorf("a context the kubeconfig does not hold was built")
	}

	// -n and --token apply to every context, as they do to one.
	ns, token := "override", "from-the-flag"
	flags.Namespace, flags.BearerToken = &ns, &token
	src, err := loaded.Source("west-pay", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(src.Namespaces()) != "[override]" {
		t.Errorf("-n gave namespaces %v", src.Namespaces())
	}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(loaded.raw, "west-pay", configOverrides(flags), loaded.access).ClientConfig()
	if err != nil || cfg.BearerToken != token {
		t.Errorf("--token gave %q (%v), want %q", cfg.BearerToken, err, token)
	}
}

// TestStreamGateHoldsListsToOneConnectionButNotWatches: 150 lists at once through one
// transport reach the server at most maxStreams at a time, over one connection, and all end;
// watches held open, as many as the gate's slots, do not keep a list from being sent.
func TestStreamGateHoldsListsToOneConnectionButNotWatches(t *testing.T) {
	var conns, inFlight, peak atomic.Int32
	stop := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			select {
			case <-stop:
			case <-r.Context().Done():
			}
			return
		}
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		raise(&peak, n)
		// Each list is held until as many are in flight as the gate lets through (or a
		// second passed): the peak then measures the gate, not how fast a loaded machine
		// schedules 150 goroutines.
		for deadline := time.Now().Add(time.Second); inFlight.Load() < maxStreams && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		_, _ = fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[]}`)
	}))
	srv.EnableHTTP2 = true
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) })
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	cfg := &rest.Config{Host: srv.URL, BearerToken: "token-of-admin", TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
	src, err := newSource(cfg, "ctx", "ns", Options{}, NewConnections(), nil)
	if err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	errs := make(chan error, 150)
	for range 150 {
		wg.Go(func() {
			if _, err := src.client.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if p := peak.Load(); p > maxStreams || p < maxStreams/2 {
		t.Errorf("%d lists at once at the server, want at most %d and most of them", p, maxStreams)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}

	watchClient, err := src.watchClient()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range maxStreams {
		w, err := watchClient.CoreV1().Pods("ns").Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
	}
	done := make(chan error, 1)
	go func() {
		_, err := src.client.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a list waited behind open watches")
	}
}

// raise sets v to n if n is larger, under concurrent raises.
func raise(v *atomic.Int32, n int32) {
	for p := v.Load(); n > p; p = v.Load() {
		if v.CompareAndSwap(p, n) {
			return
		}
	}
}

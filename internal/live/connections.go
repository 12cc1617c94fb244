package live

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Connections hands out the HTTP transports of sources: sources whose requests go to the same
// server with the same credentials and TLS settings share one, and so one connection pool, and
// each transport opens its first connection to a server alone (firstConn), so that a read of a
// dozen kinds at once, or of twenty contexts of one server, costs one TLS handshake instead of
// one per request that raced to connect. It is safe for concurrent use.
type Connections struct {
	mu     sync.Mutex
	shared map[connKey]*transport
}

// NewConnections returns an empty set of transports.
func NewConnections() *Connections { return &Connections{shared: map[connKey]*transport{}} }

// transport is one shared transport: watches go straight through it, and the requests that
// end (lists, log tails) through its stream gate.
type transport struct {
	watches http.RoundTripper
	lists   http.RoundTripper
	// creds is the gate of a credential plugin's transport, nil without one.
	creds *credentialGate
}

// maxStreams bounds the requests that end (lists, log tails) in flight on one transport. An
// HTTP/2 client opens a second connection, and shakes hands again, when a request finds the
// streams of the first all taken: kube-apiserver allows 100 per connection by default, and
// until a server's settings arrive a client assumes 100. A fleet's contexts of one server
// together may send more than that (the default bound of 8 contexts times a dozen and more
// kinds each); past maxStreams they wait for a stream instead. Watches, which never end on
// their own, are not counted: they would hold the streams of the lists for good.
const maxStreams = 90

// connKey is everything of a REST config that shapes its transport: where it connects and who it
// says it is. Two configs with the same key may share a transport.
type connKey struct {
	host, userAgent                       string
	username, password                    string
	bearerToken, bearerTokenFile          string
	impersonate, impersonateUID           string
	impersonateGroups, impersonateExtra   string
	insecure                              bool
	serverName, caFile, certFile, keyFile string
	caData, certData, keyData, nextProtos string
	disableCompression                    bool
}

// keyOf returns the key of cfg, and false for a config whose transport cannot be compared with
// another's: one with functions (a dialer, a proxy, a wrapper, a transport of its own) or with a
// credential plugin, which keeps state per transport.
func keyOf(cfg *rest.Config) (connKey, bool) {
	if cfg.Transport != nil || cfg.WrapTransport != nil || cfg.Dial != nil || cfg.Proxy != nil ||
		cfg.ExecProvider != nil || cfg.AuthProvider != nil {
		return connKey{}, false
	}
	extra := make([]string, 0, len(cfg.Impersonate.Extra))
	for k, vs := range cfg.Impersonate.Extra {
		extra = append(extra, k+"="+strings.Join(vs, ","))
	}
	slices.Sort(extra)
	t := cfg.TLSClientConfig
	return connKey{
		host: cfg.Host, userAgent: cfg.UserAgent,
		username: cfg.Username, password: cfg.Password,
		bearerToken: cfg.BearerToken, bearerTokenFile: cfg.BearerTokenFile,
		impersonate: cfg.Impersonate.UserName, impersonateUID: cfg.Impersonate.UID,
		impersonateGroups: strings.Join(cfg.Impersonate.Groups, "\x00"), impersonateExtra: strings.Join(extra, "\x00"),
		insecure: t.Insecure, serverName: t.ServerName, caFile: t.CAFile, certFile: t.CertFile, keyFile: t.KeyFile,
		caData: string(t.CAData), certData: string(t.CertData), keyData: string(t.KeyData),
		nextProtos:         strings.Join(t.NextProtos, ","),
		disableCompression: cfg.DisableCompression,
	}, true
}

// clients builds a source's client over cfg, bounded by cfg.Timeout, and the constructor of
// its client for watches, which has no overall timeout (the reflector bounds each watch). A
// one-off read never watches, so that client is built only when asked for. wrap wraps the
// shared transport for this source alone.
func (c *Connections) clients(cfg *rest.Config, wrap func(http.RoundTripper) http.RoundTripper) (kubernetes.Interface, func() (kubernetes.Interface, error), *credentialGate, error) {
	t, err := c.transport(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	client, err := newGroupsClient(cfg, &http.Client{Transport: wrap(t.lists), Timeout: cfg.Timeout})
	if err != nil {
		return nil, nil, nil, err
	}
	watchCfg := rest.CopyConfig(cfg)
	watchCfg.Timeout = 0
	watchClient := sync.OnceValues(func() (kubernetes.Interface, error) {
		return newGroupsClient(watchCfg, &http.Client{Transport: wrap(t.watches)})
	})
	return client, watchClient, t.creds, nil
}

// transport returns the transport of cfg: the one already made for its key, or a new one.
func (c *Connections) transport(cfg *rest.Config) (*transport, error) {
	key, ok := keyOf(cfg)
	if ok {
		c.mu.Lock()
		defer c.mu.Unlock()
		if rt := c.shared[key]; rt != nil {
			return rt, nil
		}
	}
	base, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("build transport: %w", err)
	}
	var rt http.RoundTripper = &firstConn{next: base, hosts: map[string]chan struct{}{}}
	var creds *credentialGate
	if cfg.ExecProvider != nil {
		timeout := cfg.Timeout
		if timeout <= 0 {
			timeout = DefaultRequestTimeout
		}
		creds = &credentialGate{next: rt, command: cfg.ExecProvider.Command, timeout: timeout}
		rt = creds
	}
	t := &transport{watches: rt, lists: &streamGate{next: rt, slots: make(chan struct{}, maxStreams)}, creds: creds}
	if ok {
		c.shared[key] = t
	}
	return t, nil
}

// streamGate lets at most cap(slots) requests be in flight through it: a request holds its slot
// from before it is sent until its answer's body is read to the end or closed.
type streamGate struct {
	next  http.RoundTripper
	slots chan struct{}
}

// WrappedRoundTripper lets client-go see through to the transport, to cancel a timed-out
// request.
func (g *streamGate) WrappedRoundTripper() http.RoundTripper { return g.next }

func (g *streamGate) RoundTrip(req *http.Request) (*http.Response, error) {
	select {
	case g.slots <- struct{}{}:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	release := sync.OnceFunc(func() { <-g.slots })
	resp, err := g.next.RoundTrip(req)
	if err != nil || resp == nil || resp.Body == nil {
		release()
		return resp, err
	}
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: release}
	return resp, nil
}

// releasingBody gives its request's slot back once the body is read to its end or closed,
// whichever comes first.
type releasingBody struct {
	io.ReadCloser
	release func()
}

func (b *releasingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.release()
	}
	return n, err
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}

// firstConn lets the first request to each host connect alone: the others wait until it has its
// connection, then share it (HTTP/2 carries every request of a client over one connection).
// Without it, every request sent before the first connection is up dials and shakes hands on
// its own, and all but one of those connections are closed again.
type firstConn struct {
	next  http.RoundTripper
	mu    sync.Mutex
	hosts map[string]chan struct{}
}

// WrappedRoundTripper lets client-go see through to the transport, to cancel a timed-out
// request.
func (f *firstConn) WrappedRoundTripper() http.RoundTripper { return f.next }

func (f *firstConn) RoundTrip(req *http.Request) (*http.Response, error) {
	host := req.URL.Host
	f.mu.Lock()
	ready, seen := f.hosts[host]
	if !seen {
		ready = make(chan struct{})
		f.hosts[host] = ready
	}
	f.mu.Unlock()
	if seen {
		select {
		case <-ready:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
		return f.next.RoundTrip(req)
	}
	var once sync.Once
	open := func() { once.Do(func() { close(ready) }) }
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { open() }}
	resp, err := f.next.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	if err != nil {
		// No connection came of it: the next request tries on its own, as the waiting ones do.
		f.mu.Lock()
		if f.hosts[host] == ready {
			delete(f.hosts, host)
		}
		f.mu.Unlock()
	}
	open()
	return resp, err
}

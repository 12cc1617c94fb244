package live

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"time"
)

// CredentialError says a kubeconfig's credential plugin (users[].user.exec) gave no
// credentials: it failed, or it did not answer in time. The server was never asked.
type CredentialError struct {
	// Command is the plugin's command, as the kubeconfig names it.
	Command string
	// Timeout is set when the plugin did not answer within it.
	Timeout time.Duration
	// Err is the plugin's failure, when it failed.
	Err error
}

func (e *CredentialError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("the credential plugin %q of the kubeconfig user failed: %v", e.Command, e.Err)
	}
	return fmt.Sprintf("the credential plugin %q of the kubeconfig user gave no credentials within %s; raise --request-timeout if it waits for a login", e.Command, e.Timeout)
}

func (e *CredentialError) Unwrap() error { return e.Err }

// credentialGate stands in front of a transport whose credentials come from an exec plugin,
// which client-go runs inside the request's RoundTrip, outside any context: a plugin that hangs
// held every request, a signal and --request-timeout with it, and one that fails was run again
// by every request sent at once (14 runs, 14 SSO prompts, for one audit). The gate lets one
// request at a time go first while no credentials were obtained, so that those sent with it
// share its outcome: the plugin runs once. Every request returns when its context ends or the
// credential step passes timeout, whatever the plugin does: the step is over once the request
// asks for a connection, which client-go does only with the credentials in hand.
type credentialGate struct {
	next    http.RoundTripper
	command string
	timeout time.Duration

	mu sync.Mutex
	// ok is set once a request got past the credential step; attempt is the request that goes
	// first while it is not.
	ok      bool
	attempt *credentialAttempt
	// failed is the last credential step's error while none has succeeded since.
	failed *CredentialError
}

// credentialAttempt is one request's credential step, which the requests sent with it wait for.
type credentialAttempt struct {
	done chan struct{}
	err  error
}

// WrappedRoundTripper lets client-go see through to the transport, to cancel a timed-out
// request.
func (g *credentialGate) WrappedRoundTripper() http.RoundTripper { return g.next }

func (g *credentialGate) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := g.roundTrip(req)
	var cred *CredentialError
	if errors.As(err, &cred) {
		g.mu.Lock()
		g.failed = cred
		g.mu.Unlock()
	}
	return resp, err
}

// Failed returns the credential step's error when it gave no credentials, and none has since.
func (g *credentialGate) Failed() *CredentialError {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.failed
}

func (g *credentialGate) roundTrip(req *http.Request) (*http.Response, error) {
	g.mu.Lock()
	if g.ok {
		g.mu.Unlock()
		return g.send(req)
	}
	if a := g.attempt; a != nil {
		g.mu.Unlock()
		select {
		case <-a.done:
		case <-req.Context().Done():
			return nil, g.waitEnded(req.Context())
		}
		if a.err != nil {
			return nil, a.err
		}
		return g.send(req)
	}
	a := &credentialAttempt{done: make(chan struct{})}
	g.attempt = a
	g.mu.Unlock()

	resp, err := g.send(req)
	var cred *CredentialError
	g.mu.Lock()
	if errors.As(err, &cred) {
		a.err = err
	} else {
		g.ok, g.failed = true, nil
	}
	// A later request tries again: a refresh of the picture may find the login done.
	g.attempt = nil
	g.mu.Unlock()
	close(a.done)
	return resp, err
}

// send sends req, returning when its context ends or its credential step passes the timeout;
// an error of the credential step is a *CredentialError.
func (g *credentialGate) send(req *http.Request) (*http.Response, error) {
	credentials := make(chan struct{})
	var once sync.Once
	past := func() { once.Do(func() { close(credentials) }) }
	trace := &httptrace.ClientTrace{
		GetConn: func(string) { past() },
		// A request over an HTTP/2 connection already open gets it without asking for one.
		GotConn: func(httptrace.GotConnInfo) { past() },
	}
	type result struct {
		resp *http.Response
		err  error
	}
	out := make(chan result, 1)
	go func() {
		resp, err := g.next.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
		out <- result{resp, err}
	}()
	// abandon leaves the request to the plugin: its answer, if one comes, is closed unread.
	abandon := func() {
		go func() {
			if r := <-out; r.resp != nil && r.resp.Body != nil {
				_ = r.resp.Body.Close() // nobody reads it
			}
		}()
	}
	timer := time.NewTimer(g.timeout)
	defer timer.Stop()
	for {
		select {
		case r := <-out:
			select {
			case <-credentials:
				return r.resp, r.err
			default:
			}
			// It ended before asking for a connection: the plugin failed.
			if r.err != nil && req.Context().Err() == nil {
				return nil, &CredentialError{Command: g.command, Err: unwrapGetting(r.err)}
			}
			return r.resp, r.err
		case <-credentials:
			// Past the plugin: the transport honours the context from here on.
			r := <-out
			return r.resp, r.err
		case <-req.Context().Done():
			select {
			case <-credentials:
				continue
			default:
			}
			abandon()
			return nil, g.waitEnded(req.Context())
		case <-timer.C:
			select {
			case <-credentials:
				continue
			default:
			}
			abandon()
			return nil, &CredentialError{Command: g.command, Timeout: g.timeout}
		}
	}
}

// waitEnded is the error of a request whose context ended in the credential step: its own
// timeout (--request-timeout) ran out in the plugin, or it was cancelled.
func (g *credentialGate) waitEnded(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &CredentialError{Command: g.command, Timeout: g.timeout}
	}
	return ctx.Err()
}

// unwrapGetting drops client-go's "getting credentials: " before the plugin's own error
// (k8s.io/client-go/plugin/pkg/client/auth/exec roundTripper.RoundTrip), which the
// CredentialError says in its own words.
func unwrapGetting(err error) error {
	const prefix = "getting credentials: "
	if rest, ok := strings.CutPrefix(err.Error(), prefix); ok {
		return errors.New(rest)
	}
	return err
}

package live

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

// throttle counts the answers in which the API server asked the client to come back later
// (429, or 503 with Retry-After) and the longest wait it asked for. client-go waits and retries on its
// own; the count lets a progress line say why a read is slow.
type throttle struct {
	mu      sync.Mutex
	n       int
	longest time.Duration
}

// Throttled returns how many answers so far asked the client to retry later, and the longest
// wait one of them asked for. The requests run in parallel, so the waits overlap.
func (s *Source) Throttled() (n int, longest time.Duration) {
	if s.throttle == nil {
		return 0, 0
	}
	s.throttle.mu.Lock()
	defer s.throttle.mu.Unlock()
	return s.throttle.n, s.throttle.longest
}

func (t *throttle) wrap(rt http.RoundTripper) http.RoundTripper {
	return throttleRoundTripper{t: t, next: rt}
}

type throttleRoundTripper struct {
	t    *throttle
	next http.RoundTripper
}

// WrappedRoundTripper returns the transport the wrapper sends through. client-go cancels a
// timed-out request through it, and logs a warning for a wrapper it cannot see through.
func (r throttleRoundTripper) WrappedRoundTripper() http.RoundTripper { return r.next }

func (r throttleRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil || resp == nil {
		return resp, err
	}
	after := resp.Header.Get("Retry-After")
	if resp.StatusCode == http.StatusTooManyRequests || (resp.StatusCode == http.StatusServiceUnavailable && after != "") {
		// client-go reads Retry-After as whole seconds, and waits a second without one.
		wait := time.Second
		if secs, perr := strconv.Atoi(after); perr == nil && secs > 0 {
			wait = time.Duration(secs) * time.Second
		}
		r.t.mu.Lock()
		r.t.n++
		r.t.longest = max(r.t.longest, wait)
		r.t.mu.Unlock()
	}
	return resp, nil
}

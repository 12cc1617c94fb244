package live

import (
	"strings"
	"sync"
)

// progress counts what a read has received per kind and passes the running totals on. The
// listers run in parallel; progress serialises them, so the callback needs no locking of its own
// and sees each kind's count only grow. After stop it drops every report: a page still in flight
// when a read ends must not reach a caller that has moved on.
type progress struct {
	mu      sync.Mutex
	fn      func(what string, n int)
	counts  map[string]int
	stopped bool
}

// newProgress returns a tracker over fn; a nil fn makes every report a no-op.
func newProgress(fn func(what string, n int)) *progress {
	return &progress{fn: fn, counts: map[string]int{}}
}

// add records n more objects of what and reports the kind's total. Empty pages are not
// reported: "reading quotas… 0" says nothing while pods are still arriving.
func (p *progress) add(what string, n int) {
	if p == nil || p.fn == nil || n <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.counts[what] += n
	p.fn(what, p.counts[what])
}

// stop ends reporting; it returns once no report is running.
func (p *progress) stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
}

// plural is the name progress reports a kind under, as kubectl names the resource ("pods").
func (k *kind) plural() string {
	f := strings.Fields(k.Resource)
	return f[len(f)-1]
}

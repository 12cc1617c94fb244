package live

import (
	"context"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
)

// clusterLists shares the lists of cluster-scoped kinds (Nodes) among the sources of one read of
// a fleet: contexts that reach one server with one identity see the same Nodes, so the first of
// them lists each kind and the others take its answer, objects and error alike, instead of
// listing it again. Every source still judges the answer itself (visibility, fatal errors), so
// a forbidden or failed list reads in each context as if it had listed it. It holds the answers
// for as long as it lives: one read of a fleet, never a watch or a later refresh, whose Nodes
// must be current. It is safe for concurrent use.
type clusterLists struct {
	mu      sync.Mutex
	flights map[listKey]*flight
}

func newClusterLists() *clusterLists { return &clusterLists{flights: map[listKey]*flight{}} }

// listKey is what makes two lists the same: the transport's key (server and identity), the kind
// and the selectors sent with it.
type listKey struct {
	conn                  connKey
	kind                  string
	labelSel, fieldSelect string
}

// listed is one list's answer.
type listed struct {
	objs     []runtime.Object
	rv       string
	listType reflect.Type
	err      error
}

// flight is one list shared by the sources that asked for it.
type flight struct {
	done chan struct{}
	res  listed
	// waiting counts the sources waiting for the answer; when the last of them gives up (its
	// read ended), the list is cancelled and forgotten, so a later source lists anew instead of
	// taking a cancellation for an answer.
	waiting int
	cancel  context.CancelFunc
}

// list returns the answer of the list under key, running list for the first source that asks
// and waiting for it for the others. list runs under a context of its own, not the first
// caller's: that caller's read may end (another of its lists failed) while others still wait.
// It keeps the caller's values and is cancelled once no source waits; each request is bounded
// by the client's timeout all the same. The objects are shared: callers must not change them.
func (c *clusterLists) list(ctx context.Context, key listKey, list func(context.Context) listed) (listed, error) {
	c.mu.Lock()
	f := c.flights[key]
	if f == nil {
		lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &flight{done: make(chan struct{}), cancel: cancel}
		c.flights[key] = f
		go func() {
			defer close(f.done)
			defer cancel()
			f.res = list(lctx)
		}()
	}
	f.waiting++
	c.mu.Unlock()
	select {
	case <-f.done:
		c.mu.Lock()
		f.waiting--
		c.mu.Unlock()
		return f.res, nil
	case <-ctx.Done():
		c.mu.Lock()
		f.waiting--
		if f.waiting == 0 {
			select {
			case <-f.done:
				// Answered meanwhile: the answer stays for the sources still to come.
			default:
				f.cancel()
				if c.flights[key] == f {
					delete(c.flights, key)
				}
			}
		}
		c.mu.Unlock()
		return listed{}, ctx.Err()
	}
}

package live

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Debounce is how long Watch waits after a change before it emits: a rollout changes dozens of
// objects within a second, and one snapshot of the result is worth more than dozens of halves.
const Debounce = 500 * time.Millisecond

// retryInterval paces the first read while the server cannot be reached.
const retryInterval = 2 * time.Second

// Watch keeps a snapshot current with informers and emits a fresh one after each burst of
// changes, the first as soon as the caches are filled. Errors (an unreachable server, a watch
// that broke) go to the error channel, which is never closed on error: the informers retry and
// the snapshots resume when the server is back. Both channels close when ctx is done.
//
// The snapshot channel holds at most one value; a slow reader gets the newest snapshot, not a
// backlog of stale ones.
func (s *Source) Watch(ctx context.Context) (<-chan *snapshot.Snapshot, <-chan error) {
	return s.WatchWith(ctx, snapshot.WatchHooks{})
}

// WatchWith is Watch with the reader's hooks: it reports how far its first read has got, as
// SnapshotWithProgress does (hooks.Progress), and hands hooks.Rows a snapshot of the workloads
// alone (Deployments, StatefulSets, DaemonSets) as soon as they are listed. Both are called from
// the read's goroutines, one call at a time, and must not block; Rows is called at most once per
// attempt at the first read. Under hooks.Hold the informers start only once it is closed, so
// that they do not compete with the reader's diagnosis of the first snapshot; changes made
// meanwhile come in the next snapshot.
func (s *Source) WatchWith(ctx context.Context, hooks snapshot.WatchHooks) (<-chan *snapshot.Snapshot, <-chan error) {
	out := make(chan *snapshot.Snapshot, 1)
	errs := make(chan error, 8)
	go func() {
		defer close(out)
		defer close(errs)
		s.watch(ctx, out, errs, hooks)
	}()
	return out, errs
}

// noWatchList makes a reflector list and then watch, instead of streaming its initial list over
// a watch (WatchListClient): the first list is answered from the read the watch starts with.
type noWatchList struct{}

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// asList is the job's read as one list of its kind at the version it was read at. Its items
// are the read's very objects, wrapped (RawExtension), not copied into a typed list's items:
// the reflector takes a typed list's items as shallow copies (meta.ExtractListWithAlloc), so
// every object of the first snapshot came back from the informers as another pointer, and the
// console, which tells a changed object by its pointer, diagnosed the whole namespace again
// with the first snapshot built from the informers while it still held the first read's.
func (j *job) asList() (runtime.Object, error) {
	if j.listType == nil || j.listType.Kind() != reflect.Pointer {
		return nil, fmt.Errorf("no list of %s was read", j.kind.plural())
	}
	l := &metav1.List{ListMeta: metav1.ListMeta{ResourceVersion: j.rv}, Items: make([]runtime.RawExtension, len(j.objs))}
	for i, o := range j.objs {
		l.Items[i].Object = o
	}
	return l, nil
}

func (s *Source) watch(ctx context.Context, out chan *snapshot.Snapshot, errs chan error, hooks snapshot.WatchHooks) {
	report := func(err error) {
		select {
		case errs <- err:
		default: // the reader is behind; it has seen enough errors of this kind
		}
	}
	// One read: it tells which kinds this identity may list, so that no informer is started
	// that would only fail forever, and its lists are the informers' first, so the namespace is
	// read once, not once here and again by every informer.
	interner := newResourceInterner()
	transform := func(obj any) (any, error) {
		snapshot.TrimWatched(obj)
		if p, ok := obj.(*corev1.Pod); ok {
			interner.pod(p)
		}
		return obj, nil
	}
	// The read does the informers' transform to each object as its page arrives, while the
	// read waits on the server: the informers, seeded with these very objects, run it again in
	// their own goroutines while the first snapshot is on screen, and find every field as it
	// leaves it, so they write nothing and never race with a reader of that snapshot. Done after
	// the read, it delayed the first diagnosis by 70-95 ms at 20,000 pods.
	trim := func(obj any) { _, _ = transform(obj) }
	var (
		first *snapshot.Snapshot
		jobs  []*job
	)
	for first == nil {
		snap, js, err := s.read(ctx, hooks.Progress, hooks.Rows, trim)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			report(err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(s.retryAfter()):
			}
			continue
		}
		first, jobs = snap, js
	}
	// The tracker starts from the informers' first lists, the read's very objects: the first
	// snapshot itself when no selector filtered it. Indexed here, before anyone else holds it,
	// the first snapshot is what the second's index is derived from.
	seed := first
	if !s.opts.Selector.Empty() {
		seed = &snapshot.Snapshot{}
		for _, j := range jobs {
			if j.vis == nil {
				j.kind.add(seed, j.objs)
			}
		}
	}
	tracker := snapshot.NewTracker(seed)
	first.Index()
	publish(out, errs, first)

	dirty := make(chan struct{}, 1)
	mark := func() {
		select {
		case dirty <- struct{}{}:
		default:
		}
	}
	// The informers' initial lists are the first read, already published and tracked: only
	// what changed since marks the snapshot dirty.
	handler := cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, _ bool) {
			if o, ok := obj.(runtime.Object); ok && tracker.Put(o) {
				mark()
			}
		},
		UpdateFunc: func(_, obj any) {
			if o, ok := obj.(runtime.Object); ok && tracker.Put(o) {
				mark()
			}
		},
		DeleteFunc: func(obj any) {
			if gone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = gone.Obj
			}
			if o, ok := obj.(runtime.Object); ok && tracker.Delete(o) {
				mark()
			}
		},
	}
	// A reflector whose server refuses connections backs off and retries its watch without
	// telling its error handler (client-go's isWatchErrorRetriable), so an API server that went
	// away would go unnoticed. Every list and watch call therefore reports its outcome here.
	h := &watchHealth{failing: map[string]bool{}}
	observe := func(ctx context.Context, key string, err error) {
		// 410 Gone: the resource version the informer asked for was compacted away. The
		// reflector lists again at once, keeping its store meanwhile; that is no outage.
		if ctx.Err() != nil || isExpired(err) {
			return
		}
		switch h.observe(key, err) {
		case failed:
			report(s.fatal(err))
		case recovered:
			// Every watch runs again: a fresh snapshot says so, even when nothing changed.
			mark()
		}
	}

	watchClient, err := s.watchClient()
	if err != nil {
		report(fmt.Errorf("build watch client for %s: %w", s.info.Server, err))
		return
	}
	var ws []cache.SharedIndexInformer
	// retried are the kinds the first read lost to a transient failure (a 5xx, a timeout):
	// their informers list them again with the reflector's back-off, and their visibility
	// entry stands until one of them has listed. Their failures are that entry, not an outage,
	// and nothing waits for them to sync.
	type retriedKind struct {
		kind, namespace string
		synced          cache.InformerSynced
	}
	var retried []retriedKind
	// again holds, for each informer of ws, whether it lists a kind the first read lost.
	var again []bool
	add := func(j *job) {
		k, ns := j.kind, j.namespace
		key := k.Kind + "/" + ns
		list, watchFn := k.list(s.client, ns), k.watch(watchClient, ns)
		var seed *job
		if j.vis == nil {
			seed = j
		}
		observeKind := observe
		if j.vis != nil {
			observeKind = func(ctx context.Context, _ string, err error) {
				if err == nil && ctx.Err() == nil {
					mark()
				}
			}
		}
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				if seed != nil {
					l, err := seed.asList()
					seed.objs, seed = nil, nil
					if err == nil {
						return l, nil
					}
				}
				obj, err := list(ctx, k.listOptions(s.opts.Selector, opts))
				observeKind(ctx, key, err)
				return obj, err
			},
			WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				w, err := s.openWatch(ctx, watchFn, k.listOptions(s.opts.Selector, opts))
				if err != nil {
					observeKind(ctx, key, err)
					return w, err
				}
				return judgeWatch(w, func(err error) { observeKind(ctx, key, err) }), nil
			},
		}
		inf := cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, noWatchList{}), k.object,
			cache.SharedIndexInformerOptions{Indexers: cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}})
		if j.vis != nil {
			retried = append(retried, retriedKind{kind: k.Kind, namespace: ns, synced: inf.HasSynced})
		}
		ws, again = append(ws, inf), append(again, j.vis != nil)
	}
	for _, j := range jobs {
		if j.vis == nil || j.transient {
			add(j)
		}
	}
	// lost reports whether a visibility entry is of a kind still not listed again.
	lost := func(v snapshot.Visibility) bool {
		for _, r := range retried {
			if r.kind == v.Kind && r.namespace == v.Namespace {
				return !r.synced()
			}
		}
		return true
	}
	for i, inf := range ws {
		if err := inf.SetTransform(transform); err != nil {
			report(err)
		}
		_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			if !isExpired(err) && !again[i] {
				report(s.fatal(err))
			}
		})
		if _, err := inf.AddEventHandler(handler); err != nil {
			report(err)
		}
	}
	// The reader may still be diagnosing the first snapshot; filling the caches now would take
	// the cores from it. The reflectors watch from the first read's resource versions, so a
	// change made meanwhile is seen once they run, not lost.
	if hooks.Hold != nil {
		select {
		case <-hooks.Hold:
		case <-ctx.Done():
			return
		}
	}
	var running sync.WaitGroup
	defer running.Wait()
	synced := make([]cache.InformerSynced, 0, len(ws))
	for i, inf := range ws {
		running.Go(func() { inf.RunWithContext(ctx) })
		if !again[i] {
			synced = append(synced, inf.HasSynced)
		}
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) || ctx.Err() != nil {
		return
	}
	// The first read is over: the informers hold the read's objects, and the rest of it is
	// garbage.
	if s.opts.AfterFirstRead != nil {
		s.opts.AfterFirstRead()
	}

	logs := newLogCache(first, s.now())
	// Rebuilds a snapshot for the tails the fetch budget deferred, when nothing else changes;
	// made stopped, Reset arms it.
	logRetry := time.AfterFunc(time.Hour, mark)
	logRetry.Stop()
	defer logRetry.Stop()
	visibility := first.Visibility
	for {
		select {
		case <-ctx.Done():
			return
		case <-dirty:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(Debounce):
		}
		// Changes during the debounce are in this snapshot; drop their mark.
		select {
		case <-dirty:
		default:
		}
		// A snapshot its reader has not taken is taken back, so that the next says what
		// changed since the one the reader has.
		select {
		case unread := <-out:
			tracker.Retract(unread)
		default:
		}
		// The tracker's objects, copied only for the kinds that changed; the index derived
		// from the last snapshot's with what changed.
		snap := tracker.Snapshot()
		snap.Namespaces, snap.Source = s.Namespaces(), s.info
		for _, v := range visibility {
			if v.Kind != "pods/log" && lost(v) {
				snap.Visibility = append(snap.Visibility, v)
			}
		}
		// The server filtered the selectable kinds; the kinds that follow their workloads
		// (ReplicaSets) are listed whole and kept only with a selected owner. Filtered, a
		// snapshot does not say what changed, and everything after costs the namespace.
		snap = snap.FilterWorkloads(s.opts.Selector)
		snap.Index()
		if wait := s.cachedLogs(ctx, snap, logs); wait > 0 {
			logRetry.Reset(wait)
		}
		snap.ReferenceTime = s.now().UTC()
		publish(out, errs, snap)
	}
}

// openWatch opens a watch with no bound on how long it stays open (the reflector asks the server
// to end it after a few minutes), but with the request timeout on the server's answer: a server
// that accepts the connection and never answers is reported as one that does not answer.
func (s *Source) openWatch(ctx context.Context, open cache.WatchFuncWithContext, opts metav1.ListOptions) (watch.Interface, error) {
	ctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(s.timeout, cancel)
	w, err := open(ctx, opts)
	if !timer.Stop() && err != nil {
		err = fmt.Errorf("open watch: %w", context.DeadlineExceeded)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &cancelingWatch{Interface: w, cancel: cancel}, nil
}

// cancelingWatch releases its request's context when the reflector stops it.
type cancelingWatch struct {
	watch.Interface
	cancel context.CancelFunc
}

func (c *cancelingWatch) Stop() {
	c.Interface.Stop()
	c.cancel()
}

// publish replaces an unread snapshot with the newer one, and drops the errors not read yet:
// they came before this snapshot, which the reader takes as the end of any outage, and a reader
// taking them after it would call a current picture stale until the next change.
func publish(out chan *snapshot.Snapshot, errs chan error, snap *snapshot.Snapshot) {
	for drained := false; !drained; {
		select {
		case superseded := <-errs:
			_ = superseded
		default:
			drained = true
		}
	}
	for {
		select {
		case out <- snap:
			return
		default:
		}
		select {
		case <-out:
		default:
		}
	}
}

// isExpired reports a 410 Gone for a compacted resource version, as client-go's reflector tells
// it (isExpiredError).
func isExpired(err error) bool {
	return err != nil && (apierrors.IsResourceExpired(err) || apierrors.IsGone(err))
}

func (s *Source) retryAfter() time.Duration {
	if s.retry > 0 {
		return s.retry
	}
	return retryInterval
}

// watchHealth tracks which informers' last list or watch call failed.
type watchHealth struct {
	mu      sync.Mutex
	failing map[string]bool
}

type healthChange int

const (
	unchanged healthChange = iota
	failed                 // a call failed
	recovered              // the last failing informer's call succeeded
)

func (h *watchHealth) observe(key string, err error) healthChange {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		h.failing[key] = true
		return failed
	}
	if !h.failing[key] {
		return unchanged
	}
	delete(h.failing, key)
	if len(h.failing) == 0 {
		return recovered
	}
	return unchanged
}

// errDropped is what a watch that closed at once, with nothing delivered, means.
var errDropped = errors.New("every connection closes before the server answers")

// settleTime is how long a watch must stay open, when it delivers nothing, to count as running.
const settleTime = time.Second

// judgeWatch reports whether w runs: with nil once it delivers an event or stays open for
// settleTime, with errDropped if it closes before either. client-go answers a watch whose
// connection drops again and again (a load balancer before an API server that is gone) with an
// empty watch and no error, and the reflector retries it forever without a word; the call's
// error alone would call that server healthy.
func judgeWatch(w watch.Interface, report func(error)) watch.Interface {
	j := &judgedWatch{inner: w, out: make(chan watch.Event), stop: make(chan struct{})}
	go j.run(report)
	return j
}

type judgedWatch struct {
	inner watch.Interface
	out   chan watch.Event
	stop  chan struct{}
	once  sync.Once
}

func (j *judgedWatch) run(report func(error)) {
	defer close(j.out)
	settled := time.NewTimer(settleTime)
	defer settled.Stop()
	judged := false
	judge := func(err error) {
		if !judged {
			judged = true
			report(err)
		}
	}
	in := j.inner.ResultChan()
	for {
		select {
		case <-j.stop:
			return
		case <-settled.C:
			judge(nil)
		case ev, ok := <-in:
			if !ok {
				select {
				case <-j.stop: // stopped by the reflector, not dropped
				default:
					judge(errDropped)
				}
				return
			}
			judge(nil)
			select {
			case j.out <- ev:
			case <-j.stop:
				return
			}
		}
	}
}

func (j *judgedWatch) Stop() {
	j.once.Do(func() {
		close(j.stop)
		j.inner.Stop()
	})
}

func (j *judgedWatch) ResultChan() <-chan watch.Event { return j.out }

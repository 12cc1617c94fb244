package live

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Debounce is how long Watch waits after a change before it emits: a rollout changes dozens of
// objects within a second, and one snapshot of the result is worth more than dozens of halves.
const Debounce = 500 * time.Millisecond

// logTTL is how long a fetched log tail stays fresh while watching; a copy whose restart count
// changed is fetched again at once.
const logTTL = 15 * time.Second

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
	out := make(chan *snapshot.Snapshot, 1)
	errs := make(chan error, 8)
	go func() {
		defer close(out)
		defer close(errs)
		s.watch(ctx, out, errs)
	}()
	return out, errs
}

type watched struct {
	kind      *kind
	namespace string
	informer  cache.SharedIndexInformer
}

type cachedLog struct {
	log      *snapshot.ContainerLog
	err      error
	restarts int32
	fetched  time.Time
}

func (s *Source) watch(ctx context.Context, out chan *snapshot.Snapshot, errs chan error) {
	report := func(err error) {
		select {
		case errs <- err:
		default: // the reader is behind; it has seen enough errors of this kind
		}
	}
	// A plain read first: it tells which kinds this identity may list, so that no informer is
	// started that would only fail forever.
	var first *snapshot.Snapshot
	for first == nil {
		snap, err := s.Snapshot(ctx)
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
		first = snap
	}
	publish(out, first)

	hidden := map[string]bool{}
	for _, v := range first.Visibility {
		hidden[v.Kind+"/"+v.Namespace] = true
	}
	dirty := make(chan struct{}, 1)
	mark := func() {
		select {
		case dirty <- struct{}{}:
		default:
		}
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { mark() },
		UpdateFunc: func(any, any) { mark() },
		DeleteFunc: func(any) { mark() },
	}
	transform := func(obj any) (any, error) {
		stripManagedFields(obj)
		return obj, nil
	}

	namespaces := s.namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	var factories []informers.SharedInformerFactory
	var ws []watched
	newFactory := func(ns string) informers.SharedInformerFactory {
		opts := []informers.SharedInformerOption{informers.WithTransform(transform)}
		if ns != metav1.NamespaceAll {
			opts = append(opts, informers.WithNamespace(ns))
		}
		f := informers.NewSharedInformerFactoryWithOptions(s.client, 0, opts...)
		factories = append(factories, f)
		return f
	}
	cluster := newFactory(metav1.NamespaceAll)
	for _, ns := range namespaces {
		f := cluster
		if ns != metav1.NamespaceAll {
			f = newFactory(ns)
		}
		for i := range kinds {
			k := &kinds[i]
			if k.Cluster || hidden[k.Kind+"/"+ns] {
				continue
			}
			ws = append(ws, watched{kind: k, namespace: ns, informer: k.informer(f)})
		}
	}
	for i := range kinds {
		k := &kinds[i]
		if k.Cluster && !hidden[k.Kind+"/"] {
			ws = append(ws, watched{kind: k, informer: k.informer(cluster)})
		}
	}
	for _, w := range ws {
		_ = w.informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			report(s.fatal(err))
		})
		if _, err := w.informer.AddEventHandler(handler); err != nil {
			report(err)
		}
	}
	for _, f := range factories {
		f.Start(ctx.Done())
	}
	defer func() {
		for _, f := range factories {
			f.Shutdown()
		}
	}()
	for _, f := range factories {
		f.WaitForCacheSync(ctx.Done())
	}
	if ctx.Err() != nil {
		return
	}

	logs := map[logRequest]cachedLog{}
	visibility := first.Visibility
	// The initial sync marked the snapshot dirty; the first snapshot from the caches follows
	// after one debounce.
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
		snap := &snapshot.Snapshot{Namespaces: s.Namespaces(), Source: s.info}
		for _, v := range visibility {
			if v.Kind != "pods/log" {
				snap.Visibility = append(snap.Visibility, v)
			}
		}
		for _, w := range ws {
			items := w.informer.GetStore().List()
			objs := make([]runtime.Object, 0, len(items))
			for _, it := range items {
				if o, ok := it.(runtime.Object); ok {
					objs = append(objs, o)
				}
			}
			w.kind.add(snap, objs)
		}
		snap.Logs, snap.Visibility = s.cachedLogs(ctx, snap.Pods, logs, snap.Visibility)
		snap.ReferenceTime = s.now().UTC()
		publish(out, snap)
	}
}

// cachedLogs reads the failing copies' tails, reusing a tail fetched recently for the same
// container instance.
func (s *Source) cachedLogs(ctx context.Context, pods []*corev1.Pod, c map[logRequest]cachedLog, vis []snapshot.Visibility) ([]snapshot.ContainerLog, []snapshot.Visibility) {
	restarts := map[logRequest]int32{}
	byName := map[types.NamespacedName]*corev1.Pod{}
	for _, p := range pods {
		byName[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = p
	}
	reqs, vis := capLogRequests(failingLogRequests(pods), vis)
	now := s.now()
	var stale []logRequest
	for _, r := range reqs {
		p := byName[types.NamespacedName{Namespace: r.namespace, Name: r.pod}]
		for _, cs := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			if cs.Name == r.container {
				restarts[r] = cs.RestartCount
			}
		}
		e, ok := c[r]
		if !ok || e.restarts != restarts[r] || now.Sub(e.fetched) > logTTL {
			stale = append(stale, r)
		}
	}
	fetched, errs := s.fetchLogs(ctx, stale, nil)
	for i, r := range stale {
		c[r] = cachedLog{log: fetched[i], err: errs[i], restarts: restarts[r], fetched: now}
	}
	wanted := map[logRequest]bool{}
	logs := make([]*snapshot.ContainerLog, len(reqs))
	lerrs := make([]error, len(reqs))
	for i, r := range reqs {
		wanted[r] = true
		logs[i], lerrs[i] = c[r].log, c[r].err
	}
	for r := range c {
		if !wanted[r] {
			delete(c, r)
		}
	}
	return collectLogs(reqs, logs, lerrs, vis)
}

// publish replaces an unread snapshot with the newer one.
func publish(out chan *snapshot.Snapshot, snap *snapshot.Snapshot) {
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

func (s *Source) retryAfter() time.Duration {
	if s.retry > 0 {
		return s.retry
	}
	return retryInterval
}

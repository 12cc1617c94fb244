package live

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// While watching, a container's tail is fetched again when its instance changed (a restart, the
// current instance stopped running or changed readiness) or, for a running instance, when it is
// logRefresh old; and at most logRefetchRate tails a second on average, logRefetchBurst at once:
// a cluster whose pods change fifty times a second would otherwise have the console ask for tens
// of tails a second.
const (
	logRefetchRate  = 5
	logRefetchBurst = 50
	// logRefresh: a running container's log grows while its instance stays the same. A copy that
	// started clean and began failing without a restart or a change of readiness the watch saw
	// (its upstream went away in the second it was Ready, before any snapshot showed it Ready)
	// would otherwise keep its clean tail for as long as the watch runs, and the engine would
	// see a copy out of readiness with nothing failing. Such tails are the budget's last claim;
	// the ones due within the next half of logRefresh are read with them, so that refreshing
	// builds a snapshot at most every logRefresh/2.
	logRefresh = 30 * time.Second
	// logErrorRetry is how long a tail the server refused waits before it is asked for again.
	logErrorRetry = time.Minute
	// minLogRetry is the least wait before a snapshot is rebuilt only to fetch deferred tails.
	minLogRetry = time.Second
)

// logCache holds the tails a watch fetched, keyed by container, and the budget of fetches.
type logCache struct {
	entries map[logRequest]cachedLog
	budget  tokenBucket
	planner logPlanner
}

type cachedLog struct {
	log *snapshot.ContainerLog
	err error
	// instance identifies the container instance the tail was read from.
	instance instance
	fetched  time.Time
}

// instance identifies a container instance for the cache.
type instance struct {
	key string
	// running: the current instance runs, so its log may grow while key stays the same.
	running bool
}

// newLogCache starts a watch's cache from the tails of its first snapshot, so that the first
// snapshot built from the informers does not ask for all of them again.
func newLogCache(first *snapshot.Snapshot, now time.Time) *logCache {
	c := &logCache{entries: map[logRequest]cachedLog{}, budget: tokenBucket{rate: logRefetchRate, burst: logRefetchBurst, tokens: logRefetchBurst, last: now}}
	if first == nil {
		return c
	}
	reqs := make([]logRequest, len(first.Logs))
	for i := range first.Logs {
		l := &first.Logs[i]
		reqs[i] = logRequest{l.Namespace, l.Pod, l.Container, l.Previous}
	}
	byName := podsByName(first.Pods, reqs)
	podNamed := func(namespace, name string) *corev1.Pod {
		return byName[types.NamespacedName{Namespace: namespace, Name: name}]
	}
	for i := range first.Logs {
		l := &first.Logs[i]
		r := logRequest{l.Namespace, l.Pod, l.Container, l.Previous}
		if inst, ok := instanceOf(podNamed, r); ok {
			c.entries[r] = cachedLog{log: l, instance: inst, fetched: now}
		}
	}
	return c
}

// podsByName finds the pods reqs name, for a snapshot that may not be indexed.
func podsByName(pods []*corev1.Pod, reqs []logRequest) map[types.NamespacedName]*corev1.Pod {
	byName := make(map[types.NamespacedName]*corev1.Pod, len(reqs))
	for _, r := range reqs {
		byName[types.NamespacedName{Namespace: r.namespace, Name: r.pod}] = nil
	}
	for _, p := range pods {
		k := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
		if _, ok := byName[k]; ok {
			byName[k] = p
		}
	}
	return byName
}

// instanceOf identifies the container instance whose tail r asks for: the previous instance
// changes with the restart count only, the current one also when it stops running or its
// readiness changes. A tail read while the copy was Ready cannot say why it is not Ready now:
// kept, it hides the lines that began when readiness fell, and the engine sees a copy out of
// readiness with nothing failing, which it must call progressing.
func instanceOf(podNamed func(namespace, name string) *corev1.Pod, r logRequest) (instance, bool) {
	p := podNamed(r.namespace, r.pod)
	if p == nil {
		return instance{}, false
	}
	for _, cs := range containerStatuses(p) {
		if cs.Name != r.container {
			continue
		}
		if r.previous {
			return instance{key: fmt.Sprintf("%s %d", p.UID, cs.RestartCount)}, true
		}
		state := "waiting"
		switch {
		case cs.State.Running != nil && cs.Ready:
			state = "running ready"
		case cs.State.Running != nil:
			state = "running"
		case cs.State.Terminated != nil:
			state = "terminated"
		}
		return instance{key: fmt.Sprintf("%s %d %s", p.UID, cs.RestartCount, state), running: cs.State.Running != nil}, true
	}
	return instance{}, false
}

// cachedLogs sets snap's tails and log visibility, reusing the cached tail of each container
// instance and fetching the others within the budget: first the containers with no tail at all,
// in the plan's order (every workload's first copy before any second), then the ones whose
// instance changed, then the running ones logRefresh old. A tail deferred by the budget keeps its
// older copy meanwhile. It returns how long to wait before building a snapshot again to fetch
// what was deferred or falls due; zero when nothing was or will.
func (s *Source) cachedLogs(ctx context.Context, snap *snapshot.Snapshot, c *logCache) time.Duration {
	plan := c.planner.planFor(snap, maxLogRequests)
	now := s.now()
	instances := make([]instance, len(plan.reqs))
	var missing, changed, aging []int
	due := false
	retry := time.Duration(0)
	later := func(d time.Duration) {
		if retry == 0 || d < retry {
			retry = max(d, minLogRetry)
		}
	}
	for i, r := range plan.reqs {
		instances[i], _ = instanceOf(snap.Pod, r)
		e, ok := c.entries[r]
		age := now.Sub(e.fetched)
		switch {
		case !ok:
			missing = append(missing, i)
		case e.instance != instances[i]:
			changed = append(changed, i)
		case e.err != nil && age >= logErrorRetry:
			changed = append(changed, i)
		case e.err != nil:
			later(logErrorRetry - age)
		case instances[i].running && age >= logRefresh/2:
			aging = append(aging, i)
			due = due || age >= logRefresh
		case instances[i].running:
			later(logRefresh - age)
		}
	}
	stale := append(missing, changed...)
	if due {
		stale = append(stale, aging...)
	} else {
		for _, i := range aging {
			later(logRefresh - now.Sub(c.entries[plan.reqs[i]].fetched))
		}
	}
	granted := c.budget.take(now, len(stale))
	fetch := make([]logRequest, granted)
	for j, i := range stale[:granted] {
		fetch[j] = plan.reqs[i]
	}
	fetched, errs := s.fetchLogs(ctx, fetch, nil)
	for j, i := range stale[:granted] {
		r := plan.reqs[i]
		if instances[i].running {
			later(logRefresh)
		}
		if e, ok := c.entries[r]; ok && errs[j] != nil && e.err == nil && e.instance == instances[i] {
			// A refresh that failed keeps the tail it would have replaced, true when it was read,
			// and waits logRefresh again.
			e.fetched = now
			c.entries[r] = e
			continue
		}
		c.entries[r] = cachedLog{log: fetched[j], err: errs[j], instance: instances[i], fetched: now}
	}
	deferred := stale[granted:]
	if len(deferred) > 0 {
		later(c.budget.wait(len(deferred)))
	}

	wanted := make(map[logRequest]bool, len(plan.reqs))
	logs := make([]*snapshot.ContainerLog, len(plan.reqs))
	lerrs := make([]error, len(plan.reqs))
	for i, r := range plan.reqs {
		wanted[r] = true
		logs[i], lerrs[i] = c.entries[r].log, c.entries[r].err
	}
	for r := range c.entries {
		if !wanted[r] {
			delete(c.entries, r)
		}
	}
	vis := plan.visibility(snap.Visibility)
	vis = deferredVisibility(plan.reqs, deferred, c, vis)
	snap.Logs, snap.Visibility = collectLogs(plan.reqs, logs, lerrs, vis)
	return retry
}

// deferredVisibility counts, per namespace, the tails the budget deferred that have no older copy.
func deferredVisibility(reqs []logRequest, deferred []int, c *logCache, vis []snapshot.Visibility) []snapshot.Visibility {
	var namespaces []string
	waiting := map[string]int{}
	for _, i := range deferred {
		r := reqs[i]
		if _, cached := c.entries[r]; cached {
			continue
		}
		if _, seen := waiting[r.namespace]; !seen {
			namespaces = append(namespaces, r.namespace)
		}
		waiting[r.namespace]++
	}
	for _, ns := range namespaces {
		vis = append(vis, snapshot.Visibility{Kind: "pods/log", Namespace: ns, Reason: fmt.Sprintf(
			"%s not read yet: while watching, at most %d log tails are read a second", plural(waiting[ns], "log tail", "log tails"), logRefetchRate)})
	}
	return vis
}

// tokenBucket bounds a rate of requests on the source's clock, so tests can drive it.
type tokenBucket struct {
	rate, burst, tokens float64
	last                time.Time
}

// take grants up to n requests now and returns how many.
func (b *tokenBucket) take(now time.Time, n int) int {
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(b.burst, b.tokens+d.Seconds()*b.rate)
		b.last = now
	}
	granted := min(n, int(b.tokens))
	b.tokens -= float64(granted)
	return granted
}

// wait is how long until n requests (at most a burst) can be granted.
func (b *tokenBucket) wait(n int) time.Duration {
	need := min(float64(n), b.burst) - b.tokens
	if need <= 0 {
		return 0
	}
	return time.Duration(need / b.rate * float64(time.Second))
}

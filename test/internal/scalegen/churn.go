package scalegen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
)

// ChurnOptions say how Churn changes a loaded namespace's pods.
type ChurnOptions struct {
	// Namespace whose pods change; default "scale".
	Namespace string
	// Rate is the pod status writes per second; default 50.
	Rate float64
	// Duration of the churn; 0 runs until ctx ends.
	Duration time.Duration
	// ReadyAfter is how long a restarted container stays unready before its readiness probe
	// passes again; default 10 s, the scale pods' probe period.
	ReadyAfter time.Duration
	// Markers is how many healthy workloads Churn keeps out of the churn and breaks one by one,
	// one on each receive from Mark; default 0.
	Markers int
	// Mark, when Markers > 0, asks for the next marker to break.
	Mark <-chan struct{}
	// Seed picks the pods; the same seed restarts the same pods in the same order.
	Seed uint64
	// Workers is how many writes may be in flight at once; default 64, so that at 50 a second a
	// write may take over a second to be answered, as on a loaded 2-core control plane.
	Workers int
	// Logf receives a line every 10 s and one per marker; default none.
	Logf func(format string, args ...any)
}

func (o ChurnOptions) withDefaults() ChurnOptions {
	if o.Namespace == "" {
		o.Namespace = "scale"
	}
	if o.Rate <= 0 {
		o.Rate = 50
	}
	if o.ReadyAfter <= 0 {
		o.ReadyAfter = 10 * time.Second
	}
	if o.Workers <= 0 {
		o.Workers = 64
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return o
}

// ChurnStats count what Churn wrote.
type ChurnStats struct {
	Restarts   int // container restarts written (kubeletsim.Restarted)
	ReadyAgain int // readiness passed again (kubeletsim.ReadyAgain)
	Errors     int // writes the API server refused or did not answer
	// Missed is how many ticks found every worker busy: the API server answered slower than
	// Rate allows, and the achieved rate is (Restarts+ReadyAgain)/Elapsed.
	Missed  int
	Elapsed time.Duration
	// Markers are the workloads broken, in order, with when their last pod's write was answered.
	Markers []Marker
}

// Writes is the churn's status writes, markers not counted.
func (s ChurnStats) Writes() int { return s.Restarts + s.ReadyAgain }

// Marker is one workload Churn broke: each of its pods restarted once and then crash-looped
// (two writes each), so a diagnosis turns it from healthy to starts-and-dies.
type Marker struct {
	Workload string
	Pods     int
	At       time.Time // the last write answered
}

// churnPod is one pod's latest status as Churn wrote it.
type churnPod struct {
	pod     *corev1.Pod
	was     corev1.PodStatus // before the churn, written back when it ends
	touched bool
	unready time.Time // when it was restarted; zero while ready
	busy    bool      // a write is in flight
}

// Churn changes the statuses of a loaded namespace's pods as their kubelets would write them,
// at opts.Rate writes a second, until opts.Duration has passed or ctx ends: a running, ready pod
// of a healthy workload has its containers restarted (exit 137 OOMKilled or exit 1 Error, in
// turn), and ReadyAfter later its readiness passes again, so once ReadyAfter has passed (it
// logs "steady") half the writes are restarts and half readiness flips; before, only the
// restarts go out, at half the rate. A write goes out on a tick only when a worker is free;
// ticks that find none are counted as missed, not made up later, so the rate is never above
// Rate. Markers are set aside first and broken on Mark. cfg's identity must be able to patch
// pods/status; the writes carry field manager "kubelet".
func Churn(ctx context.Context, cfg *rest.Config, opts ChurnOptions) (ChurnStats, error) {
	opts = opts.withDefaults()
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = float32(4*opts.Rate), int(8*opts.Rate)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.UserAgent = "kubelet/v1.37.2 (linux/amd64) kubernetes/scalegen-churn"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return ChurnStats{}, fmt.Errorf("churn client: %w", err)
	}
	c, err := newChurner(ctx, cs, opts)
	if err != nil {
		return ChurnStats{}, err
	}
	return c.run(ctx)
}

type churner struct {
	cs   kubernetes.Interface
	opts ChurnOptions
	rng  *rand.Rand

	mu      sync.Mutex
	pods    map[types.UID]*churnPod
	ready   []types.UID // churnable: running, ready, not busy (order is the rng's)
	unready []types.UID // restarted, oldest first
	markers [][]types.UID
	names   []string
	stats   ChurnStats
	serial  int
}

// newChurner lists the namespace and sorts its pods into the churnable ones (every container
// running and ready, no deletion, of a workload whose pods are all like that) and the markers'.
func newChurner(ctx context.Context, cs kubernetes.Interface, opts ChurnOptions) (*churner, error) {
	var items []corev1.Pod
	lo := metav1.ListOptions{Limit: 5000}
	for {
		list, err := cs.CoreV1().Pods(opts.Namespace).List(ctx, lo)
		if err != nil {
			return nil, fmt.Errorf("churn: list pods: %w", err)
		}
		items = append(items, list.Items...)
		if list.Continue == "" {
			break
		}
		lo.Continue = list.Continue
	}
	// A marker must be healthy before it breaks: its Service (of its name) selects its pods,
	// and none of them has restarted, which the engine would call starts-and-dies already.
	svcs, err := cs.CoreV1().Services(opts.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("churn: list services: %w", err)
	}
	selector := map[string]map[string]string{}
	for _, svc := range svcs.Items {
		selector[svc.Name] = svc.Spec.Selector
	}
	byApp := map[string][]*corev1.Pod{}
	healthyApp := map[string]bool{}
	markable := map[string]bool{}
	for i := range items {
		p := &items[i]
		app := p.Labels["app"]
		if app == "" {
			continue
		}
		if _, seen := healthyApp[app]; !seen {
			healthyApp[app] = true
			markable[app] = len(selector[app]) > 0
		}
		byApp[app] = append(byApp[app], p)
		if !runningAndReady(p) {
			healthyApp[app] = false
		}
		if restarted(p) || len(selector[app]) == 0 || !selects(selector[app], p.Labels) {
			markable[app] = false
		}
	}
	apps := make([]string, 0, len(byApp))
	for app, ok := range healthyApp {
		if ok {
			apps = append(apps, app)
		}
	}
	sort.Strings(apps)
	c := &churner{cs: cs, opts: opts, rng: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)), pods: map[types.UID]*churnPod{}}
	c.rng.Shuffle(len(apps), func(i, j int) { apps[i], apps[j] = apps[j], apps[i] })
	for _, app := range apps {
		var uids []types.UID
		for _, p := range byApp[app] {
			c.pods[p.UID] = &churnPod{pod: p, was: *p.Status.DeepCopy()}
			uids = append(uids, p.UID)
		}
		if len(c.markers) < opts.Markers && markable[app] {
			c.markers = append(c.markers, uids)
			c.names = append(c.names, app)
			continue
		}
		c.ready = append(c.ready, uids...)
	}
	if len(c.markers) < opts.Markers {
		return nil, fmt.Errorf("churn: %d markers asked for, but %s has %d healthy workloads whose pods never restarted", opts.Markers, opts.Namespace, len(c.markers))
	}
	if len(c.ready) == 0 {
		return nil, fmt.Errorf("churn: no running, ready pod of a healthy workload in %s", opts.Namespace)
	}
	c.rng.Shuffle(len(c.ready), func(i, j int) { c.ready[i], c.ready[j] = c.ready[j], c.ready[i] })
	return c, nil
}

func restarted(p *corev1.Pod) bool {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.RestartCount > 0 || cs.LastTerminationState.Terminated != nil {
			return true
		}
	}
	return false
}

func runningAndReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil || !cs.Ready {
			return false
		}
	}
	return true
}

// job is one write: the pod and the status to patch it to, computed when the job is picked.
type job struct {
	uid     types.UID
	restart bool
}

func (c *churner) run(parent context.Context) (ChurnStats, error) {
	opts := c.opts
	ctx := parent
	if opts.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(parent, opts.Duration)
		defer cancel()
	}
	opts.Logf("scalegen: churn: %d pods to churn at %.0f writes/s; markers %v", len(c.ready), opts.Rate, c.names)
	jobs := make(chan job)
	var wg sync.WaitGroup
	for range opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A write picked before the end is made whole: under ctx, its client's rate
			// limiter would refuse a wait that outlasts the run's deadline, an error the
			// API server never saw.
			for j := range jobs {
				c.write(parent, j)
			}
		}()
	}
	start := time.Now()
	tick := time.NewTicker(time.Duration(float64(time.Second) / opts.Rate))
	defer tick.Stop()
	report := time.NewTicker(10 * time.Second)
	defer report.Stop()
	lastWrites := 0
	ticks := 0
	steady := time.AfterFunc(opts.ReadyAfter, func() {
		opts.Logf("scalegen: churn: steady: the first restarts' readiness is due, %.0f writes/s from now", opts.Rate)
	})
	defer steady.Stop()
	var markWG sync.WaitGroup
	nextMarker := 0
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-report.C:
			c.mu.Lock()
			s := c.stats
			c.mu.Unlock()
			opts.Logf("scalegen: churn: %.1f writes/s over the last 10 s (%d restarts, %d ready again, %d errors, %d ticks missed in all)",
				float64(s.Writes()-lastWrites)/10, s.Restarts, s.ReadyAgain, s.Errors, s.Missed)
			lastWrites = s.Writes()
		case <-opts.Mark:
			if nextMarker >= len(c.markers) {
				opts.Logf("scalegen: churn: no marker left to break")
				continue
			}
			i := nextMarker
			nextMarker++
			markWG.Add(1)
			go func() {
				defer markWG.Done()
				c.breakMarker(ctx, i)
			}()
		case now := <-tick.C:
			ticks++
			j, ok := c.pick(now, ticks%2 == 0)
			if !ok {
				continue
			}
			select {
			case jobs <- j:
			default:
				c.mu.Lock()
				c.pods[j.uid].busy = false
				c.putBack(j)
				c.stats.Missed++
				c.mu.Unlock()
			}
		}
	}
	close(jobs)
	wg.Wait()
	markWG.Wait()
	c.mu.Lock()
	c.stats.Elapsed = time.Since(start)
	stats := c.stats
	c.mu.Unlock()
	if parent.Err() == nil {
		c.restore(parent)
	}
	return stats, nil
}

// restore writes back the status every pod it changed had before the churn (the markers'
// too), so the next run starts from the same settled namespace: a benchmark's reset, not
// something a kubelet does (it never lowers a restart count). These writes are not in the stats.
func (c *churner) restore(ctx context.Context) {
	c.mu.Lock()
	var left []*churnPod
	for _, p := range c.pods {
		if p.touched {
			left = append(left, p)
		}
	}
	c.mu.Unlock()
	failed := writeStatuses(ctx, c.cs, c.opts.Workers, left, func(p *churnPod) corev1.PodStatus { return p.was })
	c.opts.Logf("scalegen: churn: the %d pods it changed have their statuses from before again (%d writes failed)", len(left), failed)
}

// writeStatuses patches each pod's status to status(p) on workers goroutines and returns how
// many writes failed.
func writeStatuses(ctx context.Context, cs kubernetes.Interface, workers int, pods []*churnPod, status func(*churnPod) corev1.PodStatus) int {
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed int
	)
	next := make(chan *churnPod)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				if _, err := patchStatus(ctx, cs, p.pod, status(p)); err != nil {
					mu.Lock()
					failed++
					mu.Unlock()
				}
			}
		}()
	}
	for _, p := range pods {
		next <- p
	}
	close(next)
	wg.Wait()
	return failed
}

// Reset writes the status kubeletsim.Settle gives every pod of namespace whose containers
// restarted where their settled state has not, as Steady first wrote them (with new container
// IDs and times): for a namespace churned by a run that could not restore it. It returns how many
// pods it wrote.
func Reset(ctx context.Context, cfg *rest.Config, namespace string, logf func(string, ...any)) (int, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 1000, 2000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, fmt.Errorf("reset client: %w", err)
	}
	list, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("reset: list pods: %w", err)
	}
	world := World(Options{})
	var todo []*churnPod
	settled := map[types.UID]corev1.PodStatus{}
	now := time.Now()
	for i := range list.Items {
		p := &list.Items[i]
		if p.DeletionTimestamp != nil || p.Status.StartTime == nil || !restarted(p) {
			continue
		}
		base := p.DeepCopy()
		base.Status = corev1.PodStatus{QOSClass: p.Status.QOSClass}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled {
				base.Status.Conditions = append(base.Status.Conditions, c)
			}
		}
		st := kubeletsim.Settle(world, base, p.Spec.NodeName, p.Status.PodIP, p.Status.StartTime.Time, now).Status
		if restarted(&corev1.Pod{Status: st}) {
			continue // its spec crash-loops: the restarts are its own
		}
		settled[p.UID] = st
		todo = append(todo, &churnPod{pod: p})
	}
	failed := writeStatuses(ctx, cs, 32, todo, func(p *churnPod) corev1.PodStatus { return settled[p.pod.UID] })
	logf("scalegen: reset: %d pods written back to their settled status, %d failed", len(todo)-failed, failed)
	if failed > 0 {
		return len(todo) - failed, fmt.Errorf("reset: %d of %d status writes failed", failed, len(todo))
	}
	return len(todo), nil
}

// pick chooses the next write: on a restart tick a ready pod's restart, on the others the
// readiness of the restarted pod that waited longest, once ReadyAfter has passed for it. The
// ticks alternate, so restarts go at half the rate and, from ReadyAfter on, readiness flips at
// the other half: a steady Rate with each restarted pod unready for ReadyAfter. The pod is marked
// busy until its write returns.
func (c *churner) pick(now time.Time, restart bool) (job, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !restart {
		if len(c.unready) == 0 {
			return job{}, false
		}
		uid := c.unready[0]
		p := c.pods[uid]
		if p.busy || now.Sub(p.unready) < c.opts.ReadyAfter {
			return job{}, false
		}
		c.unready = c.unready[1:]
		p.busy = true
		return job{uid: uid}, true
	}
	if len(c.ready) == 0 {
		return job{}, false
	}
	uid := c.ready[0]
	c.ready = c.ready[1:]
	c.pods[uid].busy = true
	return job{uid: uid, restart: true}, true
}

// putBack returns a job's pod to the queue it came from, at the front.
func (c *churner) putBack(j job) {
	if j.restart {
		c.ready = append([]types.UID{j.uid}, c.ready...)
	} else {
		c.unready = append([]types.UID{j.uid}, c.unready...)
	}
}

func (c *churner) write(ctx context.Context, j job) {
	c.mu.Lock()
	p := c.pods[j.uid]
	pod := p.pod
	c.serial++
	oom := c.serial%2 == 0
	c.mu.Unlock()
	now := time.Now()
	var st corev1.PodStatus
	var err error
	if j.restart {
		code, reason := int32(1), "Error"
		if oom {
			code, reason = 137, "OOMKilled"
		}
		st, err = kubeletsim.Restarted(pod, "", code, reason, now)
	} else {
		st = kubeletsim.ReadyAgain(pod, now)
	}
	var out *corev1.Pod
	if err == nil {
		out, err = c.patch(ctx, pod, st)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p.busy = false
	if err != nil {
		if ctx.Err() == nil {
			c.stats.Errors++
			c.opts.Logf("scalegen: churn: %s: %v", pod.Name, err)
		}
		// A pod the API server did not take the write for stays as it was; it is not churned again.
		return
	}
	p.pod, p.touched = out, true
	if j.restart {
		c.stats.Restarts++
		p.unready = now
		c.unready = append(c.unready, j.uid)
	} else {
		c.stats.ReadyAgain++
		p.unready = time.Time{}
		c.ready = append(c.ready, j.uid)
	}
}

func (c *churner) patch(ctx context.Context, pod *corev1.Pod, st corev1.PodStatus) (*corev1.Pod, error) {
	return patchStatus(ctx, c.cs, pod, st)
}

// patchStatus replaces the pod's status as the kubelet's status manager does, by field manager
// kubelet.
func patchStatus(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, st corev1.PodStatus) (*corev1.Pod, error) {
	body, err := json.Marshal(map[string]any{"status": st})
	if err != nil {
		return nil, err
	}
	return cs.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, body,
		metav1.PatchOptions{FieldManager: "kubelet"}, "status")
}

// breakMarker restarts every pod of marker i once (exit 1) and then has it crash-loop, the
// pods in parallel, and records when the last write was answered.
func (c *churner) breakMarker(ctx context.Context, i int) {
	uids := c.markers[i]
	var wg sync.WaitGroup
	errs := make([]error, len(uids))
	for k, uid := range uids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.mu.Lock()
			pod := c.pods[uid].pod
			c.mu.Unlock()
			st, err := kubeletsim.Restarted(pod, "", 1, "Error", time.Now())
			if err == nil {
				pod, err = c.patch(ctx, pod, st)
			}
			if err == nil {
				st, err = kubeletsim.CrashLooping(pod, 1, time.Now())
			}
			if err == nil {
				pod, err = c.patch(ctx, pod, st)
			}
			if err != nil {
				errs[k] = err
				return
			}
			c.mu.Lock()
			c.pods[uid].pod, c.pods[uid].touched = pod, true
			c.mu.Unlock()
		}()
	}
	wg.Wait()
	at := time.Now()
	if err := errors.Join(errs...); err != nil {
		c.opts.Logf("scalegen: churn: marker %s: %v", c.names[i], err)
		return
	}
	c.mu.Lock()
	c.stats.Markers = append(c.stats.Markers, Marker{Workload: c.names[i], Pods: len(uids), At: at})
	c.mu.Unlock()
	c.opts.Logf("scalegen: churn: marker %s broken (%d pods) at %d ms", c.names[i], len(uids), at.UnixMilli())
}

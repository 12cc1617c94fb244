package kubeletsim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// DefaultTimeScale is how many simulated seconds pass per real second unless Options say
// otherwise: a 10 s back-off takes 1 s, a 5m0s one 30 s.
const DefaultTimeScale = 10

// Options configure a Sim.
type Options struct {
	// Nodes to register; default DefaultNodes("sim", 3).
	Nodes []NodeSpec
	// Namespaces limits which pods this Sim schedules and runs; empty means all. Several Sims can
	// share a control plane when their namespaces and node names differ.
	Namespaces []string
	// TimeScale accelerates the kubelet's and scheduler's clocks (back-offs, probe periods,
	// heartbeats, program delays); default DefaultTimeScale. Timestamps written to the API are
	// real wall-clock times, so durations between them are compressed by this factor while
	// messages keep the nominal values ("back-off 40s").
	TimeScale float64
	// KeepNodes leaves the Node objects behind when the Sim stops.
	KeepNodes bool
	// Logf receives errors the simulation survives (default: dropped).
	Logf func(format string, args ...any)
}

// Sim is a simulated scheduler and kubelet for a set of fake nodes.
type Sim struct {
	cs    kubernetes.Interface
	world *World
	opts  Options
	scale float64
	logf  func(string, ...any)
	nodes []*node
	sched *schedulerRecorder

	logPort   int
	podLister corelisters.PodLister
	pvcLister corelisters.PersistentVolumeClaimLister
	scLister  storagelisters.StorageClassLister
	schedKick chan struct{}
	assumed   map[types.UID]assumedPod // scheduling goroutine only

	mu      sync.Mutex
	workers map[types.UID]*podWorker
	byName  map[string]types.UID // namespace/name -> uid

	cancel  context.CancelFunc
	done    sync.WaitGroup
	srv     *http.Server
	started bool
}

// New returns a Sim that acts through cfg (which must be allowed to write nodes, pods/status,
// pods/binding, events and leases, and to read secrets, configmaps, persistentvolumeclaims and
// storageclasses) in world.
func New(cfg *rest.Config, world *World, opts Options) (*Sim, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 500, 1000
	cfg.UserAgent = "kubelet/v1.37.2 (linux/amd64) kubernetes/kubeletsim"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeletsim client: %w", err)
	}
	if world == nil {
		world = NewWorld()
	}
	if len(opts.Nodes) == 0 {
		opts.Nodes = DefaultNodes("sim", 3)
	}
	if opts.TimeScale <= 0 {
		opts.TimeScale = DefaultTimeScale
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	s := &Sim{
		cs: cs, world: world, opts: opts, scale: opts.TimeScale, logf: logf,
		assumed: map[types.UID]assumedPod{}, workers: map[types.UID]*podWorker{}, byName: map[string]types.UID{}, schedKick: make(chan struct{}, 1),
	}
	for i, spec := range opts.Nodes {
		s.nodes = append(s.nodes, &node{spec: spec, index: i + 1, images: map[string]int64{}})
	}
	s.sched = newSchedulerRecorder(cs, "default-scheduler-kubeletsim", s.scale, logf)
	return s, nil
}

// World is the simulation's world, to change while it runs.
func (s *Sim) World() *World { return s.world }

// TimeScale is the simulated seconds per real second.
func (s *Sim) TimeScale() float64 { return s.scale }

// NodeNames are the registered nodes.
func (s *Sim) NodeNames() []string {
	var out []string
	for _, n := range s.nodes {
		out = append(out, n.spec.Name)
	}
	return out
}

// LogPort is the port of the kubelet log endpoint on 127.0.0.1 (valid after Start).
func (s *Sim) LogPort() int { return s.logPort }

// Start registers the nodes, starts the log endpoint, the scheduler and the kubelet loops, and
// returns once the pod cache is synced. Stop (or the end of ctx) ends them.
func (s *Sim) Start(ctx context.Context) error {
	if s.started {
		return errors.New("kubeletsim: already started")
	}
	s.started = true
	l, srv, err := s.startLogServer()
	if err != nil {
		return err
	}
	s.srv = srv
	s.logPort = l.Addr().(*net.TCPAddr).Port
	for _, n := range s.nodes {
		n.events = newRecorder(s.cs, "kubelet", n.spec.Name, s.scale, s.logf)
		if err := s.register(ctx, n); err != nil {
			_ = srv.Close()
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	factory := informers.NewSharedInformerFactory(s.cs, 0)
	podInformer := factory.Core().V1().Pods()
	s.podLister = podInformer.Lister()
	// Claims and classes, for the VolumeBinding PreFilter.
	s.pvcLister = factory.Core().V1().PersistentVolumeClaims().Lister()
	s.scLister = factory.Storage().V1().StorageClasses().Lister()
	_, _ = podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.onPod(ctx, obj) },
		UpdateFunc: func(_, obj any) { s.onPod(ctx, obj) },
		DeleteFunc: s.onPodDelete,
	})
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			cancel()
			_ = srv.Close()
			return fmt.Errorf("kubeletsim: %v cache did not sync", typ)
		}
	}
	s.goRun(func() { s.sched.run(ctx) })
	for _, n := range s.nodes {
		s.goRun(func() { n.events.run(ctx) })
	}
	s.goRun(func() { s.scheduleLoop(ctx) })
	s.goRun(func() { s.heartbeat(ctx) })
	s.goRun(func() { <-ctx.Done(); factory.Shutdown() })
	return nil
}

// Run is Start, then waits for ctx to end and stops.
func (s *Sim) Run(ctx context.Context) error {
	if err := s.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	s.Stop()
	return nil
}

// Stop ends every loop and, unless KeepNodes, deletes the nodes and (as the pod garbage
// collector would) the pods bound to them.
func (s *Sim) Stop() {
	if s.cancel == nil {
		return
	}
	s.mu.Lock()
	s.cancel()
	s.mu.Unlock()
	s.done.Wait()
	_ = s.srv.Close()
	if s.opts.KeepNodes {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, n := range s.nodes {
		_ = s.cs.CoreV1().Nodes().Delete(ctx, n.spec.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	}
	// The pod garbage collector force-deletes pods whose node is gone; without it a namespace
	// holding them would never finish terminating.
	pods, _ := s.podLister.List(labels.Everything())
	for _, p := range pods {
		if s.owns(p) && s.nodeByName(p.Spec.NodeName) != nil {
			_ = s.cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		}
	}
}

func (s *Sim) goRun(f func()) {
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		f()
	}()
}

// owns reports whether the pod is in one of this Sim's namespaces.
func (s *Sim) owns(p *corev1.Pod) bool {
	return len(s.opts.Namespaces) == 0 || slices.Contains(s.opts.Namespaces, p.Namespace)
}

func (s *Sim) nodeByName(name string) *node {
	for _, n := range s.nodes {
		if n.spec.Name == name {
			return n
		}
	}
	return nil
}

func (s *Sim) onPod(ctx context.Context, obj any) {
	p, ok := obj.(*corev1.Pod)
	if !ok || !s.owns(p) {
		return
	}
	if p.Spec.NodeName == "" {
		select {
		case s.schedKick <- struct{}{}:
		default:
		}
		return
	}
	n := s.nodeByName(p.Spec.NodeName)
	if n == nil {
		return
	}
	s.mu.Lock()
	w := s.workers[p.UID]
	if w == nil {
		if ctx.Err() != nil {
			s.mu.Unlock()
			return
		}
		w = newPodWorker(s, n, p)
		wctx, cancel := context.WithCancel(ctx)
		w.cancel = cancel
		s.workers[p.UID] = w
		s.byName[p.Namespace+"/"+p.Name] = p.UID
		// Added under mu: Stop cancels under mu, so Wait sees every worker started before.
		s.goRun(func() { w.run(wctx) })
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	w.update(p)
}

func (s *Sim) onPodDelete(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.workers[p.UID]; w != nil {
		w.cancel()
		delete(s.workers, p.UID)
		if s.byName[p.Namespace+"/"+p.Name] == p.UID {
			delete(s.byName, p.Namespace+"/"+p.Name)
		}
	}
}

func (s *Sim) workerByName(ns, name string) *podWorker {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.workers[s.byName[ns+"/"+name]]
}

func (s *Sim) kubeletEvents(n *node) *recorder { return n.events }

func (s *Sim) now() time.Time { return time.Now() }

// scaled converts a simulated duration into real time.
func (s *Sim) scaled(d time.Duration) time.Duration { return time.Duration(float64(d) / s.scale) }

// requeue is the pod worker's retry after a failed sync: backOffPeriod 10 s with jitter 0.5.
func (s *Sim) requeue() time.Duration {
	return s.scaled(10*time.Second + time.Duration(rand.Int64N(int64(5*time.Second))))
}

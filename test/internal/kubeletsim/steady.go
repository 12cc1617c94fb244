package kubeletsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

// Steady plays kube-scheduler and the kubelets for many pods at once, where Sim would run one
// worker per pod through simulated time: each pod is bound to the least loaded node and its
// status written once, in the state Settle gives it, with the events Settle lists; a pod being
// deleted is removed at once, as by a kubelet whose containers stop at once. The nodes are
// registered as Sim registers them, and their log endpoint serves the settled logs, so pods/log
// works through the API server. Scheduling filters, probes over time and back-off timing are not
// played: a pod's state depends only on its spec and the World.
type Steady struct {
	sim     *Sim
	workers int

	podLister corelisters.PodLister
	queue     workqueue.TypedRateLimitingInterface[string]

	mu      sync.Mutex
	load    map[string]int     // node -> pods bound by this Steady
	settled map[types.UID]bool // status written
	byNode  map[string]*node

	cancel context.CancelFunc
	done   sync.WaitGroup
}

// SteadyWorkers is how many pods Steady binds and writes in parallel.
const SteadyWorkers = 32

// NewSteady returns a Steady acting through cfg (the permissions New needs) in world. Options
// are Sim's; TimeScale does not apply.
func NewSteady(cfg *rest.Config, world *World, opts Options) (*Steady, error) {
	sim, err := New(cfg, world, opts)
	if err != nil {
		return nil, err
	}
	fast := rest.CopyConfig(cfg)
	fast.QPS, fast.Burst = 1000, 2000
	fast.UserAgent = "kubelet/v1.37.2 (linux/amd64) kubernetes/kubeletsim-steady"
	if sim.cs, err = kubernetes.NewForConfig(fast); err != nil {
		return nil, fmt.Errorf("kubeletsim client: %w", err)
	}
	s := &Steady{
		sim: sim, workers: SteadyWorkers,
		load: map[string]int{}, settled: map[types.UID]bool{}, byNode: map[string]*node{},
	}
	for _, n := range sim.nodes {
		s.byNode[n.spec.Name] = n
	}
	return s, nil
}

// World is the world the pods settle in.
func (s *Steady) World() *World { return s.sim.world }

// Start registers the nodes, starts the log endpoint and the workers, and returns once the pod
// cache is synced. Stop ends them.
func (s *Steady) Start(ctx context.Context) error {
	sim := s.sim
	if sim.started {
		return errors.New("kubeletsim: already started")
	}
	sim.started = true
	l, srv, err := sim.startLogServer()
	if err != nil {
		return err
	}
	sim.srv = srv
	sim.logPort = l.Addr().(*net.TCPAddr).Port
	if err := s.registerNodes(ctx); err != nil {
		_ = srv.Close()
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	var opts []informers.SharedInformerOption
	if len(sim.opts.Namespaces) == 1 {
		opts = append(opts, informers.WithNamespace(sim.opts.Namespaces[0]))
	}
	factory := informers.NewSharedInformerFactoryWithOptions(sim.cs, 0, opts...)
	inf := factory.Core().V1().Pods()
	s.podLister = inf.Lister()
	s.queue = workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	enqueue := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok && sim.owns(p) {
			s.queue.Add(p.Namespace + "/" + p.Name)
		}
	}
	_, _ = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: s.onDelete,
	})
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			cancel()
			_ = srv.Close()
			return fmt.Errorf("kubeletsim: %v cache did not sync", typ)
		}
	}
	for range s.workers {
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			for s.processNext(ctx) {
			}
		}()
	}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		<-ctx.Done()
		s.queue.ShutDown()
		factory.Shutdown()
	}()
	return nil
}

// Stop ends the workers and the log endpoint. Nodes and pods stay: deleting thousands of pods
// is the caller's choice (delete the namespace while Steady runs).
func (s *Steady) Stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.done.Wait()
	_ = s.sim.srv.Close()
}

// SteadyCounts says how far Steady is with the pods it has seen.
type SteadyCounts struct {
	Pods     int // pods in the cache
	Settled  int // of them, with their settled status written
	Deleting int // being deleted, not gone yet
}

// Counts reports the pods in the cache and how many are settled; a caller waits for
// Pods == expected, Settled == Pods and Deleting == 0.
func (s *Steady) Counts() SteadyCounts {
	pods, _ := s.podLister.List(labels.Everything())
	s.mu.Lock()
	defer s.mu.Unlock()
	var c SteadyCounts
	for _, p := range pods {
		if !s.sim.owns(p) {
			continue
		}
		if p.DeletionTimestamp != nil {
			c.Deleting++
			continue
		}
		c.Pods++
		if s.settled[p.UID] {
			c.Settled++
		}
	}
	return c
}

func (s *Steady) registerNodes(ctx context.Context) error {
	nodes := s.sim.nodes
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, n := range nodes {
		n.events = newRecorder(s.sim.cs, "kubelet", n.spec.Name, 1, s.sim.logf)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = s.sim.register(ctx, n)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *Steady) onDelete(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.settled[p.UID] {
		delete(s.settled, p.UID)
		s.load[p.Spec.NodeName]--
	}
	sim := s.sim
	sim.mu.Lock()
	defer sim.mu.Unlock()
	if sim.byName[p.Namespace+"/"+p.Name] == p.UID {
		delete(sim.byName, p.Namespace+"/"+p.Name)
	}
	delete(sim.workers, p.UID)
}

func (s *Steady) processNext(ctx context.Context) bool {
	key, quit := s.queue.Get()
	if quit {
		return false
	}
	defer s.queue.Done(key)
	if err := s.sync(ctx, key); err != nil {
		if ctx.Err() == nil {
			s.sim.logf("kubeletsim: %s: %v", key, err)
			s.queue.AddRateLimited(key)
		}
		return true
	}
	s.queue.Forget(key)
	return true
}

func (s *Steady) sync(ctx context.Context, key string) error {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	p, err := s.podLister.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	pods := s.sim.cs.CoreV1().Pods(ns)
	if p.DeletionTimestamp != nil {
		if p.Spec.NodeName == "" {
			return nil // the API server deletes an unbound pod itself
		}
		uid := p.UID
		err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{UID: &uid}})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	s.mu.Lock()
	done := s.settled[p.UID]
	s.mu.Unlock()
	if done {
		return nil
	}
	p = p.DeepCopy()
	if p.Spec.NodeName == "" {
		n := s.pickNode()
		err := pods.Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID},
			Target:     corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: n.spec.Name},
		}, metav1.CreateOptions{FieldManager: "kube-scheduler"})
		if err != nil {
			s.unload(n.spec.Name)
			if apierrors.IsNotFound(err) {
				return nil
			}
			if apierrors.IsConflict(err) {
				return nil // bound meanwhile; the update brings it back
			}
			return fmt.Errorf("bind: %w", err)
		}
		p.Spec.NodeName = n.spec.Name
	} else if s.byNode[p.Spec.NodeName] == nil {
		return nil // another kubelet's node
	} else {
		s.mu.Lock()
		s.load[p.Spec.NodeName]++
		s.mu.Unlock()
	}
	n := s.byNode[p.Spec.NodeName]
	now := time.Now()
	started := p.CreationTimestamp.Add(time.Second)
	if started.After(now) {
		started = now
	}
	w, out := settle(s.sim, n, p, n.allocIP(), started, now)
	patch, err := json.Marshal(map[string]any{"status": out.Status})
	if err != nil {
		return err
	}
	_, err = pods.Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kubelet"}, "status")
	if apierrors.IsNotFound(err) {
		s.unload(n.spec.Name)
		return nil
	}
	if err != nil {
		s.unload(n.spec.Name)
		return fmt.Errorf("status: %w", err)
	}
	for _, ev := range out.Events {
		_, err := s.sim.cs.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{FieldManager: "kubelet"})
		if err != nil && !apierrors.IsAlreadyExists(err) && ctx.Err() == nil {
			s.sim.logf("kubeletsim: event %s/%s %s: %v", ns, ev.Name, ev.Reason, err)
		}
	}
	s.mu.Lock()
	s.settled[p.UID] = true
	s.mu.Unlock()
	sim := s.sim
	sim.mu.Lock()
	sim.workers[p.UID] = w
	sim.byName[p.Namespace+"/"+p.Name] = p.UID
	sim.mu.Unlock()
	return nil
}

// pickNode is the least loaded node, counted as bound.
func (s *Steady) pickNode() *node {
	s.mu.Lock()
	defer s.mu.Unlock()
	best := s.sim.nodes[0]
	for _, n := range s.sim.nodes[1:] {
		if s.load[n.spec.Name] < s.load[best.spec.Name] {
			best = n
		}
	}
	s.load[best.spec.Name]++
	return best
}

func (s *Steady) unload(node string) {
	s.mu.Lock()
	s.load[node]--
	s.mu.Unlock()
}

package scalegen

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
)

// ControllerManagerArgs raise kube-controller-manager's client rate and worker counts so that it
// creates tens of thousands of pods in minutes (its default 20 QPS would take most of an hour);
// pass them in controlplane.Options.ControllerManagerArgs.
var ControllerManagerArgs = []string{
	"--kube-api-qps=1000", "--kube-api-burst=2000",
	"--concurrent-deployment-syncs=20", "--concurrent-replicaset-syncs=20",
	"--concurrent-service-endpoint-syncs=20",
	// Coalesce the EndpointSlice writes of pods that turn Ready together.
	"--endpointslice-updates-batch-period=1s",
}

// Loaded is a namespace Load built; its simulated kubelets keep serving pods/log and removing
// deleted pods until Stop.
type Loaded struct {
	Namespace string
	Workloads []Workload
	Steady    *kubeletsim.Steady

	cs      kubernetes.Interface
	opts    Options
	revised map[string]bool // workloads whose second revision is applied
}

// Stop ends the simulated kubelets. The namespace stays.
func (l *Loaded) Stop() { l.Steady.Stop() }

// creators is how many objects Load creates in parallel.
const creators = 16

// Load builds the namespace opts describe on the cluster cfg reaches (as an identity that may
// create namespaces, Services, Deployments, nodes, bindings, pod status and events) and returns
// once it has settled: every pod written by the simulated kubelet, every rollout complete or past
// its deadline, every Service's EndpointSlice written. The cluster must run the deployment,
// replicaset and endpointslice controllers (see ControllerManagerArgs). ctx bounds the loading
// only; the caller stops the returned Loaded.
func Load(ctx context.Context, cfg *rest.Config, opts Options) (_ *Loaded, err error) {
	opts = opts.withDefaults()
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 1000, 2000
	// Protobuf, as the real kubelet, scheduler and controllers speak it; the simulated kubelets
	// inherit it (NewSteady copies cfg). The objects stored are the same. At 20k pods it did
	// not measurably change the API server's CPU per pod (4e760d9:BENCHMARKS.md, "Results, second round").
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("scalegen client: %w", err)
	}
	plan := Plan(opts)
	if err := createNamespace(ctx, cs, opts.Namespace); err != nil {
		return nil, err
	}
	steady, err := kubeletsim.NewSteady(cfg, World(opts), kubeletsim.Options{
		Nodes:      kubeletsim.DefaultNodes(opts.Namespace+"-node", Nodes(opts)),
		Namespaces: []string{opts.Namespace},
		Logf:       opts.Logf,
	})
	if err != nil {
		return nil, err
	}
	// ctx bounds the loading; the kubelets run until Stop.
	if err := steady.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	l := &Loaded{Namespace: opts.Namespace, Steady: steady, cs: cs, opts: opts, revised: map[string]bool{}}
	defer func() {
		if err != nil {
			l.Stop()
		}
	}()
	if err := l.add(ctx, plan); err != nil {
		return nil, err
	}
	return l, nil
}

// Grow adds workloads to the loaded namespace until it holds the first deployments of the plan
// (at most Options.GrowTo, for which the nodes were registered) and returns once it has settled
// again, as Load does. The workloads already there are Plan's first ones whatever its length,
// so the grown namespace is the one Load would build with Deployments set to deployments.
func (l *Loaded) Grow(ctx context.Context, deployments int) error {
	if deployments > l.opts.GrowTo {
		return fmt.Errorf("grow to %d Deployments: the nodes were sized for %d (Options.GrowTo)", deployments, l.opts.GrowTo)
	}
	if deployments <= len(l.Workloads) {
		return nil
	}
	opts := l.opts
	opts.Deployments = deployments
	return l.add(ctx, Plan(opts))
}

// add creates plan's workloads past those already loaded (plan starts with them) and waits for
// the whole plan to settle.
func (l *Loaded) add(ctx context.Context, plan []Workload) error {
	cs, opts := l.cs, l.opts
	fresh := plan[len(l.Workloads):]
	start := time.Now()
	err := parallel(ctx, len(fresh), func(ctx context.Context, i int) error {
		w := fresh[i]
		err := create(ctx, func() error {
			_, err := cs.CoreV1().Services(opts.Namespace).Create(ctx, service(w, opts), metav1.CreateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("create service %s: %w", w.Name, err)
		}
		err = create(ctx, func() error {
			_, err := cs.AppsV1().Deployments(opts.Namespace).Create(ctx, deployment(w, opts), metav1.CreateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("create deployment %s: %w", w.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	opts.Logf("scalegen: %d Deployments and Services created in %s", len(fresh), time.Since(start).Round(time.Millisecond))
	if err := settle(ctx, cs, l.Steady, plan, l.revised, opts); err != nil {
		return err
	}
	l.Workloads = plan
	opts.Logf("scalegen: namespace %s settled in %s (%d Deployments)", opts.Namespace, time.Since(start).Round(time.Second), len(plan))
	return nil
}

// create runs one create, again while the API server is too busy to answer in time (a 2-core
// machine creating thousands of pods at once); an object that exists on a retry was created by
// the attempt that timed out.
func create(ctx context.Context, f func() error) error {
	backoff := time.Second
	for attempt := 1; ; attempt++ {
		err := f()
		busy := apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err)
		switch {
		case err == nil:
			return nil
		case attempt > 1 && apierrors.IsAlreadyExists(err):
			return nil
		case !busy || attempt == 10:
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

func createNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s exists; delete it or load another", ns)
	}
	if err != nil {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	// Pods are rejected until the serviceaccount controller has created the default account.
	for {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return nil
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("wait for the default service account of %s: %w", ns, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the default service account of %s: %w", ns, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// settle applies the second revisions once the first has rolled out and waits for the
// namespace to reach its final picture.
// revised holds the workloads whose second revision is applied, across calls.
func settle(ctx context.Context, cs kubernetes.Interface, steady *kubeletsim.Steady, plan []Workload, revised map[string]bool, opts Options) error {
	want := 0
	for _, w := range plan {
		want += expectedPods(w, opts.PodsPer)
	}
	lastLog := time.Time{}
	for {
		list, err := cs.AppsV1().Deployments(opts.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("list deployments: %w", err)
		}
		byName := make(map[string]*appsv1.Deployment, len(list.Items))
		for i := range list.Items {
			byName[list.Items[i].Name] = &list.Items[i]
		}
		var bump []Workload
		final := 0
		for _, w := range plan {
			d := byName[w.Name]
			if d == nil {
				continue
			}
			if w.Revisions == 2 && !revised[w.Name] {
				if rolledOut(d, opts.PodsPer) {
					bump = append(bump, w)
				}
				continue
			}
			if isFinal(w, d, opts.PodsPer) {
				final++
			}
		}
		if len(bump) > 0 {
			err := parallel(ctx, len(bump), func(ctx context.Context, i int) error {
				return revise(ctx, cs, opts.Namespace, bump[i])
			})
			if err != nil {
				return err
			}
			for _, w := range bump {
				revised[w.Name] = true
			}
		}
		c := steady.Counts()
		slices, err := countSlices(ctx, cs, opts.Namespace)
		if err != nil {
			return err
		}
		if final == len(plan) && c.Pods == want && c.Settled == c.Pods && c.Deleting == 0 && slices >= len(plan) {
			return nil
		}
		if time.Since(lastLog) >= 10*time.Second {
			lastLog = time.Now()
			opts.Logf("scalegen: %d/%d pods settled (%d in the cache, %d deleting), %d/%d Deployments final, %d EndpointSlices",
				c.Settled, want, c.Pods, c.Deleting, final, len(plan), slices)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for namespace %s to settle (%d/%d pods settled, %d/%d Deployments final): %w",
				opts.Namespace, c.Settled, want, final, len(plan), ctx.Err())
		case <-time.After(2 * time.Second):
		}
	}
}

// rolledOut: revision 1 is complete and available, so a second revision rolls from a serving one.
func rolledOut(d *appsv1.Deployment, podsPer int) bool {
	s := d.Status
	return s.ObservedGeneration == d.Generation && int(s.UpdatedReplicas) == podsPer &&
		int(s.AvailableReplicas) == podsPer && int(s.Replicas) == podsPer
}

// isFinal: a healthy workload has rolled out its last revision; a broken one's rollout is past
// its deadline.
func isFinal(w Workload, d *appsv1.Deployment, podsPer int) bool {
	if d.Status.ObservedGeneration != d.Generation {
		return false
	}
	if w.Fault == FaultNone || w.Fault == FaultSelector {
		return rolledOut(d, podsPer) && progressing(d) == "NewReplicaSetAvailable"
	}
	return progressing(d) == "ProgressDeadlineExceeded" && int(d.Status.Replicas) == expectedPods(w, podsPer)
}

func progressing(d *appsv1.Deployment) string {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing {
			return c.Reason
		}
	}
	return ""
}

// revise applies revision 2's template, as `kubectl apply` of a new image or env would.
func revise(ctx context.Context, cs kubernetes.Interface, ns string, w Workload) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, w.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Spec.Template = template(w, 2)
		_, err = cs.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("revise deployment %s: %w", w.Name, err)
	}
	return nil
}

func countSlices(ctx context.Context, cs kubernetes.Interface, ns string) (int, error) {
	n := 0
	opts := metav1.ListOptions{Limit: 5000}
	for {
		list, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, opts)
		if err != nil {
			return 0, fmt.Errorf("list endpointslices: %w", err)
		}
		n += len(list.Items)
		if list.Continue == "" {
			return n, nil
		}
		opts.Continue = list.Continue
	}
}

// parallel runs f for 0..n-1 on up to creators goroutines and returns the first error; the
// others are cancelled.
func parallel(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range min(creators, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(ctx, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(next)
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	return first
}

package live

import (
	"context"
	"errors"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// expired is what a v1.37 API server answers for a resource version older than its watch cache
// keeps, as after an etcd compaction (k8s.io/apiserver storage/cacher/watch_cache_history.go).
func expired() *apierrors.StatusError {
	return apierrors.NewResourceExpired("too old resource version: 412 (1044)")
}

// A watch that the server ends with 410 Gone makes the informer list again. That is routine
// (every compaction can cause it), not news: the source reports no error, keeps every object
// through the relist, and publishes the relisted picture.
func TestWatchRelistsAfterGoneWithoutAnErrorOrAGap(t *testing.T) {
	client := fake.NewClientset(deployment("telemetry", "ingester"))
	var (
		mu       sync.Mutex
		watches  int
		lists    int
		relisted time.Time
	)
	client.PrependWatchReactor("deployments", func(k8stesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		watches++
		if watches == 1 {
			// The informer's first watch: the server ends it with an ERROR event, 410.
			w := watch.NewFakeWithChanSize(1, false)
			st := expired().ErrStatus
			w.Error(&st)
			return true, w, nil
		}
		return false, nil, nil
	})
	client.PrependReactor("list", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		lists++
		// The first read's list is the informer's first, so the first list after it is the
		// relist.
		switch lists {
		case 2:
			// The relist at the informer's last resource version: expired as well.
			return true, nil, expired()
		case 3:
			relisted = time.Now()
		}
		return false, nil, nil
	})
	src := newForClient(client, Options{Namespaces: []string{"telemetry"}}, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snaps, errs := src.Watch(ctx)
	deadline := time.After(20 * time.Second)
	for {
		select {
		case err := <-errs:
			t.Fatalf("a 410 Gone was reported as a failure: %v", err)
		case s := <-snaps:
			if len(s.Deployments) != 1 {
				t.Fatalf("a snapshot with %d deployments, want 1: the relist left a gap", len(s.Deployments))
			}
			mu.Lock()
			r := relisted
			mu.Unlock()
			if !r.IsZero() && s.ReferenceTime.After(r) {
				return
			}
		case <-deadline:
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("no snapshot after the relist (%d lists, %d watches)", lists, watches)
		}
	}
}

// Errors reported while the reader was busy (diagnosing a big snapshot, say) came before the
// snapshot published after them; a reader that took them after it would call a current
// picture stale, with nothing to clear it until the next change.
func TestWatchDropsErrorsThatASnapshotSupersedes(t *testing.T) {
	client := fake.NewClientset(deployment("telemetry", "ingester"))
	refused := &url.Error{Op: "Get", URL: "https://10.0.0.1:6443/apis/apps/v1/deployments", Err: errors.New("dial tcp 10.0.0.1:6443: connect: connection refused")}
	var (
		mu     sync.Mutex
		down   = 3
		backAt time.Time
	)
	client.PrependReactor("list", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if down > 0 {
			down--
			return true, nil, refused
		}
		if backAt.IsZero() {
			backAt = time.Now()
		}
		return false, nil, nil
	})
	src := newForClient(client, Options{Namespaces: []string{"telemetry"}}, time.Now)
	src.retry = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snaps, errs := src.Watch(ctx)
	// Read nothing until the source has recovered and published.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		back := backAt
		mu.Unlock()
		if !back.IsZero() && time.Since(back) > 3*Debounce {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the source never read again")
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case s := <-snaps:
		if len(s.Deployments) != 1 {
			t.Fatalf("deployments = %d, want 1", len(s.Deployments))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no snapshot after the server came back")
	}
	select {
	case err := <-errs:
		t.Fatalf("an error from before the snapshot is still queued behind it: %v", err)
	default:
	}
}

// Behind a load balancer an API server that is gone does not refuse connections: they open and
// drop. client-go then hands the reflector an empty watch with no error, again and again; the
// source must still say the server is gone, and publish once the watch runs again.
func TestWatchReportsWatchesThatCloseAtOnce(t *testing.T) {
	client := fake.NewClientset(deployment("telemetry", "ingester"))
	var (
		mu      sync.Mutex
		dropped = 3
		backAt  time.Time
	)
	client.PrependWatchReactor("deployments", func(k8stesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		if dropped > 0 {
			dropped--
			// What rest.Request.Watch returns once its retries of a dropped connection run out.
			return true, watch.NewEmptyWatch(), nil
		}
		if backAt.IsZero() {
			backAt = time.Now()
		}
		return false, nil, nil
	})
	src := newForClient(client, Options{Namespaces: []string{"telemetry"}}, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snaps, errs := src.Watch(ctx)
	var errCount int
	deadline := time.After(30 * time.Second)
	for {
		select {
		case err := <-errs:
			if !strings.Contains(err.Error(), "closes before the server answers") {
				t.Errorf("error = %q, want one saying the connections close", err)
			}
			errCount++
		case s := <-snaps:
			mu.Lock()
			back := backAt
			mu.Unlock()
			if back.IsZero() || !s.ReferenceTime.After(back) {
				continue
			}
			if errCount == 0 {
				t.Fatal("watches that closed at once were never reported")
			}
			if len(s.Deployments) != 1 {
				t.Errorf("deployments = %d, want 1", len(s.Deployments))
			}
			return
		case <-deadline:
			t.Fatalf("no snapshot after the watch ran again (%d errors reported)", errCount)
		}
	}
}

// withStatusExtras gives a pod's container statuses what a v1.37 kubelet writes beside their
// state: allocated resources, resources, mounts and user.
func withStatusExtras(p *corev1.Pod) {
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		cs.AllocatedResources = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}
		cs.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}}
		disabled := corev1.RecursiveReadOnlyDisabled
		cs.VolumeMounts = []corev1.VolumeMountStatus{{Name: "kube-api-access-2fr4l", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true, RecursiveReadOnly: &disabled}}
		cs.User = &corev1.ContainerUser{Linux: &corev1.LinuxContainerUser{SupplementalGroups: []int64{0}}}
	}
}

// The watch's stores keep of a pod what the engine reads: a pod created while watching, and the
// first read's pods the informers start from, come without managedFields and without their
// container statuses' resources, mounts and user, their state and restarts kept; the first
// read's pods come back as the very objects of the first snapshot.
func TestWatchStoresPodsWithoutWhatNoOneReads(t *testing.T) {
	first := pod("telemetry", "ingester-a", "", func(p *corev1.Pod) { withStatusExtras(p) })
	client := fake.NewClientset(first)
	src := newForClient(client, Options{Namespaces: []string{"telemetry"}}, fixedNow)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snaps, errs := src.Watch(ctx)
	s0 := firstSnapshot(t, snaps, errs)
	waitWatching(t, client, "pods")
	created := pod("telemetry", "ingester-b", "", func(p *corev1.Pod) {
		withStatusExtras(p)
		p.Status.ContainerStatuses[0].RestartCount = 3
	})
	if _, err := client.CoreV1().Pods("telemetry").Create(ctx, created, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		var s *snapshot.Snapshot
		select {
		case s = <-snaps:
		case <-deadline:
			t.Fatal("no snapshot with the new pod within 10s")
		}
		if len(s.Pods) != 2 {
			continue
		}
		for _, p := range s.Pods {
			if p.Name == "ingester-a" && p != s0.Pods[0] {
				t.Error("the first read's pod came back from the informers as another object")
			}
			cs := p.Status.ContainerStatuses[0]
			if p.ManagedFields != nil || cs.AllocatedResources != nil || cs.Resources != nil || cs.VolumeMounts != nil || cs.User != nil {
				t.Errorf("pod %s: the watch stored %+v", p.Name, cs)
			}
			if cs.State.Running == nil || (p.Name == "ingester-b") != (cs.RestartCount == 3) {
				t.Errorf("pod %s: state or restarts lost: %+v", p.Name, cs)
			}
		}
		break
	}
}

// firstSnapshot waits for a watch's first snapshot; an error or 10 s without one ends the test.
func firstSnapshot(t *testing.T, snaps <-chan *snapshot.Snapshot, errs <-chan error) *snapshot.Snapshot {
	t.Helper()
	select {
	case s := <-snaps:
		return s
	case err := <-errs:
		t.Fatalf("watch error: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no snapshot within 10s")
	}
	return nil
}

// A watch publishes its first read trimmed and interned as the informers would store it, before
// any informer runs (they are held here for the whole test): the read does the informers'
// transform to each object as its list arrives, so no pass over the namespace stands between
// the read's end and the first snapshot.
func TestWatchPublishesItsFirstReadTrimmedAndInternedBeforeAnyInformerRuns(t *testing.T) {
	labelled := func(name string) *corev1.Pod {
		return pod("telemetry", name, "", func(p *corev1.Pod) {
			withStatusExtras(p)
			p.Labels = map[string]string{"app": "ingester", "pod-template-hash": "74446f5d85"}
		})
	}
	client := fake.NewClientset(labelled("ingester-a"), labelled("ingester-b"))
	src := newForClient(client, Options{Namespaces: []string{"telemetry"}}, fixedNow)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hold := make(chan struct{})
	defer close(hold)
	snaps, errs := src.WatchWith(ctx, snapshot.WatchHooks{Hold: hold})
	s0 := firstSnapshot(t, snaps, errs)
	if len(s0.Pods) != 2 {
		t.Fatalf("first snapshot has %d pods, want 2", len(s0.Pods))
	}
	for _, p := range s0.Pods {
		cs := p.Status.ContainerStatuses[0]
		if p.ManagedFields != nil || cs.AllocatedResources != nil || cs.Resources != nil || cs.VolumeMounts != nil || cs.User != nil {
			t.Errorf("pod %s published untrimmed: managedFields %v, status %+v", p.Name, p.ManagedFields, cs)
		}
	}
	if reflect.ValueOf(s0.Pods[0].Labels).Pointer() != reflect.ValueOf(s0.Pods[1].Labels).Pointer() {
		t.Error("two copies with equal labels were published with a labels map each, not interned")
	}
	for _, a := range client.Actions() {
		if a.GetVerb() == "watch" {
			t.Errorf("an informer ran while held: %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

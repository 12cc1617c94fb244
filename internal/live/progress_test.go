package live

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// paginatePods makes the fake clientset answer pod lists in pages of size, with the offset of
// the next page as the continue token, as an API server with many pods would.
func paginatePods(t *testing.T, client *fake.Clientset, size int) {
	t.Helper()
	client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		la := a.(k8stesting.ListActionImpl)
		all, err := client.Tracker().List(corev1.SchemeGroupVersion.WithResource("pods"), corev1.SchemeGroupVersion.WithKind("Pod"), la.Namespace)
		if err != nil {
			return true, nil, err
		}
		list := all.(*corev1.PodList)
		items := list.Items
		from := 0
		if c := la.ListOptions.Continue; c != "" {
			if from, err = strconv.Atoi(c); err != nil {
				return true, nil, fmt.Errorf("bad continue token %q", c)
			}
		}
		to := min(from+size, len(items))
		// Every page carries the resourceVersion of the list, as the API server's pages do.
		page := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: list.ResourceVersion}, Items: items[from:to]}
		if to < len(items) {
			page.Continue = strconv.Itoa(to)
		}
		return true, page, nil
	})
}

type report struct {
	what string
	n    int
}

func TestSnapshotWithProgressReportsEachKindAsPagesArrive(t *testing.T) {
	var objs []runtime.Object
	for i := range 5 {
		objs = append(objs, pod("a", fmt.Sprintf("web-%d", i), "web", nil))
	}
	for i := range 3 {
		objs = append(objs, pod("b", fmt.Sprintf("api-%d", i), "api", nil))
	}
	objs = append(objs,
		pod("b", "worker-0", "worker", crashLooping),
		deployment("a", "web"), deployment("b", "api"), deployment("b", "worker"),
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}},
	)
	client := fake.NewClientset(objs...)
	paginatePods(t, client, 2)

	var (
		reports []report // appended without a lock: the race detector catches concurrent calls
		inside  atomic.Bool
	)
	src := newForClient(client, Options{Namespaces: []string{"a", "b"}}, fixedNow)
	snap, err := src.SnapshotWithProgress(context.Background(), func(what string, n int) {
		if !inside.CompareAndSwap(false, true) {
			t.Errorf("progress(%q, %d) called while another call was running", what, n)
		}
		reports = append(reports, report{what, n})
		inside.Store(false)
	})
	if err != nil {
		t.Fatalf("SnapshotWithProgress: %v", err)
	}
	if len(snap.Pods) != 9 || len(snap.Logs) != 1 {
		t.Fatalf("pods, logs = %d, %d; want 9 and 1: progress must not change what is read", len(snap.Pods), len(snap.Logs))
	}

	last := map[string]int{}
	calls := map[string]int{}
	for _, r := range reports {
		if r.n <= last[r.what] {
			t.Errorf("%s went from %d to %d; a kind's count must only grow", r.what, last[r.what], r.n)
		}
		last[r.what] = r.n
		calls[r.what]++
	}
	want := map[string]int{"pods": 9, "deployments": 3, "nodes": 1, "logs": 1}
	for what, n := range want {
		if last[what] != n {
			t.Errorf("last %s report = %d, want %d (the total across namespaces)", what, last[what], n)
		}
	}
	for what := range last {
		if _, ok := want[what]; !ok {
			t.Errorf("reported %q (%d); kinds with nothing to read must not be reported", what, last[what])
		}
	}
	// Namespace a has 5 pods (pages 2, 2, 1), b has 4 (2, 2): one report per page.
	if calls["pods"] != 5 {
		t.Errorf("pods reported %d times, want 5: once per page as it arrives", calls["pods"])
	}
}

func TestSnapshotWithoutProgressReadsTheSame(t *testing.T) {
	client := fake.NewClientset(pod("a", "web-0", "web", nil), deployment("a", "web"))
	snap, err := newForClient(client, Options{Namespaces: []string{"a"}}, fixedNow).SnapshotWithProgress(context.Background(), nil)
	if err != nil {
		t.Fatalf("SnapshotWithProgress(nil): %v", err)
	}
	if len(snap.Pods) != 1 || len(snap.Deployments) != 1 {
		t.Errorf("pods, deployments = %d, %d; want 1 each", len(snap.Pods), len(snap.Deployments))
	}
}

func TestProgressIsSilentAfterStop(t *testing.T) {
	var mu sync.Mutex
	var got []report
	p := newProgress(func(what string, n int) {
		mu.Lock()
		got = append(got, report{what, n})
		mu.Unlock()
	})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				p.add("pods", 1)
			}
		})
	}
	wg.Wait()
	p.stop()
	p.add("pods", 1)
	if len(got) != 800 {
		t.Fatalf("got %d reports, want 800: one per add before stop, none after", len(got))
	}
	if got[799].n != 800 {
		t.Errorf("last report = %+v, want pods 800", got[799])
	}
}

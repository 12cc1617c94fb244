package live

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// waitWatching waits until the informers of resources have opened their watches.
func waitWatching(t *testing.T, client *fake.Clientset, resources ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		open := map[string]bool{}
		for _, a := range client.Actions() {
			if a.GetVerb() == "watch" {
				open[a.GetResource().Resource] = true
			}
		}
		missing := ""
		for _, r := range resources {
			if !open[r] {
				missing = r
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no watch of %s within 10s", missing)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func countVerbs(actions []k8stesting.Action) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, a := range actions {
		if out[a.GetVerb()] == nil {
			out[a.GetVerb()] = map[string]int{}
		}
		out[a.GetVerb()][a.GetResource().Resource]++
	}
	return out
}

// The console's watch reads the namespace once: its informers start from that read's lists and
// watch from their resource versions, instead of listing every kind again.
func TestWatchListsEveryKindOnceAndStartsItsInformersFromThatRead(t *testing.T) {
	f := &fleet{ns: "shop"}
	for i := range 3 {
		f.crashLoop(f.replicaSet(fmt.Sprintf("svc-%03d", i), hexOf(fmt.Sprint(i), 10), 1), "Error", 1, 2)
	}
	client := fake.NewClientset(f.objects()...)
	src := newForClient(client, Options{Namespaces: []string{"shop"}}, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snaps, errs := src.Watch(ctx)
	if s := firstSnapshot(t, snaps, errs); len(s.Deployments) != 3 || len(s.Pods) != 3 {
		t.Fatalf("first snapshot: %d deployments, %d pods; want 3 and 3", len(s.Deployments), len(s.Pods))
	}
	var resources []string
	for i := range kinds {
		resources = append(resources, kinds[i].plural())
	}
	waitWatching(t, client, resources...)
	// Nothing changed: no snapshot is rebuilt from the informers' initial lists.
	select {
	case <-snaps:
		t.Error("a second snapshot although nothing changed")
	case err := <-errs:
		t.Fatalf("watch error: %v", err)
	case <-time.After(3 * Debounce):
	}
	verbs := countVerbs(client.Actions())
	for _, r := range resources {
		if n := verbs["list"][r]; n != 1 {
			t.Errorf("%s listed %d times, want once", r, n)
		}
		if n := verbs["watch"][r]; n != 1 {
			t.Errorf("%s watched %d times, want once", r, n)
		}
	}
	if n := logActions(client); n != 3 {
		t.Errorf("%d log requests, want 3: one tail per failing copy, read once", n)
	}
}

// Rows are handed over as soon as the workload kinds are listed, before the first snapshot.
func TestWatchHandsTheWorkloadsOverBeforeTheFirstSnapshot(t *testing.T) {
	f := &fleet{ns: "shop"}
	for i := range 4 {
		f.crashLoop(f.replicaSet(fmt.Sprintf("svc-%03d", i), hexOf(fmt.Sprint(i), 10), 1), "Error", 1, 2)
	}
	client := fake.NewClientset(f.objects()...)
	src := newForClient(client, Options{Namespaces: []string{"shop"}}, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu     sync.Mutex
		rows   []*snapshot.Snapshot
		counts = map[string]int{}
	)
	snaps, errs := src.WatchWith(ctx, snapshot.WatchHooks{
		Progress: func(what string, n int) {
			mu.Lock()
			counts[what] = n
			mu.Unlock()
		},
		Rows: func(s *snapshot.Snapshot) {
			mu.Lock()
			rows = append(rows, s)
			mu.Unlock()
		},
	})
	firstSnapshot(t, snaps, errs)
	mu.Lock()
	defer mu.Unlock()
	if len(rows) != 1 {
		t.Fatalf("rows handed over %d times before the first snapshot, want once", len(rows))
	}
	if r := rows[0]; len(r.Deployments) != 4 || len(r.Pods) != 0 || len(r.Events) != 0 {
		t.Errorf("rows snapshot: %d deployments, %d pods, %d events; want the 4 deployments alone", len(r.Deployments), len(r.Pods), len(r.Events))
	}
	if counts["deployments"] != 4 || counts["pods"] != 4 || counts["logs"] != 4 {
		t.Errorf("progress = %v, want 4 deployments, 4 pods, 4 logs", counts)
	}
}

// Under a hold (the console diagnosing its first snapshot) the watch opens no watch and fills no
// cache; once released it follows changes from its first read's resource versions, so a
// Deployment created during the hold is in the next snapshot, not lost.
func TestWatchFollowsChangesOnlyOnceReleasedAndMissesNoneMadeMeanwhile(t *testing.T) {
	f := &fleet{ns: "shop"}
	for i := range 3 {
		f.crashLoop(f.replicaSet(fmt.Sprintf("svc-%03d", i), hexOf(fmt.Sprint(i), 10), 1), "Error", 1, 2)
	}
	client := fake.NewClientset(f.objects()...)
	src := newForClient(client, Options{Namespaces: []string{"shop"}}, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	snaps, errs := src.WatchWith(ctx, snapshot.WatchHooks{Hold: hold})
	if s := firstSnapshot(t, snaps, errs); len(s.Deployments) != 3 {
		t.Fatalf("first snapshot: %d deployments, want 3", len(s.Deployments))
	}
	if _, err := client.AppsV1().Deployments("shop").Create(ctx, deployment("shop", "late"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-snaps:
		t.Fatalf("a snapshot of %d deployments while held", len(s.Deployments))
	case err := <-errs:
		t.Fatalf("watch error: %v", err)
	case <-time.After(3 * Debounce):
	}
	if n := countVerbs(client.Actions())["watch"]; len(n) != 0 {
		t.Fatalf("watches opened while held: %v", n)
	}
	release()
	release() // a second release is harmless
	deadline := time.After(10 * time.Second)
	for {
		select {
		case s := <-snaps:
			if len(s.Deployments) == 4 {
				return
			}
		case err := <-errs:
			t.Fatalf("watch error: %v", err)
		case <-deadline:
			t.Fatal("the Deployment created while held never showed after the release")
		}
	}
}

// apiServer answers lists with empty lists of their kind and holds every watch open without
// an event, as a quiet API server does; it counts the watch requests per path.
type apiServer struct {
	mu      sync.Mutex
	watches map[string]int
	// silent makes watches never answer, as a server whose handlers hang.
	silent bool
}

func (a *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	resource := parts[len(parts)-1]
	var k *kind
	for i := range kinds {
		if kinds[i].plural() == resource {
			k = &kinds[i]
		}
	}
	if k == nil {
		http.NotFound(w, r)
		return
	}
	gv, _, _ := strings.Cut(k.Resource, " ")
	if r.URL.Query().Get("watch") == "true" {
		a.mu.Lock()
		a.watches[r.URL.Path]++
		silent := a.silent
		a.mu.Unlock()
		if !silent {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"kind":%q,"apiVersion":%q,"metadata":{"resourceVersion":"1044"},"items":[]}`, k.Kind+"List", gv)
}

func (a *apiServer) watchCounts() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]int{}
	for p, n := range a.watches {
		out[p] = n
	}
	return out
}

// The request timeout bounds lists and the wait for a watch's answer, not how long a watch
// stays open: with a 1 s timeout every watch is still the first one after 3 s.
func TestWatchesOutliveTheRequestTimeout(t *testing.T) {
	api := &apiServer{watches: map[string]int{}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	src := hostileSourceWithTimeout(t, srv, "1s")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snaps, errs := src.Watch(ctx)
	firstSnapshot(t, snaps, errs)
	time.Sleep(3500 * time.Millisecond)
	select {
	case err := <-errs:
		t.Errorf("watch error while every watch is open: %v", err)
	default:
	}
	counts := api.watchCounts()
	if len(counts) != len(kinds) {
		t.Errorf("%d paths watched, want one per kind (%d): %v", len(counts), len(kinds), counts)
	}
	for p, n := range counts {
		if n != 1 {
			t.Errorf("%s watched %d times in 3.5 s, want once: the request timeout cut it", p, n)
		}
	}
}

// A server that takes a watch and never answers it is a server that does not answer, reported
// within the request timeout, not a console that waits forever.
func TestAWatchNeverAnsweredIsReportedWithinTheRequestTimeout(t *testing.T) {
	api := &apiServer{watches: map[string]int{}, silent: true}
	srv := httptest.NewServer(api)
	defer srv.Close()
	src := hostileSourceWithTimeout(t, srv, "1s")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snaps, errs := src.Watch(ctx)
	select {
	case <-snaps:
	case err := <-errs:
		t.Fatalf("watch error before the first snapshot: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no snapshot within 10s")
	}
	select {
	case err := <-errs:
		if !strings.Contains(err.Error(), "no answer within 1s") || strings.Contains(err.Error(), "\n") {
			t.Errorf("error = %q, want one line saying no answer within 1s", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no error within 5 s for watches the server never answers")
	}
}

// A watch says once that its informers have taken over from its first read (the read's
// bodies and the first diagnosis's garbage are dropped by then, and the memory policy
// settles), not while the reader holds it back and not with each snapshot after.
func TestAWatchSaysOnceItsInformersTakeOverFromItsFirstRead(t *testing.T) {
	var collected atomic.Int32
	f := &fleet{ns: "shop"}
	f.crashLoop(f.replicaSet("svc-000", hexOf("0", 10), 1), "Error", 1, 2)
	client := fake.NewClientset(f.objects()...)
	src := newForClient(client, Options{Namespaces: []string{"shop"}, AfterFirstRead: func() { collected.Add(1) }}, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hold := make(chan struct{})
	snaps, errs := src.WatchWith(ctx, snapshot.WatchHooks{Hold: hold})
	next := func(what string) *snapshot.Snapshot {
		t.Helper()
		select {
		case s := <-snaps:
			return s
		case err := <-errs:
			t.Fatalf("%s: watch error: %v", what, err)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no snapshot within 10s", what)
		}
		return nil
	}
	next("first read")
	time.Sleep(2 * Debounce)
	if n := collected.Load(); n != 0 {
		t.Fatalf("%d calls while the reader holds the informers back", n)
	}
	close(hold)
	for i, name := range []string{"late-1", "late-2"} {
		if _, err := client.AppsV1().Deployments("shop").Create(ctx, deployment("shop", name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// Snapshots of the watch before it saw this Create are passed over.
		for s := next(name); len(s.Deployments) != 2+i; {
			s = next(name)
		}
	}
	if n := collected.Load(); n != 1 {
		t.Fatalf("%d calls over the first read and two snapshots after it, want 1", n)
	}
}

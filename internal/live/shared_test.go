package live

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// listServer answers every list of the kinds the source reads with an empty list of the right
// kind, and the list of Nodes as nodes says; it counts the lists of Nodes by bearer token. It
// serves TLS: client-go sends a bearer token over nothing else.
type listServer struct {
	*httptest.Server
	mu    sync.Mutex
	nodes map[string]int // bearer token -> lists of Nodes
}

func newListServer(t *testing.T, nodes http.HandlerFunc) *listServer {
	t.Helper()
	s := &listServer{nodes: map[string]int{}}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		resource := parts[len(parts)-1]
		if resource == "nodes" {
			s.mu.Lock()
			s.nodes[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]++
			s.mu.Unlock()
			nodes(w, r)
			return
		}
		for i := range snapshot.Kinds {
			k := &snapshot.Kinds[i]
			if k.Resource == resource {
				w.Header().Set("Content-Type", "application/json")
				_, _ = fmt.Fprintf(w, `{"kind":"%sList","apiVersion":%q,"metadata":{"resourceVersion":"41"},"items":[]}`+"\n", k.Kind, k.GVK.GroupVersion().String())
				return
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *listServer) nodeLists(token string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nodes[token]
}

// oneNode answers the list of Nodes with one node, as kube-apiserver writes it.
func oneNode(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprint(w, `{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"41"},"items":[{"metadata":{"name":"worker-1","uid":"6f1c2f1e-0d4e-4d8a-9a36-1d2b8f0e9a10","resourceVersion":"40","labels":{"kubernetes.io/hostname":"worker-1"}},"spec":{"taints":[{"key":"dedicated","value":"gpu","effect":"NoSchedule"}]},"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"kubelet is posting ready status"}]}}]}`+"\n")
}

// loadFleet writes a kubeconfig whose contexts are given as name -> server, token,
// namespace, and loads it.
func loadFleet(t *testing.T, contexts map[string][3]string) *Kubeconfig {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	for name, c := range contexts {
		server, token, ns := c[0], c[1], c[2]
		kc.Clusters[name] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
		kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
		kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: ns}
		kc.CurrentContext = name
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &path
	loaded, err := LoadKubeconfig(flags)
	if err != nil {
		t.Fatal(err)
	}
	return loaded
}

// readAll reads every context of names from kc at once, as a fleet does.
func readAll(t *testing.T, kc *Kubeconfig, names []string) ([]*snapshot.Snapshot, []error) {
	t.Helper()
	snaps, errs := make([]*snapshot.Snapshot, len(names)), make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		src, err := kc.Source(name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { snaps[i], errs[i] = src.Snapshot(context.Background()) })
	}
	wg.Wait()
	return snaps, errs
}

// TestContextsOfOneServerAndIdentityListNodesOnce: in one read of a fleet, the contexts that
// reach one server with one identity list Nodes once between them, and each snapshot holds the
// Nodes; a context of the same server with another token, and one of another server, list their
// own. A second read lists again: its Nodes are current.
func TestContextsOfOneServerAndIdentityListNodesOnce(t *testing.T) {
	east, west := newListServer(t, oneNode), newListServer(t, oneNode)
	kc := loadFleet(t, map[string][3]string{
		"east-shop":    {east.URL, "admin", "shop"},
		"east-pay":     {east.URL, "admin", "pay"},
		"east-search":  {east.URL, "admin", "search"},
		"east-as-dev":  {east.URL, "dev", "shop"},
		"west-shop":    {west.URL, "admin", "shop"},
		"west-billing": {west.URL, "admin", "billing"},
	})
	names := kc.Contexts()
	snaps, errs := readAll(t, kc.OneRead(), names)
	for i, name := range names {
		if errs[i] != nil {
			t.Fatalf("%s: %v", name, errs[i])
		}
		if n := len(snaps[i].Nodes); n != 1 || snaps[i].Nodes[0].Name != "worker-1" || len(snaps[i].Nodes[0].Spec.Taints) != 1 {
			t.Errorf("%s: nodes %v, want worker-1 with its taint", name, snaps[i].Nodes)
		}
		if len(snaps[i].Visibility) != 0 {
			t.Errorf("%s: visibility %v", name, snaps[i].Visibility)
		}
	}
	for _, c := range []struct {
		srv   *listServer
		token string
		want  int
	}{{east, "admin", 1}, {east, "dev", 1}, {west, "admin", 1}} {
		if n := c.srv.nodeLists(c.token); n != c.want {
			t.Errorf("%s as %s: %d lists of Nodes, want %d", c.srv.URL, c.token, n, c.want)
		}
	}

	// Another read, and reads without OneRead (a watch's), list for themselves.
	readAll(t, kc.OneRead(), names)
	if n := east.nodeLists("admin"); n != 2 {
		t.Errorf("a second read: %d lists of Nodes in all as admin, want 2", n)
	}
	readAll(t, kc, []string{"east-shop", "east-pay"})
	if n := east.nodeLists("admin"); n != 4 {
		t.Errorf("two reads outside OneRead: %d lists of Nodes in all as admin, want 4", n)
	}
}

// TestASharedListsErrorIsEachContexts: a refused list of Nodes is a visibility line in every
// context that shares it, and credentials rejected on it fail each context's read naming that
// context; either way the server is asked once.
func TestASharedListsErrorIsEachContexts(t *testing.T) {
	forbidden := newListServer(t, forbiddenStatus)
	kc := loadFleet(t, map[string][3]string{
		"a": {forbidden.URL, "viewer", "shop"},
		"b": {forbidden.URL, "viewer", "pay"},
	})
	snaps, errs := readAll(t, kc.OneRead(), []string{"a", "b"})
	for i, name := range []string{"a", "b"} {
		if errs[i] != nil {
			t.Fatalf("%s: %v", name, errs[i])
		}
		v := snaps[i].Visibility
		if len(v) != 1 || v[0].Kind != "Node" || v[0].Namespace != "" || !strings.HasPrefix(v[0].Reason, "forbidden: User") {
			t.Errorf("%s: visibility %+v, want the Nodes forbidden", name, v)
		}
	}
	if n := forbidden.nodeLists("viewer"); n != 1 {
		t.Errorf("%d lists of Nodes, want 1", n)
	}

	unauthorized := newListServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`+"\n")
	})
	kc = loadFleet(t, map[string][3]string{
		"c": {unauthorized.URL, "expired", "shop"},
		"d": {unauthorized.URL, "expired", "pay"},
	})
	_, errs = readAll(t, kc.OneRead(), []string{"c", "d"})
	for i, name := range []string{"c", "d"} {
		if errs[i] == nil || !strings.Contains(errs[i].Error(), fmt.Sprintf("rejected the credentials of context %q", name)) {
			t.Errorf("%s: %v, want its own credentials rejected", name, errs[i])
		}
	}
	if n := unauthorized.nodeLists("expired"); n != 1 {
		t.Errorf("%d lists of Nodes, want 1", n)
	}
}

// TestASharedListOutlivesTheReadThatStartedIt: the first source's read ends while others wait
// for its list: they still get the answer. Once every source has given up, the list is
// cancelled and the next source lists anew instead of taking the cancellation for an answer.
func TestASharedListOutlivesTheReadThatStartedIt(t *testing.T) {
	c := newClusterLists()
	key := listKey{kind: "Node"}
	release := make(chan struct{})
	var calls int
	var mu sync.Mutex
	list := func(ctx context.Context) listed {
		mu.Lock()
		calls++
		mu.Unlock()
		select {
		case <-release:
			return listed{rv: "41"}
		case <-ctx.Done():
			return listed{err: ctx.Err()}
		}
	}
	first, cancelFirst := context.WithCancel(context.Background())
	firstDone := make(chan error, 1)
	go func() {
		_, err := c.list(first, key, list)
		firstDone <- err
	}()
	second := make(chan listed, 1)
	go func() {
		waitFor(t, func() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.flights[key] != nil })
		res, err := c.list(context.Background(), key, list)
		if err != nil {
			t.Error(err)
		}
		second <- res
	}()
	waitFor(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.flights[key] != nil && c.flights[key].waiting == 2
	})
	cancelFirst()
	if err := <-firstDone; !errors.Is(err, context.Canceled) {
		t.Errorf("the first read, ended: %v", err)
	}
	close(release)
	if res := <-second; res.err != nil || res.rv != "41" {
		t.Errorf("the waiting source got %+v, want the list at 41", res)
	}
	if res, err := c.list(context.Background(), key, list); err != nil || res.rv != "41" || calls != 1 {
		t.Errorf("a later source: %+v %v after %d lists, want the kept answer of 1 list", res, err, calls)
	}

	// Everyone gives up: the list is cancelled and forgotten.
	other := listKey{kind: "Node", labelSel: "x=y"}
	blocked := func(ctx context.Context) listed {
		mu.Lock()
		calls++
		mu.Unlock()
		<-ctx.Done()
		return listed{err: ctx.Err()}
	}
	gone, cancelGone := context.WithCancel(context.Background())
	cancelGone()
	if _, err := c.list(gone, other, blocked); !errors.Is(err, context.Canceled) {
		t.Errorf("a read that ended: %v", err)
	}
	waitFor(t, func() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.flights[other] == nil })
	res, err := c.list(context.Background(), other, func(context.Context) listed { return listed{rv: "42"} })
	if err != nil || res.rv != "42" {
		t.Errorf("after the list was cancelled: %+v %v, want a list of its own", res, err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Error("timed out")
			return
		}
		time.Sleep(time.Millisecond)
	}
}

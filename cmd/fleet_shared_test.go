package cmd

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/tui"
)

// nodeCountingServer answers every list of an empty namespace as kube-apiserver does, over TLS
// (client-go sends a bearer token over nothing else), and counts the lists of Nodes by token.
func nodeCountingServer(t *testing.T) (*httptest.Server, func(token string) int) {
	t.Helper()
	var mu sync.Mutex
	nodes := map[string]int{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(r.URL.Path, "/")
		resource := parts[len(parts)-1]
		k, ok := listKinds[resource]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if resource == "nodes" {
			mu.Lock()
			nodes[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]++
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"kind":%q,"apiVersion":%q,"metadata":{"resourceVersion":"4711"},"items":[]}`+"\n", k[0], k[1])
	}))
	t.Cleanup(srv.Close)
	return srv, func(token string) int {
		mu.Lock()
		defer mu.Unlock()
		return nodes[token]
	}
}

// TestFleetListsNodesOncePerServerAndIdentity: an audit of three contexts of one server, two
// of them with one user, lists Nodes once per user; the next audit, and each refresh of the
// console, lists them again.
func TestFleetListsNodesOncePerServerAndIdentity(t *testing.T) {
	srv, nodeLists := nodeCountingServer(t)
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: admin-token}
- name: dev
  user: {token: dev-token}
contexts:
- name: shop
  context: {cluster: c, user: admin, namespace: shop}
- name: pay
  context: {cluster: c, user: admin, namespace: pay}
- name: shop-as-dev
  context: {cluster: c, user: dev, namespace: shop}
current-context: shop
`, srv.URL)
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		if _, errOut, err := run(t, nil, hooks{}, "audit", "-o", "json", "--kubeconfig", kubeconfig, "--context", "shop,pay,shop-as-dev"); err != nil {
			t.Fatalf("audit %d: %v\n%s", i, err, errOut)
		}
		if a, d := nodeLists("admin-token"), nodeLists("dev-token"); a != i || d != i {
			t.Errorf("after audit %d: Nodes listed %d times as admin and %d as dev, want %d each", i, a, d, i)
		}
	}

	var got *tui.Options
	h := hooks{
		interactive: func() bool { return true },
		console: func(_ context.Context, o tui.Options) error {
			got = &o
			return nil
		},
	}
	if _, _, err := run(t, nil, h, "--kubeconfig", kubeconfig, "--context", "shop,pay"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		for _, r := range got.ReadFleet(context.Background()) {
			if r.Err != nil {
				t.Fatalf("refresh %d, context %s: %v", i, r.Context, r.Err)
			}
		}
		if a := nodeLists("admin-token"); a != 2+i {
			t.Errorf("after refresh %d: Nodes listed %d times as admin, want %d", i, a, 2+i)
		}
	}
}

// TestFleetReadsTheFirstContextOfEveryServerFirst: contexts named server by server are read
// interleaved, the first of each server first, so the first round of reads connects to every
// server; the results keep the order named.
func TestFleetReadsTheFirstContextOfEveryServerFirst(t *testing.T) {
	var cfg strings.Builder
	cfg.WriteString("apiVersion: v1\nkind: Config\nclusters:\n")
	for _, c := range []string{"east", "west", "north"} {
		fmt.Fprintf(&cfg, "- name: %s\n  cluster: {server: \"https://%s.example:6443\"}\n", c, c)
	}
	cfg.WriteString("users:\n- name: u\n  user: {token: not-a-secret}\ncontexts:\n")
	names := []string{"east-1", "east-2", "east-3", "west-1", "west-2", "north-1"}
	for _, n := range names {
		fmt.Fprintf(&cfg, "- name: %s\n  context: {cluster: %s, user: u, namespace: ns}\n", n, strings.Split(n, "-")[0])
	}
	cfg.WriteString("current-context: east-1\n")
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := parseArgs("audit", "--kubeconfig", kubeconfig, "--context", strings.Join(names, ","))
	if err != nil {
		t.Fatal(err)
	}
	src := p.audit.Source
	var mu sync.Mutex
	var started []string
	out := eachContextIn(context.Background(), src.Fleet.Contexts, src.readOrder(), 1, func(_ context.Context, name string) string {
		mu.Lock()
		started = append(started, name)
		mu.Unlock()
		return name
	})
	if got, want := strings.Join(started, ","), "east-1,west-1,north-1,east-2,west-2,east-3"; got != want {
		t.Errorf("read in the order %s, want %s", got, want)
	}
	if got := strings.Join(out, ","); got != strings.Join(names, ",") {
		t.Errorf("results in the order %s, want the order named", got)
	}
}

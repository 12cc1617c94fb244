package cmd

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubediagnose/kubectl-diagnose/internal/live"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// listKinds maps the resources the live source lists to their list kinds and group versions.
var listKinds = map[string][2]string{
	"deployments": {"DeploymentList", "apps/v1"}, "statefulsets": {"StatefulSetList", "apps/v1"},
	"daemonsets": {"DaemonSetList", "apps/v1"}, "replicasets": {"ReplicaSetList", "apps/v1"},
	"controllerrevisions": {"ControllerRevisionList", "apps/v1"}, "pods": {"PodList", "v1"},
	"events": {"EventList", "v1"}, "services": {"ServiceList", "v1"},
	"persistentvolumeclaims": {"PersistentVolumeClaimList", "v1"}, "resourcequotas": {"ResourceQuotaList", "v1"},
	"endpointslices": {"EndpointSliceList", "discovery.k8s.io/v1"}, "nodes": {"NodeList", "v1"},
	"persistentvolumes": {"PersistentVolumeList", "v1"},
}

// emptyAPIServer answers every list of an empty namespace as kube-apiserver does, after
// before has had its say.
func emptyAPIServer(t *testing.T, before func(w http.ResponseWriter, r *http.Request) bool) *live.Source {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if before(w, r) {
			return
		}
		parts := strings.Split(r.URL.Path, "/")
		k, ok := listKinds[parts[len(parts)-1]]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"kind":%q,"apiVersion":%q,"metadata":{"resourceVersion":"4711"},"items":[]}`+"\n", k[0], k[1])
	}))
	t.Cleanup(srv.Close)
	kubeconfig := filepath.Join(t.TempDir(), "config")
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: %q}\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: c\n  context: {cluster: c, user: u, namespace: telemetry}\ncurrent-context: c\n", srv.URL)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	src, err := live.New(flags, live.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestProgressLineShowsTheTimeAThrottledReadTakes(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	src := emptyAPIServer(t, func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		if seen[r.URL.Path] {
			return false
		}
		seen[r.URL.Path] = true
		// What kube-apiserver's priority and fairness filter answers when it is saturated.
		w.Header().Set("Retry-After", "2")
		http.Error(w, "Too many requests, please try again later.", http.StatusTooManyRequests)
		return true
	})
	var out bytes.Buffer
	if _, err := readWithProgress(context.Background(), src, &out); err != nil {
		t.Fatalf("read: %v", err)
	}
	got := out.String()
	t.Logf("%q", got)
	// Every list, one per kind, all at once, was throttled once and waited out the 2s the server
	// asked for; the line counts them while the time runs.
	throttled := fmt.Sprintf("the API server throttled %d requests, retrying after up to 2s", len(snapshot.Kinds))
	for _, want := range []string{"\r\x1b[Kreading… · 1s · the API server throttled ", "reading… · 1s · " + throttled} {
		if !strings.Contains(got, want) {
			t.Errorf("progress line does not show %q:\n%q", want, got)
		}
	}
	if !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("progress line is not erased at the end: %q", got)
	}
}

func TestProgressLineKeepsMovingWhileASlowServerHoldsAPage(t *testing.T) {
	src := emptyAPIServer(t, func(_ http.ResponseWriter, r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/pods") {
			time.Sleep(2500 * time.Millisecond)
		}
		return false
	})
	var out bytes.Buffer
	if _, err := readWithProgress(context.Background(), src, &out); err != nil {
		t.Fatalf("read: %v", err)
	}
	got := out.String()
	for _, want := range []string{" · 1s", " · 2s"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress line never showed %q while pods were held back:\n%q", want, got)
		}
	}
}

func TestNoProgressLineOffATerminal(t *testing.T) {
	var buf bytes.Buffer
	if progressTo(&buf) != nil {
		t.Error("a progress line would be drawn into a buffer, which is not a terminal")
	}
}

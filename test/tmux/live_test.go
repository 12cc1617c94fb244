package tmux

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/controlplane"
)

// The console on a live cluster whose API server goes away: it keeps the last snapshot on
// screen, says it is stale, and follows the cluster again once the server is back, with no key
// pressed. The control plane is this test's own, since it is stopped halfway.
func TestLiveConsoleGoesStaleAndRecovers(t *testing.T) {
	bin := build(t)
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := cp.Namespace(t)
	cs := kubernetes.NewForConfigOrDie(cp.AdminConfig())
	create := func(name string) {
		t.Helper()
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("before-outage")

	tm := start(t, 160, 30, bin, "--kubeconfig", cp.AdminKubeconfig(), "-n", ns)
	s := tm.waitFor("● live", "before-outage")
	if strings.Contains(s, "▲ stale") {
		t.Fatalf("stale before the outage:\n%s", s)
	}

	cp.StopAPIServer()
	s = tm.waitForWithin(time.Minute, "▲ stale")
	t.Logf("while the API server is away:\n%s", s)
	if !strings.Contains(s, "before-outage") {
		t.Errorf("the last snapshot left the screen when the server went away:\n%s", s)
	}

	if err := cp.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	create("after-outage")
	// The informers retry with a back-off that grew during the outage (up to 30 s).
	s = tm.waitForWithin(2*time.Minute, "● live", "before-outage", "after-outage")
	if strings.Contains(s, "▲ stale") {
		t.Errorf("still stale after recovering:\n%s", s)
	}

	tm.keys("q")
	if st := tm.waitExit(); st != "0" {
		t.Errorf("exit status %s after q, want 0", st)
	}
	// client-go logging a failed watch, say.
	tm.quietStderr()
}

func deployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "registry.example/shop/" + name + ":1.0.0",
				}}},
			},
		},
	}
}

// scalingEvents writes n events as the deployment controller writes them for d, enough to make
// the events list more than one page.
func scalingEvents(ctx context.Context, t *testing.T, cs kubernetes.Interface, d *appsv1.Deployment, n int) {
	t.Helper()
	now := metav1.Now()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	work := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range work {
				ev := &corev1.Event{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", d.Name, 0x187d0f3a00000000+int64(i)), Namespace: d.Namespace},
					InvolvedObject: corev1.ObjectReference{
						Kind: "Deployment", Namespace: d.Namespace, Name: d.Name, UID: d.UID,
						APIVersion: "apps/v1", ResourceVersion: d.ResourceVersion,
					},
					Reason:              "ScalingReplicaSet",
					Message:             fmt.Sprintf("Scaled up replica set %s-%08x from 0 to 1", d.Name, i),
					Source:              corev1.EventSource{Component: "deployment-controller"},
					FirstTimestamp:      now,
					LastTimestamp:       now,
					Count:               1,
					Type:                corev1.EventTypeNormal,
					ReportingController: "deployment-controller",
				}
				if _, err := cs.CoreV1().Events(d.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
}

// The API server stops in the middle of a list, after its first page: the console keeps the
// picture, says it is stale, and follows the cluster again by itself once the server is back.
func TestLiveConsoleSurvivesAServerThatStopsMidList(t *testing.T) {
	bin := build(t)
	// Without its watch cache the API server pages every list, as it does for a kind whose cache
	// is off (--watch-cache-sizes=events#0 on a busy cluster).
	cp := controlplane.StartT(t, controlplane.Options{APIServerArgs: []string{"--watch-cache=false"}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := cp.Namespace(t)
	cs := kubernetes.NewForConfigOrDie(cp.AdminConfig())
	d, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment("before-outage"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// More than the 500 of one page.
	scalingEvents(ctx, t, cs, d, 520)

	px := newAPIProxy(t, cp)
	tm := start(t, 160, 30, bin, "--kubeconfig", px.kubeconfig(t, cp, ns))
	s := tm.waitForWithin(time.Minute, "● live", "before-outage")
	if strings.Contains(s, "▲ stale") {
		t.Fatalf("stale before the outage:\n%s", s)
	}

	// The next request for a second page of events stops the server before it is answered.
	stopped := make(chan struct{})
	var once sync.Once
	px.setBefore(func(r *http.Request) {
		if r.URL.Query().Get("continue") == "" || !strings.HasSuffix(r.URL.Path, "/events") {
			return
		}
		once.Do(func() {
			cp.StopAPIServer()
			close(stopped)
		})
	})
	tm.keys("r")
	select {
	case <-stopped:
	case <-time.After(time.Minute):
		t.Fatal("the refresh never asked for a second page of events")
	}
	s = tm.waitForWithin(time.Minute, "▲ stale")
	t.Logf("after the server stopped mid-list:\n%s", s)
	if !strings.Contains(s, "before-outage") || strings.Contains(s, "could not read the snapshot") {
		t.Errorf("the picture left the screen when the server stopped mid-list:\n%s", s)
	}

	px.setBefore(nil)
	if err := cp.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment("after-outage"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s = tm.waitForWithin(2*time.Minute, "● live", "before-outage", "after-outage")
	if strings.Contains(s, "▲ stale") {
		t.Errorf("still stale after recovering:\n%s", s)
	}
	tm.keys("q")
	if st := tm.waitExit(); st != "0" {
		t.Errorf("exit status %s after q, want 0", st)
	}
	tm.quietStderr()
}

// A watch that the server ends with 410 Gone: the console's watches are started again from a
// resource version that etcd compacted away while the API server was down. The console lists
// again, keeps its picture throughout, and shows ● live with no stale badge left behind.
func TestLiveConsoleRelistsAfterGone(t *testing.T) {
	bin := build(t)
	// Without the watch cache a watch reads etcd's history, which the API server compacts every
	// two seconds here (five minutes by default).
	cp := controlplane.StartT(t, controlplane.Options{APIServerArgs: []string{"--watch-cache=false", "--etcd-compaction-interval=2s"}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := cp.Namespace(t)
	cs := kubernetes.NewForConfigOrDie(cp.AdminConfig())
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment("before-gone"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// etcd3's message for a watch from a compacted revision (apiserver storage/etcd3/errors.go).
	const gone = "The resourceVersion for the provided watch is too old."
	px := newAPIProxy(t, cp, gone)
	// The server ends each watch after a few seconds, as it does at a watch's timeout, so the
	// console's watches start again from the resource versions they hold; the console itself
	// keeps a watch open for minutes.
	px.setBefore(func(r *http.Request) {
		if q := r.URL.Query(); q.Get("watch") == "true" {
			q.Set("timeoutSeconds", "3")
			r.URL.RawQuery = q.Encode()
		}
	})
	tm := start(t, 160, 30, bin, "--kubeconfig", px.kubeconfig(t, cp, ns))
	tm.waitForWithin(time.Minute, "● live", "before-gone")

	// Writes the console does not watch move etcd's revision past the one its watches hold;
	// three compactions later that revision is gone.
	for i := range 3 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unwatched-%d", i)}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(6 * time.Second)
	// The watches end with the server; when it is back they start again where they were.
	cp.StopAPIServer()
	if err := cp.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !px.saw(gone) {
		if time.Now().After(deadline) {
			t.Fatalf("no watch of the console was answered with 410 Gone; screen:\n%s", tm.screen())
		}
		if s := tm.screen(); !strings.Contains(s, "before-gone") {
			t.Fatalf("the picture left the screen:\n%s", s)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment("after-gone"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := tm.waitForWithin(2*time.Minute, "● live", "before-gone", "after-gone")
	if strings.Contains(s, "▲ stale") {
		t.Errorf("still stale after the relist:\n%s", s)
	}
	// Nothing changes now; the badge must stay clear.
	time.Sleep(3 * time.Second)
	if s := tm.screen(); strings.Contains(s, "▲ stale") || !strings.Contains(s, "● live") {
		t.Errorf("the badge did not stay clear:\n%s", s)
	}
	tm.keys("q")
	if st := tm.waitExit(); st != "0" {
		t.Errorf("exit status %s after q, want 0", st)
	}
	tm.quietStderr()
}

// A server that takes connections and never answers, as an API server behind a firewall that
// drops packets: until the first read is in, the header says the console is connecting, and once
// the read gives up it says what failed, never ● live or ▲ stale for a picture that never was.
func TestLiveConsoleBeforeItsFirstRead(t *testing.T) {
	bin := build(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			_ = c.Close()
		}
	}()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["silent"] = &clientcmdapi.Cluster{Server: "https://" + ln.Addr().String(), InsecureSkipTLSVerify: true}
	kc.AuthInfos["someone"] = &clientcmdapi.AuthInfo{Token: "not-checked"}
	kc.Contexts["silent"] = &clientcmdapi.Context{Cluster: "silent", AuthInfo: "someone", Namespace: "shop"}
	kc.CurrentContext = "silent"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}

	tm := start(t, 160, 30, bin, "--kubeconfig", path, "--request-timeout", "5s")
	s := tm.waitFor("○ connecting…")
	if strings.Contains(s, "● live") || strings.Contains(s, "▲ stale") {
		t.Fatalf("before anything was read:\n%s", s)
	}
	s = tm.waitForWithin(time.Minute, "✕ nothing read yet")
	t.Logf("once the first read gave up:\n%s", s)
	if strings.Contains(s, "● live") || strings.Contains(s, "▲ stale") {
		t.Fatalf("with nothing read:\n%s", s)
	}
	tm.keys("q")
	// Nothing was ever read: the exit status says the console did not do its job.
	if st := tm.waitExit(); st == "0" {
		t.Errorf("exit status 0 with nothing ever read")
	}
	b, err := os.ReadFile(filepath.Join(tm.dir, "stderr"))
	if msg := strings.TrimSpace(string(b)); err != nil || !strings.Contains(msg, "cannot reach the API server") || strings.Contains(msg, "\n") {
		t.Errorf("stderr should be one line saying the server cannot be reached (%v):\n%s", err, b)
	}
}

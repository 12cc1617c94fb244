package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// newForClient builds a source over an existing client; a fake clientset, in tests.
func newForClient(client kubernetes.Interface, opts Options, now func() time.Time) *Source {
	s := &Source{client: client, opts: opts, now: now, timeout: DefaultRequestTimeout}
	s.watchClient = func() (kubernetes.Interface, error) { return client, nil }
	s.info = snapshot.SourceInfo{Type: snapshot.SourceLive}
	if !opts.AllNamespaces {
		s.namespaces = dedupe(opts.Namespaces)
		if len(s.namespaces) == 0 {
			s.namespaces = []string{"default"}
		}
	}
	return s
}

var t0 = time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return t0 }

func managed() []metav1.ManagedFieldsEntry {
	return []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
}

func deployment(ns, name string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("d-" + name), ManagedFields: managed()}}
}

func pod(ns, name, owner string, mutate func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("p-" + name), ManagedFields: managed()},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app"}}},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
			}},
		},
	}
	if owner != "" {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: owner, UID: types.UID("rs-" + owner), Controller: &yes}}
	}
	if mutate != nil {
		mutate(p)
	}
	return p
}

func notReady(p *corev1.Pod) {
	p.Status.Conditions[0].Status = corev1.ConditionFalse
	p.Status.ContainerStatuses[0].Ready = false
}

func crashLooping(p *corev1.Pod) {
	notReady(p)
	p.Status.ContainerStatuses[0].RestartCount = 4
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	p.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}
}

func neverRan(p *corev1.Pod) {
	notReady(p)
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}
}

func TestSnapshotReadsEveryKindOfTheNamespace(t *testing.T) {
	client := fake.NewClientset(
		deployment("telemetry", "ingester"),
		deployment("other", "elsewhere"),
		pod("telemetry", "ingester-1", "ingester-abc", nil),
		&corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "telemetry", Name: "e1"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "telemetry", Name: "intake"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", ManagedFields: managed()}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "telemetry", Name: "token"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "telemetry", Name: "settings"}},
	)
	src := newForClient(client, Options{Namespaces: []string{"telemetry"}}, fixedNow)
	snap, err := src.Snapshot(context.Background())
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	if len(snap.Deployments) != 1 || snap.Deployments[0].Name != "ingester" {
		t.Errorf("deployments = %v, want only telemetry/ingester", names(snap.Deployments))
	}
	if len(snap.Pods) != 1 || len(snap.Events) != 1 || len(snap.Services) != 1 || len(snap.Nodes) != 1 {
		t.Errorf("pods, events, services, nodes = %d, %d, %d, %d; want 1 each", len(snap.Pods), len(snap.Events), len(snap.Services), len(snap.Nodes))
	}
	if snap.Deployments[0].ManagedFields != nil || snap.Nodes[0].ManagedFields != nil || snap.Pods[0].ManagedFields != nil {
		t.Error("managedFields were not stripped")
	}
	if !snap.ReferenceTime.Equal(t0) {
		t.Errorf("ReferenceTime = %v, want %v", snap.ReferenceTime, t0)
	}
	if snap.Source.Type != snapshot.SourceLive {
		t.Errorf("Source.Type = %q, want live", snap.Source.Type)
	}
	if len(snap.Visibility) != 0 {
		t.Errorf("Visibility = %v, want none", snap.Visibility)
	}
	assertReadOnly(t, client.Actions())
}

func TestSnapshotAllNamespaces(t *testing.T) {
	client := fake.NewClientset(deployment("a", "one"), deployment("b", "two"))
	snap, err := newForClient(client, Options{AllNamespaces: true, Namespaces: []string{"a"}}, fixedNow).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Deployments) != 2 {
		t.Errorf("deployments = %v, want both namespaces", names(snap.Deployments))
	}
	if len(snap.Namespaces) != 0 {
		t.Errorf("Namespaces = %v, want empty for all namespaces", snap.Namespaces)
	}
}

// assertReadOnly fails when the source asked for anything but get, list and watch, or touched
// Secrets or ConfigMaps.
func assertReadOnly(t *testing.T, actions []k8stesting.Action) {
	t.Helper()
	if len(actions) == 0 {
		t.Fatal("no requests recorded")
	}
	for _, a := range actions {
		switch a.GetVerb() {
		case "get", "list", "watch":
		default:
			t.Errorf("request %s %s: only get, list and watch are allowed", a.GetVerb(), a.GetResource().Resource)
		}
		if r := a.GetResource().Resource; r == "secrets" || r == "configmaps" {
			t.Errorf("request %s %s: the tool must never read %s", a.GetVerb(), r, r)
		}
	}
}

func TestSnapshotDegradesOnForbiddenAndAbsentKinds(t *testing.T) {
	client := fake.NewClientset(deployment("telemetry", "ingester"))
	forbid := func(resource string) k8stesting.ReactionFunc {
		return func(_ k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "",
				fmt.Errorf("User \"narrow\" cannot list resource %q in API group \"\"", resource))
		}
	}
	client.PrependReactor("list", "events", forbid("events"))
	client.PrependReactor("list", "nodes", forbid("nodes"))
	client.PrependReactor("list", "endpointslices", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}, "")
	})
	snap, err := newForClient(client, Options{Namespaces: []string{"telemetry"}}, fixedNow).Snapshot(context.Background())
	if err != nil {
		t.Fatalf("Snapshot: %v; a forbidden kind must not fail the read", err)
	}
	if len(snap.Deployments) != 1 {
		t.Errorf("deployments = %d, want 1", len(snap.Deployments))
	}
	got := map[string]snapshot.Visibility{}
	for _, v := range snap.Visibility {
		got[v.Kind] = v
	}
	for _, kind := range []string{"Event", "Node", "EndpointSlice"} {
		if _, ok := got[kind]; !ok {
			t.Errorf("Visibility has no entry for %s: %+v", kind, snap.Visibility)
		}
	}
	if v := got["Event"]; v.Namespace != "telemetry" || !strings.HasPrefix(v.Reason, "forbidden: ") || strings.Contains(v.Reason, "is forbidden") {
		t.Errorf("Event visibility = %+v, want namespace telemetry and a reason starting with forbidden", v)
	}
	if v := got["Node"]; v.Namespace != "" {
		t.Errorf("Node visibility namespace = %q, want cluster scope", v.Namespace)
	}
	if v := got["EndpointSlice"]; !strings.Contains(v.Reason, "not served") {
		t.Errorf("EndpointSlice reason = %q, want not served", v.Reason)
	}
}

func TestSnapshotFailsOnServerErrorsThatAreNotVisibility(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewUnauthorized("Unauthorized")
	})
	_, err := newForClient(client, Options{Namespaces: []string{"x"}}, fixedNow).Snapshot(context.Background())
	if err == nil || !strings.Contains(err.Error(), "rejected the credentials") {
		t.Fatalf("err = %v, want a credentials error", err)
	}
}

func TestFailingLogRequests(t *testing.T) {
	tests := []struct {
		name string
		pods []*corev1.Pod
		want []logRequest
	}{
		{
			name: "a ready copy that never restarted has no log read",
			pods: []*corev1.Pod{pod("ns", "ok", "rs", nil)},
		},
		{
			name: "a not-ready running copy has its current log read",
			pods: []*corev1.Pod{pod("ns", "idle", "rs", notReady)},
			want: []logRequest{{"ns", "idle", "app", false}},
		},
		{
			name: "a crash-looping copy has its previous log read",
			pods: []*corev1.Pod{pod("ns", "crash", "rs", crashLooping)},
			want: []logRequest{{"ns", "crash", "app", true}},
		},
		{
			name: "a container that never ran has no log to read",
			pods: []*corev1.Pod{pod("ns", "pull", "rs", neverRan)},
		},
		{
			name: "an unscheduled copy has no log",
			pods: []*corev1.Pod{pod("ns", "pending", "rs", func(p *corev1.Pod) { notReady(p); p.Spec.NodeName = "" })},
		},
		{
			name: "a succeeded copy is not failing",
			pods: []*corev1.Pod{pod("ns", "job", "rs", func(p *corev1.Pod) { notReady(p); p.Status.Phase = corev1.PodSucceeded })},
		},
		{
			name: "at most two alike copies per owner, every owner's first before any second",
			pods: []*corev1.Pod{
				pod("ns", "c-4", "rs", notReady), pod("ns", "c-2", "rs", notReady), pod("ns", "c-3", "rs", notReady),
				pod("ns", "c-1", "rs", notReady), pod("ns", "solo", "other", notReady),
			},
			want: []logRequest{{"ns", "solo", "app", false}, {"ns", "c-1", "app", false}, {"ns", "c-2", "app", false}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := failingLogRequests(tt.pods, nil, maxLogRequests).reqs
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSnapshotReadsLogTailsOfFailingCopies(t *testing.T) {
	client := fake.NewClientset(pod("telemetry", "ingester-1", "rs", crashLooping), pod("telemetry", "ingester-2", "rs2", nil))
	snap, err := newForClient(client, Options{Namespaces: []string{"telemetry"}}, fixedNow).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Logs) != 1 {
		t.Fatalf("logs = %+v, want one tail", snap.Logs)
	}
	l := snap.Logs[0]
	if l.Pod != "ingester-1" || l.Container != "app" || !l.Previous || len(l.Lines) == 0 {
		t.Errorf("log = %+v, want the previous instance of ingester-1/app with lines", l)
	}
	var sawLog bool
	for _, a := range client.Actions() {
		if a.GetSubresource() != "log" {
			continue
		}
		sawLog = true
		opts := a.(k8stesting.GenericAction).GetValue().(*corev1.PodLogOptions)
		if opts.TailLines == nil || *opts.TailLines != DefaultLogTailLines || opts.LimitBytes == nil || *opts.LimitBytes != DefaultLogLimitBytes {
			t.Errorf("log request options = %+v, want tail %d and limit %d", opts, DefaultLogTailLines, DefaultLogLimitBytes)
		}
	}
	if !sawLog {
		t.Error("no pods/log request recorded")
	}
}

func TestUnreachableServerIsOneLineWithinTheTimeout(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	// Port 1 on loopback refuses connections at once on any machine.
	const cfg = `apiVersion: v1
kind: Config
clusters:
- name: dead
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: abc}
contexts:
- name: dead
  context: {cluster: dead, user: u, namespace: telemetry}
current-context: dead
`
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	timeout := "2s"
	flags.Timeout = &timeout
	src, err := New(flags, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if got := src.Namespaces(); len(got) != 1 || got[0] != "telemetry" {
		t.Errorf("namespaces = %v, want the context's namespace telemetry", got)
	}
	if src.Info().Context != "dead" || src.Info().Server != "https://127.0.0.1:1" {
		t.Errorf("info = %+v", src.Info())
	}
	start := time.Now()
	_, err = src.Snapshot(context.Background())
	if err == nil {
		t.Fatal("Snapshot of a dead server succeeded")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v, want within the 2s request timeout", d)
	}
	msg := err.Error()
	t.Log(msg)
	if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "cannot reach the API server at 127.0.0.1:1: ") || strings.Contains(msg, "?limit=") {
		t.Errorf("error = %q, want one line naming the server and no request URL", msg)
	}
}

func TestBadKubeconfig(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte("{not yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	_, err := New(flags, Options{})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "load kubeconfig: ") {
		t.Fatalf("err = %v, want one line starting with load kubeconfig", err)
	}
}

func TestWatchEmitsOnChange(t *testing.T) {
	client := fake.NewClientset(deployment("telemetry", "ingester"))
	src := newForClient(client, Options{Namespaces: []string{"telemetry"}}, fixedNow)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snaps, errs := src.Watch(ctx)
	first := firstSnapshot(t, snaps, errs)
	if len(first.Deployments) != 1 {
		t.Fatalf("first snapshot deployments = %d, want 1", len(first.Deployments))
	}
	// The fake starts a watch where it is, not at the read's resource version as a server does.
	waitWatching(t, client, "deployments")
	if _, err := client.AppsV1().Deployments("telemetry").Create(ctx, deployment("telemetry", "second"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		var s *snapshot.Snapshot
		select {
		case s = <-snaps:
		case <-deadline:
			t.Fatal("no snapshot with the new deployment within 10s")
		}
		if len(s.Deployments) == 2 {
			for _, d := range s.Deployments {
				if d.ManagedFields != nil {
					t.Error("informer snapshot kept managedFields")
				}
			}
			break
		}
	}
	cancel()
	for range snaps { // closes when the context is done
	}
	if _, open := <-errs; open {
		t.Error("error channel still open after cancel")
	}
}

func names(ds []*appsv1.Deployment) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Namespace+"/"+d.Name)
	}
	return out
}

func TestWatchReportsAnUnreachableServerAndResumesWhenItIsBack(t *testing.T) {
	client := fake.NewClientset(deployment("telemetry", "ingester"))
	down := 2
	var mu sync.Mutex
	client.PrependReactor("list", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if down > 0 {
			down--
			return true, nil, &url.Error{Op: "Get", URL: "https://10.0.0.1:6443/apis/apps/v1/deployments", Err: errors.New("dial tcp 10.0.0.1:6443: connect: connection refused")}
		}
		return false, nil, nil
	})
	src := newForClient(client, Options{Namespaces: []string{"telemetry"}}, fixedNow)
	src.retry = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snaps, errs := src.Watch(ctx)
	var errCount int
	deadline := time.After(10 * time.Second)
	for {
		select {
		case err, open := <-errs:
			if !open {
				t.Fatal("error channel closed while the context is live")
			}
			if !strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "\n") {
				t.Errorf("error = %q, want one line saying connection refused", err)
			}
			errCount++
			continue
		case s := <-snaps:
			if errCount == 0 {
				t.Error("a snapshot came before any error was reported")
			}
			if len(s.Deployments) != 1 {
				t.Errorf("deployments = %d, want 1", len(s.Deployments))
			}
			return
		case <-deadline:
			t.Fatalf("no snapshot within 10s after %d errors", errCount)
		}
	}
}

// An informer whose server refuses connections retries its watch quietly (client-go treats
// connection refused as retriable and never calls the watch error handler). The source must
// still say the server is gone, and publish a fresh snapshot once the watch runs again, so the
// console can stop calling its picture stale even when nothing changed meanwhile.
func TestWatchReportsARefusedWatchAndPublishesWhenItRunsAgain(t *testing.T) {
	client := fake.NewClientset(deployment("telemetry", "ingester"))
	refused := &url.Error{
		Op:  "Get",
		URL: "https://10.0.0.1:6443/apis/apps/v1/namespaces/telemetry/deployments?watch=true",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}},
	}
	var mu sync.Mutex
	failures := 2
	var backAt time.Time
	client.PrependWatchReactor("deployments", func(k8stesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		if failures > 0 {
			failures--
			return true, nil, refused
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
	deadline := time.After(20 * time.Second)
	for {
		select {
		case err := <-errs:
			if !strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "\n") {
				t.Errorf("error = %q, want one line saying connection refused", err)
			}
			errCount++
		case s := <-snaps:
			mu.Lock()
			back := backAt
			mu.Unlock()
			if back.IsZero() || !s.ReferenceTime.After(back) {
				continue // the first read, or the caches' first snapshot, from before the outage ended
			}
			if errCount == 0 {
				t.Error("the refused watch was never reported")
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

func TestNamespaceNamesAreSortedAndAForbiddenListSaysSo(t *testing.T) {
	ns := func(name string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	client := fake.NewClientset(ns("telemetry"), ns("default"), ns("payments"))
	src := newForClient(client, Options{Namespaces: []string{"telemetry"}}, fixedNow)
	got, err := src.NamespaceNames(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"default", "payments", "telemetry"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("names = %v, want %v", got, want)
	}
	var rv string
	for _, a := range client.Actions() {
		if l, ok := a.(k8stesting.ListActionImpl); ok && a.GetResource().Resource == "namespaces" {
			rv = l.GetListOptions().ResourceVersion
		}
	}
	if rv != "0" {
		t.Errorf("namespaces listed with resourceVersion %q, want 0 (served from the watch cache)", rv)
	}

	client.PrependReactor("list", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "",
			errors.New(`User "viewer" cannot list resource "namespaces" in API group "" at the cluster scope`))
	})
	if _, err := src.NamespaceNames(context.Background()); err == nil || !apierrors.IsForbidden(err) {
		t.Errorf("forbidden list: err = %v, want a Forbidden error", err)
	}
}

func TestTuneAsksForProtobufAndBoundsEveryRequest(t *testing.T) {
	in := &rest.Config{Host: "https://example.invalid"}
	out := tune(in)
	if out.ContentType != "application/vnd.kubernetes.protobuf" || !strings.HasPrefix(out.AcceptContentTypes, "application/vnd.kubernetes.protobuf,") {
		t.Errorf("content types = %q / %q, want protobuf first", out.ContentType, out.AcceptContentTypes)
	}
	if out.Timeout != DefaultRequestTimeout {
		t.Errorf("timeout = %v, want the default %v when --request-timeout is unset", out.Timeout, DefaultRequestTimeout)
	}
	if in.ContentType != "" {
		t.Error("tune changed the caller's config")
	}
	if got := tune(&rest.Config{Timeout: 3 * time.Second}).Timeout; got != 3*time.Second {
		t.Errorf("timeout = %v, want --request-timeout's 3s", got)
	}
	if got := tune(&rest.Config{QPS: 20, Burst: 40}); got.QPS != 20 || got.Burst != 40 {
		t.Errorf("QPS %v, burst %d, want a caller's own 20 and 40 kept", got.QPS, got.Burst)
	}
}

// A kubeconfig's client has no rate of its own: every group's client of a source sends as fast
// as its requests in flight allow, and the server's flow control says when that is too fast.
func TestSourceClientsAreNotThrottledOnTheClientSide(t *testing.T) {
	src, err := newSource(&rest.Config{Host: "https://example.invalid"}, "", "default", Options{}, NewConnections(), nil)
	if err != nil {
		t.Fatal(err)
	}
	watchClient, err := src.watchClient()
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]kubernetes.Interface{"lists": src.client, "watches": watchClient} {
		for group, rc := range map[string]rest.Interface{
			"core": c.CoreV1().RESTClient(), "apps": c.AppsV1().RESTClient(),
			"batch": c.BatchV1().RESTClient(), "discovery": c.DiscoveryV1().RESTClient(),
		} {
			if l := rc.GetRateLimiter(); l != nil {
				t.Errorf("%s, %s group: a client-side rate limiter (%T, %v a second)", name, group, l, l.QPS())
			}
		}
	}
}

func TestLogRequestsAreCapped(t *testing.T) {
	var pods []*corev1.Pod
	for i := range maxLogRequests + 10 {
		// One owner per copy, so the per-owner bound does not apply.
		pods = append(pods, pod("ns", fmt.Sprintf("p-%03d", i), fmt.Sprintf("rs-%03d", i), notReady))
	}
	plan := failingLogRequests(pods, nil, maxLogRequests)
	if len(plan.reqs) != maxLogRequests {
		t.Errorf("requests = %d, want %d", len(plan.reqs), maxLogRequests)
	}
	vis := plan.visibility(nil)
	if len(vis) != 1 || vis[0].Kind != "pods/log" || !strings.Contains(vis[0].Reason, "read no log of 10 failing workloads") ||
		!strings.Contains(vis[0].Reason, "ReplicaSet/rs-509 (1 copy)") || strings.Contains(vis[0].Reason, "rs-499") {
		t.Errorf("visibility = %+v, want one pods/log entry naming the 10 workloads skipped, rs-500 to rs-509", vis)
	}
}

func TestMissingKubeconfigAndContextAreNamed(t *testing.T) {
	dir := t.TempDir()
	noContext := filepath.Join(dir, "no-context")
	cfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:1\"}\n"
	if err := os.WriteFile(noContext, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, kubeconfig, want string }{
		{"no clusters at all", empty, "no cluster in kubeconfig " + empty + "; set KUBECONFIG or pass --kubeconfig"},
		{"no current context", noContext, "no current context; run kubectl config use-context or pass --context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			flags := genericclioptions.NewConfigFlags(false)
			flags.KubeConfig = &tt.kubeconfig
			_, err := New(flags, Options{})
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

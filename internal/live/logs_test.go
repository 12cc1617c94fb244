package live

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// fleet builds Deployments, their ReplicaSets and copies as the API server holds them after the
// deployment controller, scheduler and a v1.37 kubelet wrote them.
type fleet struct {
	ns    string
	deps  []*appsv1.Deployment
	rss   []*appsv1.ReplicaSet
	pods  []*corev1.Pod
	index int
}

func hexOf(s string, n int) string {
	return fmt.Sprintf("%x", sha256.Sum256([]byte(s)))[:n]
}

// replicaSet adds a Deployment's ReplicaSet of one revision (the Deployment too, at the first).
func (f *fleet) replicaSet(deploy, hash string, revision int) *appsv1.ReplicaSet {
	var d *appsv1.Deployment
	for _, x := range f.deps {
		if x.Name == deploy {
			d = x
		}
	}
	if d == nil {
		d = &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: deploy, UID: types.UID(hexOf("d"+deploy, 8) + "-1c2d-4e5f-8a9b-" + hexOf("d"+deploy, 12))},
		}
		f.deps = append(f.deps, d)
	}
	yes := true
	rs := &appsv1.ReplicaSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: f.ns, Name: deploy + "-" + hash, UID: types.UID(hexOf("rs"+deploy+hash, 8) + "-3a4b-4c5d-9e0f-" + hexOf("rs"+deploy+hash, 12)),
			Labels:      map[string]string{"app": deploy, "pod-template-hash": hash},
			Annotations: map[string]string{"deployment.kubernetes.io/revision": fmt.Sprint(revision)},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: &yes, BlockOwnerDeletion: &yes,
			}},
		},
	}
	f.rss = append(f.rss, rs)
	return rs
}

// crashLoop adds a copy of rs whose container exited with reason/code and waits in
// CrashLoopBackOff, with the kubelet's back-off message.
func (f *fleet) crashLoop(rs *appsv1.ReplicaSet, reason string, code int32, restarts int32) *corev1.Pod {
	f.index++
	yes := true
	name := rs.Name + "-" + hexOf(fmt.Sprint(rs.Name, f.index), 5)
	uid := types.UID(hexOf(name, 8) + "-5b6c-4d7e-8f90-" + hexOf(name, 12))
	started := metav1.NewTime(t0.Add(-20 * time.Minute))
	exitStart := metav1.NewTime(t0.Add(-3 * time.Minute))
	exitEnd := metav1.NewTime(t0.Add(-3*time.Minute + 2*time.Second))
	back := "5m0s"
	if restarts < 5 {
		back = fmt.Sprintf("%ds", 10<<(restarts-1))
	}
	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: f.ns, Name: name, UID: uid, GenerateName: rs.Name + "-",
			Labels: map[string]string{"app": rs.Labels["app"], "pod-template-hash": rs.Labels["pod-template-hash"]},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes, BlockOwnerDeletion: &yes,
			}},
		},
		Spec: corev1.PodSpec{
			NodeName:   fmt.Sprintf("worker-%d", f.index%3+1),
			Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/" + rs.Labels["app"] + ":1.4.2"}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: started},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: started},
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [app]", LastTransitionTime: exitEnd},
				{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [app]", LastTransitionTime: exitEnd},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: started},
			},
			HostIP: "10.0.0.11", PodIP: fmt.Sprintf("10.244.1.%d", f.index%250+2), QOSClass: corev1.PodQOSBestEffort,
			StartTime: &started,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", Ready: false, RestartCount: restarts,
				Image:   "registry.example.com/" + rs.Labels["app"] + ":1.4.2",
				ImageID: "registry.example.com/" + rs.Labels["app"] + "@sha256:" + hexOf(rs.Name, 64),
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
					Reason:  "CrashLoopBackOff",
					Message: fmt.Sprintf("back-off %s restarting failed container=app pod=%s_%s(%s)", back, name, f.ns, uid),
				}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: code, Reason: reason, StartedAt: exitStart, FinishedAt: exitEnd,
					ContainerID: "containerd://" + hexOf(name+fmt.Sprint(restarts), 64),
				}},
				ContainerID: "containerd://" + hexOf(name+fmt.Sprint(restarts), 64),
			}},
		},
	}
	f.pods = append(f.pods, p)
	return p
}

func (f *fleet) objects() []runtime.Object {
	var objs []runtime.Object
	for _, d := range f.deps {
		objs = append(objs, d)
	}
	for _, rs := range f.rss {
		objs = append(objs, rs)
	}
	for _, p := range f.pods {
		objs = append(objs, p)
	}
	return objs
}

// logsByWorkload counts the tails read per Deployment.
func logsByWorkload(f *fleet, logs []snapshot.ContainerLog) map[string]int {
	rsOf := map[string]string{}
	for _, p := range f.pods {
		rsOf[p.Name] = p.OwnerReferences[0].Name
	}
	depOf := map[string]string{}
	for _, rs := range f.rss {
		depOf[rs.Name] = rs.OwnerReferences[0].Name
	}
	n := map[string]int{}
	for _, l := range logs {
		n[depOf[rsOf[l.Pod]]]++
	}
	return n
}

// The 150 workloads with two failing copies each; listed in an order where a cap in list
// order would give the first workloads every copy and the last none.
func manyFailingWorkloads() *fleet {
	f := &fleet{ns: "shop"}
	for i := range 150 {
		rs := f.replicaSet(fmt.Sprintf("svc-%03d", i), hexOf(fmt.Sprint(i), 10), 1)
		f.crashLoop(rs, "Error", 1, 7)
		f.crashLoop(rs, "Error", 1, 6)
	}
	return f
}

func TestEveryFailingWorkloadHasALogRead(t *testing.T) {
	f := manyFailingWorkloads()
	client := fake.NewClientset(f.objects()...)
	snap, err := newForClient(client, Options{Namespaces: []string{"shop"}}, fixedNow).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := logsByWorkload(f, snap.Logs)
	for _, d := range f.deps {
		if got[d.Name] != 2 {
			t.Errorf("%s: %d tails read, want both failing copies", d.Name, got[d.Name])
		}
	}
	for _, v := range snap.Visibility {
		if v.Kind == "pods/log" {
			t.Errorf("visibility %+v, want none: every failing copy was read", v)
		}
	}
}

func TestABoundReachesEveryWorkloadBeforeAnySecondCopy(t *testing.T) {
	f := manyFailingWorkloads()
	// 200 requests for 300 failing copies: the old global cap's case.
	plan := failingLogRequests(f.pods, f.rss, 200)
	if len(plan.reqs) != 200 {
		t.Fatalf("requests = %d, want 200", len(plan.reqs))
	}
	perWorkload := map[string]int{}
	logs := make([]snapshot.ContainerLog, 0, len(plan.reqs))
	for _, r := range plan.reqs {
		if !r.previous {
			t.Errorf("%s/%s: current instance asked for; a container in CrashLoopBackOff has only its previous log", r.pod, r.container)
		}
		logs = append(logs, snapshot.ContainerLog{Namespace: r.namespace, Pod: r.pod, Container: r.container})
	}
	for name, n := range logsByWorkload(f, logs) {
		perWorkload[name] = n
	}
	one, two := 0, 0
	for _, d := range f.deps {
		switch perWorkload[d.Name] {
		case 1:
			one++
		case 2:
			two++
		default:
			t.Errorf("%s: %d tails, want one or two", d.Name, perWorkload[d.Name])
		}
	}
	if one != 100 || two != 50 {
		t.Errorf("workloads with one tail = %d, with two = %d; want 100 and 50", one, two)
	}
	vis := plan.visibility(nil)
	if len(vis) != 1 || vis[0].Namespace != "shop" || vis[0].Kind != "pods/log" {
		t.Fatalf("visibility = %+v, want one pods/log entry for shop", vis)
	}
	r := vis[0].Reason
	if strings.Contains(r, "read no log of") {
		t.Errorf("reason %q says a workload had no log read; each had one", r)
	}
	// The first 50 workloads in order had both copies read, so svc-050 is the first one named.
	if !strings.Contains(r, "1 of 2 failing copies of Deployment/svc-050, Deployment/svc-051") ||
		strings.Contains(r, "svc-049") || !strings.Contains(r, "and 75 more such workloads") {
		t.Errorf("reason %q, want 1 of 2 copies of svc-050 onwards named, the rest of the 100 counted", r)
	}
}

func TestAWorkloadLeftOutByTheBoundIsNamed(t *testing.T) {
	f := manyFailingWorkloads()
	plan := failingLogRequests(f.pods, f.rss, 148)
	r := plan.visibility(nil)[0].Reason
	want := "read no log of 2 failing workloads, over the bound of 148 log requests per read: Deployment/svc-148 (2 copies), Deployment/svc-149 (2 copies)"
	if !strings.Contains(r, want) {
		t.Errorf("reason %q, want it to contain %q", r, want)
	}
	if !strings.Contains(r, "1 of 2 failing copies of Deployment/svc-000") {
		t.Errorf("reason %q, want the sampled workloads counted too", r)
	}
}

func TestCopiesFailingDifferentlyHaveMoreRead(t *testing.T) {
	f := &fleet{ns: "pay"}
	// Alike: six copies exit 1 the same way.
	alike := f.replicaSet("ledger", "7d9f8c6b5d", 1)
	for range 6 {
		f.crashLoop(alike, "Error", 1, 9)
	}
	// Two ways of dying within one revision: three exit 1, three are OOM-killed.
	oom := f.replicaSet("checkout", "5f6d7c8b9a", 3)
	for range 3 {
		f.crashLoop(oom, "Error", 1, 9)
	}
	for range 3 {
		f.crashLoop(oom, "OOMKilled", 137, 4)
	}
	// Two revisions failing alike: a rollout that did not help.
	old := f.replicaSet("gateway", "6c7b8a9d4f", 4)
	next := f.replicaSet("gateway", "84d5c6b7f9", 5)
	for range 3 {
		f.crashLoop(old, "Error", 2, 12)
		f.crashLoop(next, "Error", 2, 3)
	}
	plan := failingLogRequests(f.pods, f.rss, maxLogRequests)
	reasons := map[string]map[string]int{}
	byPod := map[string]*corev1.Pod{}
	for _, p := range f.pods {
		byPod[p.Name] = p
	}
	for _, r := range plan.reqs {
		p := byPod[r.pod]
		d := strings.TrimSuffix(p.OwnerReferences[0].Name, "-"+p.Labels["pod-template-hash"])
		if reasons[d] == nil {
			reasons[d] = map[string]int{}
		}
		reasons[d][p.OwnerReferences[0].Name+" "+p.Status.ContainerStatuses[0].LastTerminationState.Terminated.Reason]++
	}
	if n := total(reasons["ledger"]); n != 2 {
		t.Errorf("ledger: %d copies read (%v), want 2 of copies failing alike", n, reasons["ledger"])
	}
	if c := reasons["checkout"]; total(c) != 4 || c["checkout-5f6d7c8b9a Error"] != 2 || c["checkout-5f6d7c8b9a OOMKilled"] != 2 {
		t.Errorf("checkout: %v, want 2 copies of each way of failing", c)
	}
	if g := reasons["gateway"]; total(g) != 4 || g["gateway-6c7b8a9d4f Error"] != 2 || g["gateway-84d5c6b7f9 Error"] != 2 {
		t.Errorf("gateway: %v, want 2 copies of each revision", g)
	}
	// Copies left beyond the sample are no gap in what was seen.
	if vis := plan.visibility(nil); len(vis) != 0 {
		t.Errorf("visibility = %+v, want none: every workload had its sample read", vis)
	}
	// A bound of 7 reads the three workloads in rounds: checkout has a third copy read, gateway
	// stops at two, ledger has its sample; the copies not read are counted per workload.
	vis := failingLogRequests(f.pods, f.rss, 7).visibility(nil)
	if len(vis) != 1 {
		t.Fatalf("visibility = %+v, want one entry", vis)
	}
	for _, want := range []string{"not read: 4 of 6 failing copies of Deployment/gateway; 3 of 6 failing copies of Deployment/checkout"} {
		if !strings.Contains(vis[0].Reason, want) {
			t.Errorf("reason %q, want %q", vis[0].Reason, want)
		}
	}
	if strings.Contains(vis[0].Reason, "ledger") {
		t.Errorf("reason %q names ledger, whose sample of 2 was read", vis[0].Reason)
	}
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// clock is a settable source clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func logActions(client *fake.Clientset) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetSubresource() == "log" {
			n++
		}
	}
	return n
}

func watchSnapshot(f *fleet) *snapshot.Snapshot {
	return &snapshot.Snapshot{Namespaces: []string{f.ns}, Pods: f.pods, ReplicaSets: f.rss}
}

func TestWatchRefetchesATailOnlyWhenItsContainerRestarted(t *testing.T) {
	f := &fleet{ns: "shop"}
	for i := range 10 {
		rs := f.replicaSet(fmt.Sprintf("svc-%d", i), hexOf(fmt.Sprint(i), 10), 1)
		f.crashLoop(rs, "Error", 1, 7)
	}
	client := fake.NewClientset(f.objects()...)
	clk := &clock{now: t0}
	s := newForClient(client, Options{Namespaces: []string{"shop"}}, clk.Now)
	first, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	read := logActions(client)
	if read != 10 {
		t.Fatalf("first read: %d log requests, want 10", read)
	}
	cache := newLogCache(first, clk.Now())

	snap := watchSnapshot(f)
	if wait := s.cachedLogs(context.Background(), snap, cache); wait != 0 {
		t.Errorf("retry in %v, want none", wait)
	}
	if n := logActions(client) - read; n != 0 {
		t.Errorf("%d log requests for the tails the first read had, want 0", n)
	}
	if len(snap.Logs) != 10 {
		t.Errorf("%d tails in the snapshot, want the 10 cached", len(snap.Logs))
	}

	// A minute of updates that leave the restart counts alone (new objects, as an informer
	// delivers them, with a new resourceVersion) asks for nothing.
	for i := range 60 {
		clk.advance(time.Second)
		for j, p := range f.pods {
			f.pods[j] = p.DeepCopy()
			f.pods[j].ResourceVersion = fmt.Sprint(1000 + i)
		}
		s.cachedLogs(context.Background(), watchSnapshot(f), cache)
	}
	if n := logActions(client) - read; n != 0 {
		t.Errorf("%d log requests over a minute of unchanged restart counts, want 0", n)
	}

	// One copy restarts: its previous instance is new, and only its tail is asked for.
	cs := &f.pods[3].Status.ContainerStatuses[0]
	cs.RestartCount++
	cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(clk.Now())}}
	clk.advance(time.Second)
	s.cachedLogs(context.Background(), watchSnapshot(f), cache)
	if n := logActions(client) - read; n != 2 {
		t.Errorf("%d log requests after one restart, want 2 (the restarted copy's previous and current instance)", n)
	}
	for r, e := range cache.entries {
		if fresh := e.fetched.Equal(clk.Now()); fresh != (r.pod == f.pods[3].Name) {
			t.Errorf("%s/%s previous=%v fetched at %v; want only the restarted %s fetched now", r.pod, r.container, r.previous, e.fetched, f.pods[3].Name)
		}
	}
}

func TestWatchRefetchesAreRateBounded(t *testing.T) {
	f := &fleet{ns: "shop"}
	for i := range 120 {
		rs := f.replicaSet(fmt.Sprintf("svc-%03d", i), hexOf(fmt.Sprint(i), 10), 1)
		f.crashLoop(rs, "Error", 1, 7)
	}
	client := fake.NewClientset(f.objects()...)
	clk := &clock{now: t0}
	s := newForClient(client, Options{Namespaces: []string{"shop"}}, clk.Now)
	cache := newLogCache(nil, clk.Now())

	// 120 copies start failing at once: a burst is read, the rest wait their turn.
	snap := watchSnapshot(f)
	wait := s.cachedLogs(context.Background(), snap, cache)
	if n := logActions(client); n != logRefetchBurst {
		t.Errorf("%d log requests at once, want the burst of %d", n, logRefetchBurst)
	}
	if wait <= 0 {
		t.Errorf("retry in %v, want a wait for the deferred tails", wait)
	}
	var waiting string
	for _, v := range snap.Visibility {
		if v.Kind == "pods/log" && strings.Contains(v.Reason, "not read yet") {
			waiting = v.Reason
		}
	}
	if !strings.Contains(waiting, "70 log tails not read yet") {
		t.Errorf("visibility %+v, want 70 log tails waiting named", snap.Visibility)
	}
	// The first 50 workloads in order were read: no workload's later tail jumps the queue.
	got := logsByWorkload(f, snap.Logs)
	if got["svc-049"] != 1 || got["svc-050"] != 0 {
		t.Errorf("svc-049 has %d tails, svc-050 %d; want 1 and 0", got["svc-049"], got["svc-050"])
	}

	// Snapshots every half second for 4 s, as under a stream of pod updates, while every copy
	// restarts each time: the rate holds whatever the demand.
	for range 8 {
		clk.advance(500 * time.Millisecond)
		for _, p := range f.pods {
			p.Status.ContainerStatuses[0].RestartCount++
		}
		s.cachedLogs(context.Background(), watchSnapshot(f), cache)
	}
	if n := logActions(client) - logRefetchBurst; n != 4*logRefetchRate {
		t.Errorf("%d log requests in 4 s, want %d at %d a second", n, 4*logRefetchRate, logRefetchRate)
	}
}

func TestWatchStartsFromTheFirstReadsTailsAndFetchesDeferredOnesWithoutAnotherChange(t *testing.T) {
	f := &fleet{ns: "shop"}
	for i := range 10 {
		f.crashLoop(f.replicaSet(fmt.Sprintf("svc-%03d", i), hexOf(fmt.Sprint(i), 10), 1), "Error", 1, 7)
	}
	client := fake.NewClientset(f.objects()...)
	src := newForClient(client, Options{Namespaces: []string{"shop"}}, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snaps, errs := src.Watch(ctx)
	until := func(what string, ok func(*snapshot.Snapshot) bool) {
		t.Helper()
		deadline := time.After(15 * time.Second)
		for {
			select {
			case s := <-snaps:
				if ok(s) {
					return
				}
			case err := <-errs:
				t.Fatalf("watch error: %v", err)
			case <-deadline:
				t.Fatalf("no snapshot %s within 15s", what)
			}
		}
	}
	// The first read: ten tails, fetched once; the informers start from it and ask for none.
	until("from the first read", func(s *snapshot.Snapshot) bool { return len(s.Logs) == 10 })
	deps, rss, pods := len(f.deps), len(f.rss), len(f.pods)
	waitWatching(t, client, "deployments", "replicasets", "pods")
	if n := logActions(client); n != 10 {
		t.Errorf("%d log requests once the informers run, want the first read's 10", n)
	}

	// Seventy more workloads start failing at once: more than a burst. The rest must arrive
	// although nothing in the cluster changes after.
	for i := range 70 {
		f.crashLoop(f.replicaSet(fmt.Sprintf("new-%03d", i), hexOf(fmt.Sprint("new", i), 10), 1), "Error", 1, 3)
	}
	for _, d := range f.deps[deps:] {
		if _, err := client.AppsV1().Deployments(f.ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, rs := range f.rss[rss:] {
		if _, err := client.AppsV1().ReplicaSets(f.ns).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range f.pods[pods:] {
		if _, err := client.CoreV1().Pods(f.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	until("with all 80 tails", func(s *snapshot.Snapshot) bool { return len(s.Logs) == 80 })
	if n := logActions(client); n != 80 {
		t.Errorf("%d log requests, want 80: each tail once", n)
	}
}

func TestACopyOfManyContainersDoesNotStopTheOthers(t *testing.T) {
	f := &fleet{ns: "shop"}
	// First in order: a copy whose 300 restarted containers ask for 600 tails, over the bound.
	big := f.crashLoop(f.replicaSet("aaa-mesh", "58c4d7b9f6", 1), "Error", 1, 2)
	template := big.Status.ContainerStatuses[0]
	for i := range 300 {
		cs := *template.DeepCopy()
		cs.Name = fmt.Sprintf("sidecar-%03d", i)
		// Restarted and running again: its current and previous instance both have a tail.
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(-time.Minute))}}
		big.Spec.Containers = append(big.Spec.Containers, corev1.Container{Name: cs.Name, Image: "registry.example.com/sidecar:2.0"})
		big.Status.ContainerStatuses = append(big.Status.ContainerStatuses, cs)
	}
	for i := range 100 {
		f.crashLoop(f.replicaSet(fmt.Sprintf("svc-%03d", i), hexOf(fmt.Sprint(i), 10), 1), "Error", 1, 7)
	}
	plan := failingLogRequests(f.pods, f.rss, maxLogRequests)
	got := map[string]int{}
	for _, r := range plan.reqs {
		got[r.pod]++
	}
	if got[big.Name] != 0 || len(got) != 100 {
		t.Errorf("tails of %d copies, %d of the big one; want the 100 others and none of the big one", len(got), got[big.Name])
	}
	vis := plan.visibility(nil)
	if len(vis) != 1 || !strings.Contains(vis[0].Reason, "read no log of 1 failing workload, over the bound of 500 log requests per read: Deployment/aaa-mesh (1 copy)") {
		t.Errorf("visibility = %+v, want Deployment/aaa-mesh named as unread", vis)
	}
}

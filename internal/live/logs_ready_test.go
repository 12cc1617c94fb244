package live

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	appsv1 "k8s.io/api/apps/v1"
)

// readyCopy adds a Ready, running copy of rs whose container has env.
func (f *fleet) readyCopy(rs *appsv1.ReplicaSet, env ...corev1.EnvVar) *corev1.Pod {
	f.index++
	yes := true
	name := rs.Name + "-" + hexOf(fmt.Sprint(rs.Name, f.index), 5)
	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: f.ns, Name: name, UID: types.UID(hexOf(name, 8) + "-5b6c-4d7e-8f90-" + hexOf(name, 12)),
			Labels: map[string]string{"app": rs.Labels["app"], "pod-template-hash": rs.Labels["pod-template-hash"]},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes,
			}},
		},
		Spec: corev1.PodSpec{
			NodeName:   "worker-1",
			Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/app:1", Env: env}},
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
			}},
		},
	}
	f.pods = append(f.pods, p)
	return p
}

func plain(name, value string) corev1.EnvVar { return corev1.EnvVar{Name: name, Value: value} }

// TestReadyCopiesNamingAnEndpointHaveOneLogRead: a workload whose copies are all Ready has one
// copy's log read when a plain env value of theirs holds a host:port or a URL with a port,
// after every failing workload's; loopback addresses, ports alone, values from Secrets and
// plain words are no endpoint.
func TestReadyCopiesNamingAnEndpointHaveOneLogRead(t *testing.T) {
	tests := []struct {
		name string
		env  []corev1.EnvVar
		read bool
	}{
		{"host and port", []corev1.EnvVar{plain("REDIS_ADDR", "sessions-redis.identity.svc:6380")}, true},
		{"URL with a port", []corev1.EnvVar{plain("LOG", "info"), plain("AMQP_URL", "amqp://rabbitmq.messaging.svc:5672/vhost")}, true},
		{"IP and port", []corev1.EnvVar{plain("UPSTREAM", "10.96.14.7:9443")}, true},
		{"URL without a port", []corev1.EnvVar{plain("API", "https://api.example.com/v1")}, false},
		{"loopback", []corev1.EnvVar{plain("SIDECAR", "127.0.0.1:15000"), plain("ADMIN", "localhost:9901")}, false},
		{"a port alone", []corev1.EnvVar{plain("LISTEN", ":8080")}, false},
		{"from a Secret", []corev1.EnvVar{{Name: "DB_ADDR", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "addr"},
		}}}, false},
		{"a time of day", []corev1.EnvVar{plain("WINDOW", "02:30")}, false},
		// Where this filter's own parse and the engine's used to disagree (facts.EnvEndpoints
		// is now both): host:ports among other words are endpoints, a file and line is not.
		{"host:ports in a longer value", []corev1.EnvVar{plain("PEERS", "cache-0.cache:6379,cache-1.cache:6379")}, true},
		{"a file and line", []corev1.EnvVar{plain("BREAKPOINT", "handlers.go:71")}, false},
		{"no env", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fleet{ns: "shop"}
			broken := f.replicaSet("broken", "aaaaa", 1)
			f.crashLoop(broken, "Error", 1, 4)
			rs := f.replicaSet("sweeper", "bbbbb", 1)
			a, b := f.readyCopy(rs, tt.env...), f.readyCopy(rs, tt.env...)
			first := min(a.Name, b.Name)
			plan := failingLogRequests(f.pods, f.rss, maxLogRequests)
			var pods []string
			for _, r := range plan.reqs {
				pods = append(pods, r.pod)
			}
			if len(pods) == 0 || !strings.HasPrefix(pods[0], "broken-") {
				t.Fatalf("requests for %v, want the failing copy's first", pods)
			}
			want := 1
			if tt.read {
				want = 2
				if pods[len(pods)-1] != first {
					t.Errorf("requests for %v, want the first Ready copy by name (%s) last", pods, first)
				}
			}
			if len(pods) != want {
				t.Errorf("requests for %v, want %d", pods, want)
			}
		})
	}
}

// TestReadyWorkloadsTakeWhatFailingOnesLeave: failing workloads are read first; Ready ones take
// what the request bound and their own bound leave, and those left are counted by namespace.
func TestReadyWorkloadsTakeWhatFailingOnesLeave(t *testing.T) {
	f := manyFailingWorkloads() // 150 workloads, 300 failing copies
	for i := range maxReadyLogWorkloads + 30 {
		rs := f.replicaSet(fmt.Sprintf("ready-%03d", i), hexOf(fmt.Sprint("r", i), 10), 1)
		f.readyCopy(rs, plain("UPSTREAM", fmt.Sprintf("svc-%03d.shop.svc:8080", i)))
	}
	plan := failingLogRequests(f.pods, f.rss, maxLogRequests)
	failingReqs, readyReqs := 0, 0
	for _, r := range plan.reqs {
		if strings.HasPrefix(r.pod, "ready-") {
			readyReqs++
		} else if readyReqs > 0 {
			t.Fatalf("a failing copy's request (%s) after a Ready one's", r.pod)
		} else {
			failingReqs++
		}
	}
	if failingReqs != 300 || readyReqs != maxReadyLogWorkloads {
		t.Errorf("%d failing and %d Ready requests, want 300 and %d", failingReqs, readyReqs, maxReadyLogWorkloads)
	}
	vis := plan.visibility(nil)
	if len(vis) != 1 || !strings.Contains(vis[0].Reason, "read no log of 30 workloads whose copies are Ready and whose env names an endpoint") {
		t.Errorf("visibility %+v, want the 30 Ready workloads left counted", vis)
	}

	// Under a tighter request bound the failing workloads' second copies come before any
	// Ready workload's first.
	plan = failingLogRequests(f.pods, f.rss, 310)
	readyReqs = 0
	for _, r := range plan.reqs {
		if strings.HasPrefix(r.pod, "ready-") {
			readyReqs++
		}
	}
	if len(plan.reqs) != 310 || readyReqs != 10 {
		t.Errorf("%d requests, %d of Ready copies; want 310 and 10", len(plan.reqs), readyReqs)
	}
}

// TestWatchRereadsATailWhenReadinessFalls: a tail read while the copy was Ready is read again
// when the copy loses readiness without restarting. Kept, it would hide the lines that began
// with the fall, and the copy would look out of readiness with nothing failing.
func TestWatchRereadsATailWhenReadinessFalls(t *testing.T) {
	f := &fleet{ns: "shop"}
	rs := f.replicaSet("ingest", "ccccc", 2)
	p := f.readyCopy(rs, plain("INTAKE", "intake.telemetry.svc:9443"))
	client := fake.NewClientset(f.objects()...)
	clk := &clock{now: t0}
	s := newForClient(client, Options{Namespaces: []string{"shop"}}, clk.Now)
	first, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	read := logActions(client)
	if read != 1 {
		t.Fatalf("first read: %d log requests, want the Ready copy's 1", read)
	}
	cache := newLogCache(first, clk.Now())

	clk.advance(time.Second)
	s.cachedLogs(context.Background(), watchSnapshot(f), cache)
	if n := logActions(client) - read; n != 0 {
		t.Errorf("%d log requests while nothing changed, want 0", n)
	}

	p.Status.Conditions[0].Status = corev1.ConditionFalse
	p.Status.ContainerStatuses[0].Ready = false
	clk.advance(time.Second)
	snap := watchSnapshot(f)
	s.cachedLogs(context.Background(), snap, cache)
	if n := logActions(client) - read; n != 1 {
		t.Errorf("%d log requests after the copy lost readiness, want 1: the tail read while Ready", n)
	}
	if len(snap.Logs) != 1 || snap.Logs[0].Pod != p.Name {
		t.Errorf("tails %+v, want %s's", snap.Logs, p.Name)
	}

	clk.advance(time.Second)
	s.cachedLogs(context.Background(), watchSnapshot(f), cache)
	if n := logActions(client) - read; n != 1 {
		t.Errorf("%d log requests once readiness stayed down, want still 1", n)
	}
}

// TestWatchRereadsARunningCopysTailAsItAges: a running container's log grows while nothing the
// cache keys on changes. A copy first read while running and not yet Ready, whose moment of
// readiness no snapshot caught before it fell again, has the same instance before and after:
// its tail is read again once it is logRefresh old, and the watch is told when that falls due.
// Tails due within half of logRefresh are read with it, so refreshing does not rebuild a
// snapshot for each tail apart.
func TestWatchRereadsARunningCopysTailAsItAges(t *testing.T) {
	f := &fleet{ns: "shop"}
	rs := f.replicaSet("ingest", "ccccc", 2)
	a := f.readyCopy(rs, plain("INTAKE", "intake.telemetry.svc:9443"))
	a.Status.Conditions[0].Status = corev1.ConditionFalse
	a.Status.ContainerStatuses[0].Ready = false
	client := fake.NewClientset(f.objects()...)
	clk := &clock{now: t0}
	s := newForClient(client, Options{Namespaces: []string{"shop"}}, clk.Now)
	first, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	read := logActions(client)
	if read != 1 {
		t.Fatalf("first read: %d log requests, want the running copy's 1", read)
	}
	cache := newLogCache(first, clk.Now())
	step := func(d time.Duration) time.Duration {
		clk.advance(d)
		return s.cachedLogs(context.Background(), watchSnapshot(f), cache)
	}

	if wait := step(time.Second); wait != logRefresh-time.Second {
		t.Errorf("wait %v, want the rest of logRefresh, %v", wait, logRefresh-time.Second)
	}

	// A second copy starts running, unready, when the first tail is half of logRefresh old: its
	// tail is new and read at once.
	b := f.readyCopy(rs, plain("INTAKE", "intake.telemetry.svc:9443"))
	b.Status.Conditions[0].Status = corev1.ConditionFalse
	b.Status.ContainerStatuses[0].Ready = false
	if wait := step(logRefresh/2 - time.Second); wait != logRefresh/2 {
		t.Errorf("wait %v with the first tail half of logRefresh old, want %v", wait, logRefresh/2)
	}
	if n := logActions(client) - read; n != 1 {
		t.Fatalf("%d log requests, want 1: the new copy's", n)
	}
	if wait := step(logRefresh/2 - time.Second); wait != time.Second {
		t.Errorf("wait %v, want the second until the first tail is due", wait)
	}
	if n := logActions(client) - read; n != 1 {
		t.Errorf("%d log requests with the first tail %v old, want still 1", n, logRefresh-time.Second)
	}

	// The first tail falls due; the second, half of logRefresh old by then, is read with it.
	if wait := step(time.Second); wait != logRefresh {
		t.Errorf("wait %v after the refresh, want %v", wait, logRefresh)
	}
	if n := logActions(client) - read; n != 3 {
		t.Errorf("%d log requests once the first tail was logRefresh old, want 3: both tails read again", n)
	}

	// A container that is not running (crash-looping, between restarts) does not grow a log:
	// once its instance changed, nothing is read again and nothing falls due.
	for _, p := range []*corev1.Pod{a, b} {
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	}
	step(time.Second)
	before := logActions(client)
	if wait := step(2 * logRefresh); wait != 0 {
		t.Errorf("wait %v for waiting containers, want none", wait)
	}
	if n := logActions(client) - before; n != 0 {
		t.Errorf("%d log requests for containers that are not running, want 0", n)
	}
}

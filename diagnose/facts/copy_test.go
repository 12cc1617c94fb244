package facts

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var copyRef = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

func copyAgo(d time.Duration) metav1.Time { return metav1.NewTime(copyRef.Add(-d)) }

func copyAgoPtr(d time.Duration) *metav1.Time {
	t := copyAgo(d)
	return &t
}

// copyPod is a copy made ten minutes ago with a readiness probe of 5 s delay and 3×10 s,
// started 9m50s ago; state writes its status.
func copyPod(state func(p *corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", CreationTimestamp: copyAgo(10 * time.Minute)}}
	p.Spec.Containers = []corev1.Container{{Name: "app", ReadinessProbe: &corev1.Probe{InitialDelaySeconds: 5, PeriodSeconds: 10, FailureThreshold: 3}}}
	p.Status.StartTime = copyAgoPtr(10*time.Minute - 10*time.Second)
	state(p)
	return p
}

func readyCondition(status corev1.ConditionStatus, changed time.Duration, msg string) corev1.PodCondition {
	return corev1.PodCondition{Type: corev1.PodReady, Status: status, LastTransitionTime: copyAgo(changed), Message: msg}
}

func runningApp(ready bool, since time.Duration, restarts int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name: "app", Ready: ready, RestartCount: restarts,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: copyAgo(since)}},
	}
}

// TestReadCopy holds the lifecycle record to what the pod says, and its timing to the
// derivations the engine reads: whether a copy was Ready once (WasReady), how long it has run
// (RunningFor), what its probes allow it, and whether its Ready stretches are a crash loop's
// (BriefReadyOnly).
func TestReadCopy(t *testing.T) {
	const minute = time.Minute
	type want struct {
		active, ready, running, scheduled bool
		phase                             corev1.PodPhase
		readySeen                         bool
		readyMessage                      string
		restarts                          int32
		containers                        int
		wasReady                          bool
		runningFor                        time.Duration
		allowance                         time.Duration
		briefReadyOnly                    bool
		started                           bool
	}
	// The probe's 5 s + 3×10 s, and the status writes' grace.
	const allowance = 35*time.Second + EndpointGrace
	cases := []struct {
		name  string
		state func(p *corev1.Pod)
		want  want
	}{
		{
			name: "Ready and running",
			state: func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodRunning
				p.Status.Conditions = []corev1.PodCondition{
					{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
					readyCondition(corev1.ConditionTrue, 9*minute, ""),
				}
				p.Status.ContainerStatuses = []corev1.ContainerStatus{runningApp(true, 9*minute+30*time.Second, 0)}
			},
			want: want{
				active: true, ready: true, running: true, scheduled: true, phase: corev1.PodRunning, readySeen: true,
				containers: 1, runningFor: 9*minute + 30*time.Second, allowance: allowance, started: true,
			},
		},
		{
			name: "never Ready: the condition went False when the copy started and stayed",
			state: func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodRunning
				p.Status.Conditions = []corev1.PodCondition{readyCondition(corev1.ConditionFalse, 10*minute-12*time.Second, "containers with unready status: [app]")}
				p.Status.ContainerStatuses = []corev1.ContainerStatus{runningApp(false, 9*minute+40*time.Second, 0)}
			},
			want: want{
				active: true, running: true, phase: corev1.PodRunning, readySeen: true, readyMessage: "containers with unready status: [app]",
				containers: 1, runningFor: 9*minute + 40*time.Second, allowance: allowance, started: true,
			},
		},
		{
			name: "Ready, then NotReady two minutes ago: it was Ready",
			state: func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodRunning
				p.Status.Conditions = []corev1.PodCondition{readyCondition(corev1.ConditionFalse, 2*minute, "containers with unready status: [app]")}
				p.Status.ContainerStatuses = []corev1.ContainerStatus{runningApp(false, 9*minute+40*time.Second, 0)}
			},
			want: want{
				active: true, running: true, phase: corev1.PodRunning, readySeen: true, readyMessage: "containers with unready status: [app]",
				containers: 1, wasReady: true, runningFor: 9*minute + 40*time.Second, allowance: allowance, started: true,
			},
		},
		{
			name: "a restarted container in a crash loop: Ready between kills is not having been Ready",
			state: func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodRunning
				p.Status.Conditions = []corev1.PodCondition{readyCondition(corev1.ConditionFalse, 30*time.Second, "")}
				cs := corev1.ContainerStatus{
					Name: "app", RestartCount: 5,
					State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
						ExitCode: 137, Reason: "OOMKilled", StartedAt: copyAgo(50 * time.Second), FinishedAt: copyAgo(30 * time.Second),
					}},
				}
				p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
			},
			want: want{
				active: true, phase: corev1.PodRunning, readySeen: true, restarts: 5, containers: 1,
				allowance: allowance, briefReadyOnly: true, started: true,
			},
		},
		{
			name: "init containers: their restarts count, and they do not make the copy not running",
			state: func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodRunning
				p.Status.Conditions = []corev1.PodCondition{readyCondition(corev1.ConditionTrue, 8*minute, "")}
				p.Status.InitContainerStatuses = []corev1.ContainerStatus{{
					Name: "migrate", RestartCount: 2,
					State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}},
				}}
				p.Status.ContainerStatuses = []corev1.ContainerStatus{runningApp(true, 9*minute, 0)}
			},
			want: want{
				active: true, ready: true, running: true, phase: corev1.PodRunning, readySeen: true, restarts: 2,
				containers: 1, runningFor: 9 * minute, allowance: allowance, started: true,
				// The init container's restarts are the copy's, and no app container ran
				// sustained past a restart to say otherwise: read as a crash loop's.
				briefReadyOnly: true,
			},
		},
		{
			name: "a sidecar waiting: not running, and no running time",
			state: func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodRunning
				p.Status.ContainerStatuses = []corev1.ContainerStatus{
					runningApp(false, 5*minute, 0),
					{Name: "proxy", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}},
				}
			},
			want: want{active: true, phase: corev1.PodRunning, containers: 2, allowance: allowance, started: true},
		},
		{
			name: "missing StartTime: never was Ready, whatever its condition says",
			state: func(p *corev1.Pod) {
				p.Status.StartTime = nil
				p.Status.Phase = corev1.PodPending
				p.Status.Conditions = []corev1.PodCondition{readyCondition(corev1.ConditionFalse, 2*minute, "")}
			},
			want: want{active: true, phase: corev1.PodPending, readySeen: true, allowance: allowance},
		},
		{
			name: "finished: not active",
			state: func(p *corev1.Pod) {
				p.Status.Phase, p.Status.Reason = corev1.PodFailed, "Evicted"
			},
			want: want{phase: corev1.PodFailed, allowance: allowance, started: true},
		},
		{
			name: "hand-written probes: the API's defaults stand for unset period and threshold",
			state: func(p *corev1.Pod) {
				p.Spec.Containers = []corev1.Container{
					{Name: "app", ReadinessProbe: &corev1.Probe{InitialDelaySeconds: 20}},
					{Name: "slow", StartupProbe: &corev1.Probe{PeriodSeconds: 5, FailureThreshold: 30}, ReadinessProbe: &corev1.Probe{}},
				}
				p.Status.Phase = corev1.PodPending
			},
			// app: 20 s + 3×10 s = 50 s; slow: 30×5 s + 3×10 s = 180 s, the longest.
			want: want{active: true, phase: corev1.PodPending, allowance: 180*time.Second + EndpointGrace, started: true},
		},
		{
			name: "no probes: only the status writes' grace",
			state: func(p *corev1.Pod) {
				p.Spec.Containers = []corev1.Container{{Name: "app"}}
				p.Status.Phase = corev1.PodPending
			},
			want: want{active: true, phase: corev1.PodPending, allowance: EndpointGrace, started: true},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := copyPod(tc.state)
			c := ReadCopy(p)
			got := want{
				active: c.Active, ready: c.Ready, running: c.Running, scheduled: c.SchedulerAnswered, phase: c.Phase,
				readySeen: c.ReadyCondition.Seen, readyMessage: c.ReadyCondition.Message, restarts: c.Restarts,
				containers: len(c.Containers), wasReady: c.WasReady(), runningFor: c.RunningFor(copyRef),
				allowance: c.ProbeAllowance, briefReadyOnly: c.BriefReadyOnly(copyRef), started: !c.Started.IsZero(),
			}
			if got != tc.want {
				t.Errorf("ReadCopy:\n got %+v\nwant %+v", got, tc.want)
			}
			if !c.Created.Equal(p.CreationTimestamp.Time) {
				t.Errorf("Created = %v, want %v", c.Created, p.CreationTimestamp.Time)
			}
		})
	}
}

// TestReadCopyContainers: a container's facts are its status's, its last termination's
// included, the addresses are the status's, and the copies of a workload that share a room keep their own containers.
func TestReadCopyContainers(t *testing.T) {
	a := copyPod(func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		cs := runningApp(true, time.Minute, 1)
		cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, StartedAt: copyAgo(3 * time.Minute), FinishedAt: copyAgo(2 * time.Minute)}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
		p.Status.PodIP, p.Status.HostIP = "10.0.0.7", "192.168.1.2"
		p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.7"}, {IP: "fd00::7"}}
	})
	b := copyPod(func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{
			{Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2}}},
			{Name: "proxy"},
		}
	})
	var ca, cb Copy
	room := ReadCopyInto(&ca, a, make([]Container, 0, 1))
	room = ReadCopyInto(&cb, b, room)
	if len(room) != 3 || len(ca.Containers) != 1 || len(cb.Containers) != 2 {
		t.Fatalf("room %d, containers %d and %d; want 3, 1 and 2", len(room), len(ca.Containers), len(cb.Containers))
	}
	if ca.PodIP != "10.0.0.7" || ca.HostIP != "192.168.1.2" || len(ca.PodIPs) != 2 || ca.PodIPs[1].IP != "fd00::7" {
		t.Errorf("addresses = %q, %q, %v", ca.PodIP, ca.HostIP, ca.PodIPs)
	}
	app := ca.Containers[0]
	wantApp := Container{
		Name: "app", Ready: true, State: ContainerRunning, Running: true, RunningSince: copyAgo(time.Minute).Time, Restarts: 1,
		Last: Termination{Seen: true, ExitCode: 1, Started: copyAgo(3 * time.Minute).Time, Finished: copyAgo(2 * time.Minute).Time},
	}
	if app != wantApp {
		t.Errorf("container:\n got %+v\nwant %+v", app, wantApp)
	}
	if k := cb.Containers[0]; k.Name != "app" || k.State != ContainerTerminated || k.Running || k.Last.Seen {
		t.Errorf("terminated container = %+v", k)
	}
	if k := cb.Containers[1]; k.Name != "proxy" || k.State != 0 || k.Running {
		t.Errorf("container without a state = %+v", k)
	}
	if got, want := ca.RunningSince(), copyAgo(time.Minute).Time; !got.Equal(want) {
		t.Errorf("RunningSince = %v, want %v", got, want)
	}
	if !cb.RunningSince().IsZero() || cb.RunningFor(copyRef) != 0 {
		t.Errorf("a copy with nothing running: RunningSince %v, RunningFor %v", cb.RunningSince(), cb.RunningFor(copyRef))
	}
}

// TestBriefReadyOnlySettled: a container that restarted but has been Ready for SettleTime since
// ran sustained; one restarted long after the copy started had served before its crash loop.
func TestBriefReadyOnlySettled(t *testing.T) {
	settled := copyPod(func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.ContainerStatuses = []corev1.ContainerStatus{runningApp(true, SettleTime, 1)}
	})
	if c := ReadCopy(settled); c.BriefReadyOnly(copyRef) {
		t.Error("Ready for SettleTime after a restart: BriefReadyOnly = true, want false")
	}
	old := copyPod(func(p *corev1.Pod) {
		p.CreationTimestamp = copyAgo(72 * time.Hour)
		p.Status.Phase = corev1.PodRunning
		p.Status.ContainerStatuses = []corev1.ContainerStatus{runningApp(true, 20*time.Second, 3)}
	})
	if c := ReadCopy(old); c.BriefReadyOnly(copyRef) {
		t.Error("three days old with three recent restarts: BriefReadyOnly = true, want false")
	}
}

// TestReadCopiesSharesOneRoom: a workload's copies take their containers from one room, grown
// once, and each keeps its own; the next workload's reuse it.
func TestReadCopiesSharesOneRoom(t *testing.T) {
	two := func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{runningApp(true, time.Minute, 1), {Name: "proxy"}}
	}
	one := func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "solo", RestartCount: 4}}
	}
	pods := []*corev1.Pod{copyPod(two), copyPod(one), copyPod(func(*corev1.Pod) {})}
	copies := make([]Copy, len(pods))
	room := ReadCopies(pods, copies, nil)
	if len(room) != 3 || cap(room) != 3 {
		t.Fatalf("room of %d (cap %d), want 3 grown once", len(room), cap(room))
	}
	names := func(c *Copy) (out []string) {
		for _, k := range c.Containers {
			out = append(out, k.Name)
		}
		return out
	}
	if got := names(&copies[0]); len(got) != 2 || got[0] != "app" || got[1] != "proxy" {
		t.Errorf("first copy's containers = %v", got)
	}
	if got := names(&copies[1]); len(got) != 1 || got[0] != "solo" || copies[1].Restarts != 4 {
		t.Errorf("second copy's containers = %v, restarts %d", got, copies[1].Restarts)
	}
	if len(copies[2].Containers) != 0 {
		t.Errorf("a copy without statuses has containers %v", names(&copies[2]))
	}
	next := []*corev1.Pod{copyPod(one)}
	again := ReadCopies(next, copies[:1], room)
	if &again[0] != &room[0] || copies[0].Containers[0].Name != "solo" {
		t.Errorf("the next workload did not reuse the room: %v", names(&copies[0]))
	}
}

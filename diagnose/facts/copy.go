package facts

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Timing of readiness, taken from the copy's own spec rather than one fixed allowance.
//
// A copy is given what its probes give it: the readiness (and startup) probe's
// initialDelaySeconds + failureThreshold×periodSeconds, the time the kubelet itself allows
// before the probe's verdict stands, plus EndpointGrace. EndpointGrace covers the status writes
// that follow a verdict: the kubelet's status manager writes the Ready condition, and the
// EndpointSlice controller publishes the endpoint, each within seconds (the controller batches
// for at most a second by default). Thirty seconds is several times both; a copy Ready for
// longer that is still not a ready endpoint is not "warming up", its Service does not send it
// traffic.
const (
	EndpointGrace = 30 * time.Second
	// Kubernetes' probe defaults (pkg/apis/core/v1/defaults.go), for probes read from objects
	// the API server did not default (hand-written input).
	defaultProbePeriod           = 10 * time.Second
	defaultProbeFailureThreshold = 3
	// The kubelet's crash-loop back-off: 10 s doubling to 300 s (pkg/kubelet/kubelet.go
	// backOffPeriod, MaxContainerBackOff).
	crashBackoffInitial = 10 * time.Second
	CrashBackoffMax     = 300 * time.Second
	// StuckCreating: a copy still being created (ContainerCreating, or Pending unscheduled)
	// this long after it was made is stuck; it is also the time to create a copy.
	StuckCreating = 2 * time.Minute
	// SettleTime: a container that restarted recently and has been Ready this long since is
	// back, not dying.
	SettleTime = 10 * time.Minute
)

// Copy is the lifecycle of one copy (a pod) as its status tells it, read once (ReadCopy):
// every reader of a copy's phase, readiness, start and restarts reads this record, so two
// of them cannot derive its timing two ways.
type Copy struct {
	// Created is the pod's creation; Started its status.startTime, zero when the kubelet has
	// not written one.
	Created, Started time.Time
	// ReadyCondition is the pod's Ready condition.
	ReadyCondition Condition
	Phase          corev1.PodPhase
	// Reason and Message are the status's own (Evicted and why, for one).
	Reason, Message string
	// Active: not terminating and not finished (PodActive). Ready: the Ready condition is
	// True. Running: phase Running and every container running.
	Active, Ready, Running bool
	// SchedulerAnswered: the pod has a PodScheduled condition, whatever its status.
	SchedulerAnswered bool
	// Restarts is the restart count of every container, init containers' included.
	Restarts int32
	// PodIP, PodIPs and HostIP are the addresses the copy and its node answer on; PodIPs
	// is the status's own list.
	PodIP, HostIP string
	PodIPs        []corev1.PodIP
	// ProbeAllowance is how long the copy's own probes let it take to become Ready after its
	// containers start (ProbeAllowance).
	ProbeAllowance time.Duration
	// Containers are the app containers' statuses, in the order the status lists them.
	Containers []Container
}

// Condition is what a condition of a copy says; Seen is false when the copy has none of
// its type.
type Condition struct {
	Seen    bool
	Status  corev1.ConditionStatus
	Changed time.Time
	Message string
}

// Container is one app container's status.
type Container struct {
	Name  string
	Ready bool
	// State is ContainerWaiting, ContainerRunning or ContainerTerminated, as the observations
	// read it (a waiting state before a running one); 0 without a state.
	State Kind
	// Running: the container has a running state, which started at RunningSince (zero when
	// the runtime did not say).
	Running      bool
	RunningSince time.Time
	Restarts     int32
	// Last is its lastTerminationState.
	Last Termination
}

// Termination is a container's termination; Seen is false when it has none.
type Termination struct {
	Seen              bool
	ExitCode          int32
	Started, Finished time.Time
}

// ReadCopy reads p's lifecycle, its containers in a slice of their own.
func ReadCopy(p *corev1.Pod) Copy {
	var c Copy
	ReadCopyInto(&c, p, nil)
	return c
}

// ReadCopyInto reads p's lifecycle into c, its containers appended to room, and returns room:
// the copies of a workload share one.
func ReadCopyInto(c *Copy, p *corev1.Pod, room []Container) []Container {
	st := &p.Status
	*c = Copy{
		Created: p.CreationTimestamp.Time, Phase: st.Phase, Reason: st.Reason, Message: st.Message,
		Active: PodActive(p), ProbeAllowance: ProbeAllowance(&p.Spec),
		PodIP: st.PodIP, HostIP: st.HostIP, PodIPs: st.PodIPs,
	}
	if st.StartTime != nil {
		c.Started = st.StartTime.Time
	}
	readyDone := false
	for i := range st.Conditions {
		cd := &st.Conditions[i]
		switch cd.Type {
		case corev1.PodReady:
			if !readyDone {
				c.ReadyCondition = Condition{Seen: true, Status: cd.Status, Changed: cd.LastTransitionTime.Time, Message: cd.Message}
				readyDone = true
			}
		case corev1.PodScheduled:
			c.SchedulerAnswered = true
		}
	}
	c.Ready = c.ReadyCondition.Status == corev1.ConditionTrue
	for i := range st.InitContainerStatuses {
		c.Restarts += st.InitContainerStatuses[i].RestartCount
	}
	c.Running = st.Phase == corev1.PodRunning && len(st.ContainerStatuses) > 0
	from := len(room)
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		c.Restarts += cs.RestartCount
		k := Container{Name: cs.Name, Ready: cs.Ready, Restarts: cs.RestartCount}
		switch s := &cs.State; {
		case s.Waiting != nil:
			k.State = ContainerWaiting
		case s.Running != nil:
			k.State = ContainerRunning
		case s.Terminated != nil:
			k.State = ContainerTerminated
		}
		if r := cs.State.Running; r != nil {
			k.Running, k.RunningSince = true, r.StartedAt.Time
		}
		if t := cs.LastTerminationState.Terminated; t != nil {
			k.Last = Termination{Seen: true, ExitCode: t.ExitCode, Started: t.StartedAt.Time, Finished: t.FinishedAt.Time}
		}
		if k.State == ContainerWaiting || k.State == ContainerTerminated {
			c.Running = false
		}
		room = append(room, k)
	}
	c.Containers = room[from:len(room):len(room)]
	return room
}

// ReadCopies reads pods[i] into copies[i] and their containers into room, emptied first and
// grown once to fit them all, and returns room: a workload's copies share one, and a worker
// keeps it for the next workload.
func ReadCopies(pods []*corev1.Pod, copies []Copy, room []Container) []Container {
	n := 0
	for _, p := range pods {
		n += len(p.Status.ContainerStatuses)
	}
	room = room[:0]
	if cap(room) < n {
		room = make([]Container, 0, n)
	}
	for i, p := range pods {
		room = ReadCopyInto(&copies[i], p, room)
	}
	return room
}

// ProbeAllowance is how long a copy's own probes let it take to become Ready after its
// containers start: the longest of its containers' startup and readiness probe windows, plus
// EndpointGrace.
func ProbeAllowance(spec *corev1.PodSpec) time.Duration {
	var most time.Duration
	for i := range spec.Containers {
		c := &spec.Containers[i]
		most = max(most, probeWindow(c.StartupProbe)+probeWindow(c.ReadinessProbe))
	}
	return most + EndpointGrace
}

func probeWindow(pr *corev1.Probe) time.Duration {
	if pr == nil {
		return 0
	}
	period := time.Duration(pr.PeriodSeconds) * time.Second
	if period <= 0 {
		period = defaultProbePeriod
	}
	threshold := pr.FailureThreshold
	if threshold <= 0 {
		threshold = defaultProbeFailureThreshold
	}
	return time.Duration(pr.InitialDelaySeconds)*time.Second + time.Duration(threshold)*period
}

// WasReady reports a Ready condition that is False now but changed after the copy started by
// more than the kubelet takes to write its first status (EndpointGrace), which only a
// False→True→False history produces. A copy that restarted is left out: without a readiness
// probe every start of a crash loop is Ready for a moment, which is not serving.
func (c *Copy) WasReady() bool {
	rc := &c.ReadyCondition
	if !rc.Seen || rc.Status == corev1.ConditionTrue || c.Started.IsZero() || c.Restarts > 0 {
		return false
	}
	return rc.Changed.Sub(c.Started) > EndpointGrace
}

// RunningFor is how long the copy's latest-started container has been running at ref; zero
// when one is not running.
func (c *Copy) RunningFor(ref time.Time) time.Duration {
	var latest time.Time
	for i := range c.Containers {
		k := &c.Containers[i]
		if !k.Running {
			return 0
		}
		if k.RunningSince.After(latest) {
			latest = k.RunningSince
		}
	}
	if latest.IsZero() {
		return 0
	}
	return ref.Sub(latest)
}

// RunningSince is when the copy's most recently started running container started, the
// others running or not; zero when none runs.
func (c *Copy) RunningSince() time.Time {
	var t time.Time
	for i := range c.Containers {
		if k := &c.Containers[i]; k.Running && k.RunningSince.After(t) {
			t = k.RunningSince
		}
	}
	return t
}

// BriefReadyOnly reports a copy whose containers have crashed since it started and whose
// history cannot hold a sustained run: Ready between kills is not serving. A restarted
// container counts as having run sustained when it is Ready and has now been up SettleTime, or
// when the copy is older than a crash loop from its first start could make it: n restarts take
// about the kubelet's back-off delays plus n+1 runs as long as the longest one seen. The span is
// doubled, and the time to create a copy (StuckCreating) added, because runs vary and only the
// last two are visible; a copy that served for a while before it began to crash, and whose crash
// loop is still of the same order as that while, is read as not having served.
func (c *Copy) BriefReadyOnly(ref time.Time) bool {
	if c.Restarts == 0 {
		return false
	}
	age := ref.Sub(c.Created)
	for i := range c.Containers {
		k := &c.Containers[i]
		if k.Restarts == 0 {
			continue
		}
		if k.Running && k.Ready && ref.Sub(k.RunningSince) >= SettleTime {
			return false
		}
		var run time.Duration
		if lt := &k.Last; lt.Seen && !lt.Started.IsZero() {
			run = lt.Finished.Sub(lt.Started)
		}
		if k.Running {
			run = max(run, ref.Sub(k.RunningSince))
		}
		if age > 2*crashLoopSpan(k.Restarts, run)+StuckCreating {
			return false
		}
	}
	return true
}

// crashLoopSpan is the longest a container can take to restart n times when each run lasts at
// most run.
func crashLoopSpan(n int32, run time.Duration) time.Duration {
	span := time.Duration(n+1) * run
	delay := crashBackoffInitial
	for i := int32(0); i < n; i++ {
		if delay == CrashBackoffMax {
			// Past the cap every restart adds the same: finish in one step.
			span += time.Duration(n-i) * CrashBackoffMax
			break
		}
		span += delay
		delay = min(2*delay, CrashBackoffMax)
	}
	return span
}

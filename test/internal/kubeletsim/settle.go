package kubeletsim

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Settled is what the kubelet has reported for a pod once it has settled into the state its
// World gives it: the status it last wrote, the core/v1 Events it recorded on the way (counted
// as the legacy recorder counts repeats) and the log tails it would serve.
type Settled struct {
	Status corev1.PodStatus
	Events []*corev1.Event
	Logs   []SettledLog
}

// SettledLog is one container instance's log, as /containerLogs serves it.
type SettledLog struct {
	Container string
	Previous  bool
	Lines     []string
}

// Settle computes, without a clock or a client, the steady state a pod bound to nodeName reaches in
// world, as the simulated kubelet would after running it for a while, with the same formats:
//   - an image the registries do not resolve (or whose registry is down): ErrImagePull retried
//     into ImagePullBackOff, with Pulling, Failed and BackOff events;
//   - a program that exits (Program.ExitAfter, or a RequiredEnv that is not set): restarts with
//     the CrashLoopBackOff back-off, the exit in lastState, the exit's log lines;
//   - a readiness probe the program fails (its upstream unreachable, a port it does not listen
//     on, a path it does not serve): Running and never Ready, with Unhealthy events and the
//     upstream's error lines in the log;
//   - otherwise Running and Ready, with no events (they have expired).
//
// The pod's containers read their env values as written (valueFrom is not resolved: Settle
// reads no Secrets or ConfigMaps); init containers are taken as completed. ip is the pod IP;
// started is when the pod was bound and its sandbox started (not before its creation), now when
// the status was written. Pods of the same World and spec settle alike, so a caller may settle
// thousands of them in a pass.
func Settle(world *World, pod *corev1.Pod, nodeName, ip string, started, now time.Time) Settled {
	if world == nil {
		world = NewWorld()
	}
	s := &Sim{world: world, scale: 1, logf: func(string, ...any) {}}
	_, out := settle(s, &node{spec: NodeSpec{Name: nodeName}, images: map[string]int64{}}, pod, ip, started, now)
	return out
}

// settle is Settle on a Sim's node; it also returns the worker, whose containers the log
// endpoint reads.
func settle(s *Sim, n *node, pod *corev1.Pod, ip string, started, now time.Time) (*podWorker, Settled) {
	nodeName := n.spec.Name
	p := pod.DeepCopy()
	p.Spec.NodeName = nodeName
	if !hasCondition(p, corev1.PodScheduled) {
		// The binding subresource sets PodScheduled=True when the scheduler binds.
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
			Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metaTime(started),
		})
	}
	w := newPodWorker(s, n, p)
	w.ip, w.startTime, w.sandboxAt = ip, started, started
	st := settler{w: w, now: now, node: nodeName}
	for _, c := range w.init {
		st.completeInit(c)
	}
	for _, c := range w.ctrs {
		st.settle(c)
	}
	// Condition transitions happened when the containers settled, a moment after the start.
	for t := range w.conds {
		delete(w.conds, t)
	}
	settledAt := started.Add(2 * time.Second)
	if settledAt.After(now) {
		settledAt = now
	}
	for _, t := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady} {
		w.conds[t] = condState{status: st.condStatus(t), since: settledAt}
	}
	out := Settled{Status: w.status(now), Events: st.events}
	for _, c := range append(append([]*ctr{}, w.init...), w.ctrs...) {
		if len(c.prevLogs) > 0 {
			out.Logs = append(out.Logs, SettledLog{Container: c.spec.Name, Previous: true, Lines: texts(c.prevLogs)})
		}
		if len(c.logs) > 0 {
			out.Logs = append(out.Logs, SettledLog{Container: c.spec.Name, Lines: texts(c.logs)})
		}
	}
	return w, out
}

func hasCondition(p *corev1.Pod, t corev1.PodConditionType) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return true
		}
	}
	return false
}

func texts(lines []logLine) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.text
	}
	return out
}

// Settled counts: how often the kubelet has retried by the time the pod is looked at.
const (
	settledPulls    = 4  // ErrImagePull attempts, back-off 10s, 20s, 40s between them
	settledRestarts = 5  // crash-loop restarts, back-off 10s ... 2m40s
	settledProbes   = 30 // failed readiness probes
)

type settler struct {
	w      *podWorker
	now    time.Time
	node   string
	events []*corev1.Event
	serial int64
}

func (st *settler) condStatus(t corev1.PodConditionType) corev1.ConditionStatus {
	switch t {
	case corev1.PodReady, corev1.ContainersReady:
		for _, c := range st.w.ctrs {
			if !c.running || !c.started || !c.ready {
				return corev1.ConditionFalse
			}
		}
	}
	return corev1.ConditionTrue
}

// event records one kubelet event with its repeat count, like recorder.event after count calls.
func (st *settler) event(c *ctr, etype, reason, message string, count int32, first time.Time) {
	st.serial++
	ref := podRef(st.w.pod, c.spec.Name, c.isInit)
	st.events = append(st.events, &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", ref.Name, first.UnixNano()+st.serial), Namespace: ref.Namespace},
		InvolvedObject:      ref,
		Reason:              reason,
		Message:             message,
		Source:              corev1.EventSource{Component: "kubelet", Host: st.node},
		FirstTimestamp:      metav1.NewTime(first),
		LastTimestamp:       metav1.NewTime(st.now),
		Count:               count,
		Type:                etype,
		ReportingController: "kubelet",
		ReportingInstance:   st.node,
	})
}

func (st *settler) completeInit(c *ctr) {
	w := st.w
	c.id = newContainerID()
	c.startedAt = w.startTime
	c.term = &corev1.ContainerStateTerminated{
		ExitCode: 0, Reason: "Completed", ContainerID: "containerd://" + c.id,
		StartedAt: metaTime(w.startTime), FinishedAt: metaTime(w.startTime.Add(time.Second)),
	}
}

// pullError is the CRI's answer to a pull of c's image, "" when it succeeds.
func (st *settler) pullError(c *ctr) string {
	ref := parseImageRef(c.spec.Image)
	if st.w.s.world.isRegistryDown(ref.domain) {
		return pullNoSuchHost(ref)
	}
	img, ok := st.w.s.world.image(c.spec.Image)
	if !ok {
		img, ok = st.w.s.world.image(ref.String())
	}
	switch {
	case !ok:
		return pullNotFound(ref)
	case img.Private && len(st.w.pod.Spec.ImagePullSecrets) == 0:
		return pullAccessDenied(ref)
	}
	return ""
}

func (st *settler) settle(c *ctr) {
	w, now := st.w, st.now
	start := w.startTime
	image := withDefaultTag(c.spec.Image)
	if err := st.pullError(c); err != "" {
		msg := fmt.Sprintf("Back-off pulling image %q", image)
		st.event(c, corev1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", image), settledPulls, start)
		st.event(c, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %s", image, err), settledPulls, start)
		st.event(c, corev1.EventTypeWarning, "Failed", "Error: ErrImagePull", settledPulls, start)
		st.event(c, corev1.EventTypeNormal, "BackOff", msg, 2*settledPulls, start.Add(time.Second))
		st.event(c, corev1.EventTypeWarning, "Failed", "Error: ImagePullBackOff", 2*settledPulls, start.Add(time.Second))
		c.waitingReason = "ImagePullBackOff"
		c.waitingMessage = fmt.Sprintf("%s: ErrImagePull: %s", msg, err)
		return
	}
	env := map[string]string{}
	for _, e := range c.spec.Env {
		if e.ValueFrom == nil {
			env[e.Name] = expandVars(e.Value, func(n string) (string, bool) { v, ok := env[n]; return v, ok })
		}
	}
	prog := w.program(c)
	// run starts an instance at at, as start does once the image is present.
	run := func(at time.Time) {
		c.id = newContainerID()
		c.running, c.started, c.startedAt, c.env = true, true, at, env
		c.logs = nil
		for _, l := range prog.Logs {
			c.log(at, w.expand(c, l, nil))
		}
		c.exitAt, c.exitCode, c.exitReason = time.Time{}, 0, ""
		w.planExit(c, prog, at)
	}
	run(start)
	restarts := w.pod.Spec.RestartPolicy == "" || w.pod.Spec.RestartPolicy == corev1.RestartPolicyAlways
	if !c.exitAt.IsZero() && restarts {
		// Crash loop: the instance before the last logged the same lines; the last one exited a
		// moment ago and the next waits out the back-off: 10s after the second exit, doubling.
		length := c.exitAt.Sub(c.startedAt)
		run(now.Add(-length - time.Second))
		if c.exitReason == "Completed" || c.exitReason == "Error" {
			for _, l := range prog.ExitLogs {
				c.log(c.exitAt, w.expand(c, l, nil))
			}
		}
		c.prevLogs = append([]logLine(nil), c.logs...)
		c.running = false
		c.term = &corev1.ContainerStateTerminated{
			ExitCode: c.exitCode, Reason: c.exitReason, ContainerID: "containerd://" + c.id,
			StartedAt: metaTime(c.startedAt), FinishedAt: metaTime(c.exitAt),
		}
		c.restarts = settledRestarts
		backoff := min(10*time.Second<<(settledRestarts-1), 300*time.Second)
		c.waitingReason = "CrashLoopBackOff"
		c.waitingMessage = fmt.Sprintf("back-off %s restarting failed container=%s pod=%s",
			backoff, c.spec.Name, podFullName(w.pod))
		runs := int32(settledRestarts + 1)
		st.event(c, corev1.EventTypeNormal, "Pulled", fmt.Sprintf(
			"Container image %q already present on machine and can be accessed by the pod", c.spec.Image), runs, start)
		st.event(c, corev1.EventTypeNormal, "Created", "Container created", runs, start)
		st.event(c, corev1.EventTypeNormal, "Started", "Container started", runs, start)
		st.event(c, corev1.EventTypeWarning, "BackOff", fmt.Sprintf("Back-off restarting failed container %s in pod %s",
			c.spec.Name, podFullName(w.pod)), 2*settledRestarts, start.Add(10*time.Second))
		return
	}
	c.exitAt = time.Time{} // a container that would not be restarted is out of scope: it runs
	c.ready = c.spec.ReadinessProbe == nil && !c.isInit
	if p := c.spec.ReadinessProbe; p != nil {
		// The last few probes, each logging what the program says about its upstream.
		var ok bool
		var out string
		for i := 2; i >= 0; i-- {
			ok, out = w.probe(c, p, now.Add(-time.Duration(i)*period(p)))
		}
		c.ready = ok
		if !ok {
			st.event(c, corev1.EventTypeWarning, "Unhealthy", "Readiness probe failed: "+out, settledProbes,
				start.Add(time.Duration(p.InitialDelaySeconds)*time.Second+time.Second))
		}
	}
}

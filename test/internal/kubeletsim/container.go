package kubeletsim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ctr is the kubelet's view of one container of a pod, across restarts.
type ctr struct {
	spec   corev1.Container
	isInit bool

	// image pull back-off (images.imageManager): 10 s doubling to 300 s
	imgBackoff  time.Duration
	imgFailedAt time.Time
	imgErr      string
	// pullDoneAt is when a slow pull under way (Image.PullTime) completes; zero when none is.
	pullDoneAt time.Time

	waitingReason, waitingMessage string

	// the current container instance
	id         string
	running    bool
	startedAt  time.Time
	env        map[string]string
	exitAt     time.Time
	exitCode   int32
	exitReason string
	ready      bool
	readyNext  time.Time
	readyOK    int32
	readyFail  int32
	liveNext   time.Time
	liveFail   int32
	started    bool // the startup probe passed (or there is none)
	startNext  time.Time
	startFail  int32

	term         *corev1.ContainerStateTerminated // current instance ended, not restarted yet
	lastTerm     *corev1.ContainerStateTerminated // previous instance
	restarts     int32
	crashBackoff time.Duration // 0 until the first restart (kuberuntime doBackOff)

	logs, prevLogs []logLine
}

type logLine struct {
	t    time.Time
	text string
}

const maxLogLines = 2000

func (c *ctr) log(t time.Time, text string) {
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		c.logs = append(c.logs, logLine{t, l})
	}
	if len(c.logs) > maxLogLines {
		c.logs = c.logs[len(c.logs)-maxLogLines:]
	}
}

func newContainerID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// step advances one container at now and returns when it next needs attention.
func (w *podWorker) step(ctx context.Context, c *ctr, now time.Time) time.Time {
	s := w.s
	if c.running {
		return w.stepRunning(c, now)
	}
	if c.term != nil {
		if !w.shouldRestart(c) {
			return never
		}
		// kuberuntime doBackOff: in back-off since the last finish → CrashLoopBackOff.
		if c.crashBackoff > 0 {
			until := c.term.FinishedAt.Add(s.scaled(c.crashBackoff))
			if now.Before(until) {
				c.waitingReason = "CrashLoopBackOff"
				c.waitingMessage = fmt.Sprintf("back-off %s restarting failed container=%s pod=%s",
					c.crashBackoff, c.spec.Name, podFullName(w.pod))
				w.event(c, corev1.EventTypeWarning, "BackOff", fmt.Sprintf("Back-off restarting failed container %s in pod %s",
					c.spec.Name, podFullName(w.pod)), now)
				return earliest(now.Add(s.requeue()), until)
			}
			c.crashBackoff = min(2*c.crashBackoff, 300*time.Second)
		} else {
			c.crashBackoff = 10 * time.Second
		}
		c.lastTerm, c.term = c.term, nil
		c.restarts++
	}
	return w.start(ctx, c, now)
}

// shouldRestart applies the restart policy to an exited container.
func (w *podWorker) shouldRestart(c *ctr) bool {
	if c.isInit {
		return c.term.ExitCode != 0 && w.pod.Spec.RestartPolicy != corev1.RestartPolicyNever
	}
	switch w.pod.Spec.RestartPolicy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return c.term.ExitCode != 0
	}
	return true
}

// start pulls the image, builds the container config and starts it, like
// kuberuntime.startContainer; each failure is a waiting reason and a requeue.
func (w *podWorker) start(ctx context.Context, c *ctr, now time.Time) time.Time {
	s := w.s
	image := withDefaultTag(c.spec.Image)
	ref := parseImageRef(c.spec.Image)
	present := w.node.hasImage(ref.String())
	policy := c.spec.ImagePullPolicy
	switch {
	case policy == corev1.PullNever && !present:
		msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.spec.Image)
		w.event(c, corev1.EventTypeWarning, "ErrImageNeverPull", msg, now)
		c.waitingReason, c.waitingMessage = "ErrImageNeverPull", msg
		return now.Add(s.requeue())
	case policy == corev1.PullAlways || !present:
		if !c.imgFailedAt.IsZero() && now.Before(c.imgFailedAt.Add(s.scaled(c.imgBackoff))) {
			msg := fmt.Sprintf("Back-off pulling image %q", image)
			w.event(c, corev1.EventTypeNormal, "BackOff", msg, now)
			w.event(c, corev1.EventTypeWarning, "Failed", "Error: ImagePullBackOff", now)
			c.waitingReason = "ImagePullBackOff"
			c.waitingMessage = fmt.Sprintf("%s: ErrImagePull: %s", msg, c.imgErr)
			return now.Add(s.requeue())
		}
		if c.pullDoneAt.IsZero() {
			w.event(c, corev1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", image), now)
		}
		img, err := w.pull(ctx, ref)
		if err != "" {
			c.pullDoneAt = time.Time{}
			w.event(c, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %s", image, err), now)
			w.event(c, corev1.EventTypeWarning, "Failed", "Error: ErrImagePull", now)
			if c.imgBackoff == 0 {
				c.imgBackoff = 10 * time.Second
			} else {
				c.imgBackoff = min(2*c.imgBackoff, 300*time.Second)
			}
			c.imgFailedAt, c.imgErr = now, err
			c.waitingReason, c.waitingMessage = "ErrImagePull", err
			return now.Add(s.requeue())
		}
		if img.PullTime > 0 {
			if c.pullDoneAt.IsZero() {
				c.pullDoneAt = now.Add(s.scaled(img.PullTime))
			}
			if now.Before(c.pullDoneAt) {
				// Still pulling: the kubelet reports the container as being created.
				c.waitingReason, c.waitingMessage = "", ""
				return c.pullDoneAt
			}
		}
		c.pullDoneAt = time.Time{}
		size := img.Size
		if size == 0 {
			size = 24 * MiB
		}
		dur := time.Duration(float64(size)/(40*MiB)*float64(time.Second)) + 137*time.Millisecond
		if img.PullTime > 0 {
			dur = img.PullTime
		}
		w.event(c, corev1.EventTypeNormal, "Pulled", fmt.Sprintf(
			"Successfully pulled image %q in %v (%v including waiting). Image size: %d bytes.",
			image, dur.Truncate(time.Millisecond), (dur+3*time.Millisecond).Truncate(time.Millisecond), size), now)
		w.node.addImage(ref.String(), size)
		c.imgBackoff, c.imgFailedAt, c.imgErr = 0, time.Time{}, ""
	default:
		w.event(c, corev1.EventTypeNormal, "Pulled", fmt.Sprintf(
			"Container image %q already present on machine and can be accessed by the pod", c.spec.Image), now)
	}
	env, err := w.resolveEnv(ctx, c)
	if err != nil {
		msg := err.Error()
		w.event(c, corev1.EventTypeWarning, "Failed", "Error: "+msg, now)
		c.waitingReason, c.waitingMessage = "CreateContainerConfigError", msg
		return now.Add(s.requeue())
	}
	w.event(c, corev1.EventTypeNormal, "Created", "Container created", now)
	w.event(c, corev1.EventTypeNormal, "Started", "Container started", now)
	c.id = newContainerID()
	c.running, c.startedAt, c.env = true, now, env
	c.waitingReason, c.waitingMessage = "", ""
	c.prevLogs, c.logs = c.logs, nil
	c.ready, c.readyOK, c.readyFail, c.liveFail = false, 0, 0, 0
	c.exitAt, c.exitCode, c.exitReason = time.Time{}, 0, ""
	prog := w.program(c)
	for _, l := range prog.Logs {
		c.log(now, w.expand(c, l, nil))
	}
	w.planExit(c, prog, now)
	c.started, c.startFail = c.spec.StartupProbe == nil, 0
	if p := c.spec.StartupProbe; p != nil {
		c.startNext = now.Add(s.scaled(time.Duration(p.InitialDelaySeconds) * time.Second))
	}
	if p := c.spec.ReadinessProbe; p != nil {
		c.readyNext = now.Add(s.scaled(time.Duration(p.InitialDelaySeconds) * time.Second))
	} else {
		c.ready = !c.isInit && c.started
	}
	if p := c.spec.LivenessProbe; p != nil {
		c.liveNext = now.Add(s.scaled(time.Duration(p.InitialDelaySeconds) * time.Second))
	}
	return now
}

// planExit decides when and how this instance ends: missing env at once, the OOM killer once
// memory exceeds the limit, or the program's own exit.
func (w *podWorker) planExit(c *ctr, prog Program, now time.Time) {
	s := w.s
	for _, name := range prog.RequiredEnv {
		if c.env[name] == "" {
			for _, l := range prog.ExitLogs {
				c.log(now, w.expand(c, l, nil))
			}
			c.log(now, fmt.Sprintf("level=error msg=\"required environment variable %s is not set\"", name))
			c.exitAt, c.exitCode, c.exitReason = now.Add(s.scaled(300*time.Millisecond)), 1, "Error"
			return
		}
	}
	if limit, ok := c.spec.Resources.Limits[corev1.ResourceMemory]; ok && prog.Memory > limit.Value() {
		after := prog.OOMAfter
		if after == 0 {
			after = 5 * time.Second
		}
		c.exitAt, c.exitCode, c.exitReason = now.Add(s.scaled(after)), 137, "OOMKilled"
		return
	}
	if prog.ExitAfter > 0 {
		reason := "Completed"
		if prog.ExitCode != 0 {
			reason = "Error"
		}
		c.exitAt, c.exitCode, c.exitReason = now.Add(s.scaled(prog.ExitAfter)), prog.ExitCode, reason
		return
	}
	if c.isInit {
		c.exitAt, c.exitCode, c.exitReason = now.Add(s.scaled(time.Second)), 0, "Completed"
	}
}

// stepRunning ends the instance when due and runs the probes that are due.
func (w *podWorker) stepRunning(c *ctr, now time.Time) time.Time {
	s := w.s
	if !c.exitAt.IsZero() && !now.Before(c.exitAt) {
		if c.exitReason == "Completed" || c.exitReason == "Error" {
			for _, l := range w.program(c).ExitLogs {
				c.log(now, w.expand(c, l, nil))
			}
		}
		w.terminate(c, c.exitAt, c.exitCode, c.exitReason)
		return now
	}
	if c.exitAt.IsZero() {
		// The World may have changed the program: a grown working set is killed now.
		w.planExit(c, w.program(c), now)
	}
	next := c.exitAt
	if c.exitAt.IsZero() {
		next = never
	}
	if !c.started {
		// Readiness and liveness probes wait for the startup probe (prober worker).
		p := c.spec.StartupProbe
		if !now.Before(c.startNext) {
			ok, out := w.probe(c, p, now)
			if ok {
				c.started = true
				c.ready = c.spec.ReadinessProbe == nil && !c.isInit
				c.readyNext, c.liveNext = now, now
				return now
			}
			c.startFail++
			w.event(c, corev1.EventTypeWarning, "Unhealthy", "Startup probe failed: "+out, now)
			if c.startFail >= threshold(p.FailureThreshold) {
				w.event(c, corev1.EventTypeNormal, "Killing",
					fmt.Sprintf("Container %s failed startup probe, will be restarted", c.spec.Name), now)
				w.terminate(c, now, 143, "Error")
				return now
			}
			c.startNext = now.Add(s.scaled(period(p)))
		}
		return earliest(next, c.startNext)
	}
	if p := c.spec.ReadinessProbe; p != nil {
		if !now.Before(c.readyNext) {
			ok, out := w.probe(c, p, now)
			if ok {
				c.readyOK, c.readyFail = c.readyOK+1, 0
				if c.readyOK >= max(p.SuccessThreshold, 1) {
					c.ready = true
				}
			} else {
				c.readyOK, c.readyFail = 0, c.readyFail+1
				w.event(c, corev1.EventTypeWarning, "Unhealthy", "Readiness probe failed: "+out, now)
				if c.readyFail >= threshold(p.FailureThreshold) {
					c.ready = false
				}
			}
			c.readyNext = now.Add(s.scaled(period(p)))
		}
		next = earliest(next, c.readyNext)
	}
	if p := c.spec.LivenessProbe; p != nil {
		if !now.Before(c.liveNext) {
			ok, out := w.probe(c, p, now)
			if ok {
				c.liveFail = 0
			} else {
				c.liveFail++
				w.event(c, corev1.EventTypeWarning, "Unhealthy", "Liveness probe failed: "+out, now)
				if c.liveFail >= threshold(p.FailureThreshold) {
					w.event(c, corev1.EventTypeNormal, "Killing",
						fmt.Sprintf("Container %s failed liveness probe, will be restarted", c.spec.Name), now)
					w.terminate(c, now, 143, "Error")
					return now
				}
			}
			c.liveNext = now.Add(s.scaled(period(p)))
		}
		next = earliest(next, c.liveNext)
	}
	return next
}

func (w *podWorker) terminate(c *ctr, at time.Time, code int32, reason string) {
	c.running, c.ready = false, false
	c.term = &corev1.ContainerStateTerminated{
		ExitCode: code, Reason: reason, ContainerID: "containerd://" + c.id,
		StartedAt: metaTime(c.startedAt), FinishedAt: metaTime(at),
	}
	// The container backoff entry expires when a container ran longer than twice the maximum.
	if at.Sub(c.startedAt) > w.s.scaled(600*time.Second) {
		c.crashBackoff = 0
	}
}

func threshold(v int32) int32 {
	if v <= 0 {
		return 3
	}
	return v
}

func period(p *corev1.Probe) time.Duration {
	if p.PeriodSeconds <= 0 {
		return 10 * time.Second
	}
	return time.Duration(p.PeriodSeconds) * time.Second
}

// probe runs one probe against the simulated program, returning the prober's output on failure.
func (w *podWorker) probe(c *ctr, p *corev1.Probe, now time.Time) (bool, string) {
	prog := w.program(c)
	listening := !now.Before(c.startedAt.Add(w.s.scaled(prog.StartupDelay)))
	listens := func(port int32) bool { return listening && slices.Contains(prog.Ports, port) }
	switch {
	case p.HTTPGet != nil:
		port := w.port(c, p.HTTPGet.Port)
		scheme := strings.ToLower(string(p.HTTPGet.Scheme))
		if scheme == "" {
			scheme = "http"
		}
		host := p.HTTPGet.Host
		if host == "" {
			host = w.ip
		}
		hostPort := net.JoinHostPort(host, strconv.Itoa(int(port)))
		path := p.HTTPGet.Path
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		if !listens(port) {
			return false, fmt.Sprintf("Get %q: dial tcp %s: connect: connection refused", scheme+"://"+hostPort+path, hostPort)
		}
		code := w.httpStatus(c, prog, path, now)
		if code >= 200 && code < 400 {
			return true, ""
		}
		return false, fmt.Sprintf("HTTP probe failed with statuscode: %d", code)
	case p.TCPSocket != nil, p.GRPC != nil:
		var port int32
		if p.TCPSocket != nil {
			port = w.port(c, p.TCPSocket.Port)
		} else {
			port = p.GRPC.Port
		}
		hostPort := net.JoinHostPort(w.ip, strconv.Itoa(int(port)))
		if !listens(port) {
			return false, fmt.Sprintf("dial tcp %s: connect: connection refused", hostPort)
		}
		return true, ""
	}
	return true, "" // exec: the simulated program has every tool a probe might run
}

// httpStatus is what the program answers on path: 404 off its health paths, 503 while its
// upstream is unreachable (and it logs why) unless its probe ignores the upstream, else 200.
func (w *podWorker) httpStatus(c *ctr, prog Program, path string, now time.Time) int {
	if len(prog.HealthPaths) > 0 && !slices.Contains(prog.HealthPaths, path) {
		return 404
	}
	if prog.UpstreamEnv != "" {
		up := c.env[prog.UpstreamEnv]
		if up == "" || !w.s.world.Reachable(up) {
			hp := HostPort(up)
			dialErr := fmt.Sprintf("dial tcp %s: connect: connection refused", hp)
			line := prog.UpstreamErrorLog
			if line == "" {
				line = `level=error msg="upstream unavailable" endpoint=$(UPSTREAM) err="$(ERROR)"`
			}
			c.log(now, w.expand(c, line, map[string]string{"UPSTREAM": up, "ERROR": dialErr}))
			if !prog.ProbeIgnoresUpstream {
				return 503
			}
		}
	}
	return 200
}

// port resolves a probe port, named ports through the container's ports.
func (w *podWorker) port(c *ctr, p intstr.IntOrString) int32 {
	if p.Type == intstr.Int {
		return p.IntVal
	}
	for _, cp := range c.spec.Ports {
		if cp.Name == p.StrVal {
			return cp.ContainerPort
		}
	}
	return 0
}

// program is the current behaviour of the container's image (the World may change it).
func (w *podWorker) program(c *ctr) Program {
	img, _ := w.s.world.image(c.spec.Image)
	return img.Program
}

// expand replaces $(VAR) with the container's environment, extra values and the pod IP.
func (w *podWorker) expand(c *ctr, s string, extra map[string]string) string {
	return expandVars(s, func(name string) (string, bool) {
		if v, ok := extra[name]; ok {
			return v, true
		}
		if name == "POD_IP" {
			return w.ip, true
		}
		v, ok := c.env[name]
		return v, ok
	})
}

// expandVars implements the kubelet's $(VAR) syntax ($$ escapes, unknown references stay).
func expandVars(s string, lookup func(string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteByte(s[i])
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

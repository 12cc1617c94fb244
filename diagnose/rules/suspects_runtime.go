package rules

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
)

// The runtime rules. IDs are stable: scripts and the documentation refer to them.
const (
	RuleCommandNotFound    RuleID = "command-not-found"
	RuleExecFormat         RuleID = "exec-format"
	RuleProcessEnds        RuleID = "process-ends"
	RuleMemoryLimit        RuleID = "memory-limit"
	RuleMemoryLimitAtStart RuleID = "memory-limit-at-start"
	RuleMemoryBelowHeap    RuleID = "memory-limit-below-heap"
)

// runtimeFamily reads OOM kills and missing executables.
var _ = register(family{
	order:  70,
	name:   "runtime",
	detect: (*ranker).runtimeRules,
	rules: []RuleInfo{
		{
			RuleCommandNotFound, "command names an executable the image does not have",
			"StartError/RunContainerError `exec: \"x\": executable file not found in $PATH`",
			"Correct command/args, or use an image that contains the executable.", false,
		},
		{
			RuleExecFormat, "The image's executable is built for another CPU architecture than the node's",
			"`exec /PATH: exec format error` (runc) in the container's log or termination message",
			"Use an image built for the node's architecture (a multi-arch image), or keep the pods on nodes of the image's (nodeSelector kubernetes.io/arch).", true,
		},

		{
			RuleProcessEnds, "The container's process ends on its own, and the workload's controller restarts it",
			"CrashLoopBackOff after `Completed` (exit code 0) in a Deployment, StatefulSet, DaemonSet or ReplicaSet",
			"Run the server in the foreground (not a daemon, not a one-shot script); a task that runs to completion is a Job's.", false,
		},
		{
			RuleMemoryLimit, "The memory limit is below what the container uses",
			"OOMKilled (exit code 137)",
			"Raise resources.limits.memory, or find what made the container grow.", true,
		},
		{
			RuleMemoryLimitAtStart, "The memory limit is too low for the container (or the pod's sandbox) to start at all",
			"runc's `container init was OOM-killed (memory limit too low?)` in a StartError, its Failed event, or FailedCreatePodSandBox",
			"Raise resources.limits.memory: no process ran, so the limit alone is short.", false,
		},
		{
			RuleMemoryBelowHeap, "The memory limit is below the heap the container's own flags ask for",
			"OOMKilled with a JVM -Xms/-Xmx (in args or an env value) at or above resources.limits.memory",
			"Raise resources.limits.memory above the heap plus overhead, or lower the heap flags.", false,
		},
	},
})

// The probe rules. IDs are stable: scripts and the documentation refer to them.
const (
	RuleProbePort        RuleID = "probe-port"
	RuleProbePath        RuleID = "probe-path"
	RuleLivenessTimeout  RuleID = "liveness-timeout"
	RuleReadinessTimeout RuleID = "readiness-timeout"
	RuleLivenessStartup  RuleID = "liveness-timeout-at-start"
)

// probeFamily checks probe ports and reads probe failures.
var _ = register(family{
	order:  110,
	name:   "probe",
	detect: (*ranker).probeRules,
	rules: []RuleInfo{
		{
			RuleProbePort, "A probe targets a port the container does not serve",
			"probe port matching no containerPort; probe `connection refused`",
			"Point the probe at a declared containerPort (by name or number).", false,
		},
		{
			RuleProbePath, "An HTTP probe asks for a path the application does not serve",
			"`Readiness probe failed: HTTP probe failed with statuscode: 404`",
			"Use the path the application serves for health checks.", false,
		},
		{
			RuleLivenessTimeout, "The liveness probe times out and the kubelet restarts a container that used to answer in time",
			"`Liveness probe failed: ... context deadline exceeded` on copies that start and die, in a workload that served",
			"Raise timeoutSeconds or failureThreshold, or add a startupProbe for slow starts.", true,
		},
		{
			RuleReadinessTimeout, "The readiness probe gets no answer in time: the copies run but never serve",
			"`Readiness probe failed: ... context deadline exceeded` (or `command timed out`) on copies that run, live but idle",
			"Raise timeoutSeconds if the health check is slow by design; else find what the application waits on (its logs).", true,
		},
		{
			RuleLivenessStartup, "The liveness probe times out and kills a container that never served: it starts slower than the probe allows",
			"`Liveness probe failed: ... context deadline exceeded` on a workload no revision of which served",
			"Add a startupProbe, or raise timeoutSeconds, initialDelaySeconds or failureThreshold so the container can finish starting.", false,
		},
	},
})

// Containers that start and die, or never start their process.
//   - OOMKilled: the terminated reason the kubelet reports from the runtime (exit code 137).
//   - A missing executable: runc's `exec: "NAME": executable file not found in $PATH` (or
//     `exec: "/PATH": stat /PATH: no such file or directory`), wrapped by containerd as
//     `failed to create containerd task: failed to create shim task: OCI runtime create failed:
//     runc create failed: unable to start container process: error during container init: ...: unknown`,
//     in a StartError terminated state and a RunContainerError / `Error: ...` Failed event.
var reExecMissing = regexp.MustCompile(`exec: "([^"]+)": (?:executable file not found in \$PATH|stat \S+: no such file or directory|permission denied)`)

// runtimeRules reads OOM kills and missing executables.
func (r *ranker) runtimeRules() {
	oom := map[string][]*Signal{}
	var startOOM []*Signal
	for _, s := range r.in.Signals {
		if s.Reason == "OOMKilled" {
			oom[s.Container] = append(oom[s.Container], s)
			s.Explained = true
			continue
		}
		if strings.Contains(s.Text, initOOM) {
			startOOM = append(startOOM, s)
			s.Explained = true
			continue
		}
		if strings.Contains(s.Text, "exec format error") {
			r.read(s)
			r.execFormat(s)
			s.Explained = true
			continue
		}
		if !strings.Contains(s.Text, `exec: "`) {
			continue
		}
		if m := reExecMissing.FindStringSubmatch(s.Text); m != nil {
			r.read(s)
			r.executable(m[1], s)
			s.Explained = true
		}
	}
	r.processEnds()
	r.oomAtStart(startOOM)
	for _, c := range r.containers() {
		sigs := oom[c.c.Name]
		if len(sigs) == 0 {
			continue
		}
		r.readAll(sigs)
		limit := c.c.Resources.Limits.Memory()
		// The exit code is the one the runtime reported, not the 137 a SIGKILL usually gives.
		killed := "OOMKilled (exit code " + strconv.Itoa(int(sigs[0].ExitCode)) + ")"
		reason := killed + " at the memory limit " + limit.String() + r.copiesOf(sigs)
		if limit.IsZero() {
			reason = killed + " with no memory limit" + r.copiesOf(sigs) + ": the node ran out of memory"
		}
		limitPath := fieldpath.ResourcePath(c.path.Child("resources", "limits"), "memory")
		r.suspectTemplate(RuleMemoryLimit, limitPath, scoreCertain, reason)
		if !limit.IsZero() {
			r.heapAboveLimit(c, limitPath, limit.Value())
		}
	}
}

// initOOM is runc's word for a process killed by the memory limit before it could start
// (libcontainer's process_linux.go), which containerd wraps as `failed to create containerd
// task: ... container init was OOM-killed (memory limit too low?): unknown`: in a container's
// StartError and its `Error: ...` Failed event, or, for the pod's sandbox, in the kubelet's
// `Failed to create pod sandbox: ...` (FailedCreatePodSandBox; v1.31 and v1.37 alike).
const initOOM = "container init was OOM-killed"

// oomAtStart names the memory limit of a container that is killed as it starts, and for the
// sandbox, which runs in the pod's memory limit, the smallest limit of the pod's containers
// first: no process of them ever ran, so nothing but the limit can have used the memory.
func (r *ranker) oomAtStart(sigs []*Signal) {
	if len(sigs) == 0 {
		return
	}
	byContainer := map[string][]*Signal{}
	var sandbox []*Signal
	for _, s := range sigs {
		if s.Container == "" {
			sandbox = append(sandbox, s)
			continue
		}
		byContainer[s.Container] = append(byContainer[s.Container], s)
	}
	var smallest int64
	for _, c := range r.containers() {
		if q := c.c.Resources.Limits.Memory(); !q.IsZero() && (smallest == 0 || q.Value() < smallest) {
			smallest = q.Value()
		}
	}
	for _, c := range r.containers() {
		limit := c.c.Resources.Limits.Memory()
		if limit.IsZero() {
			continue
		}
		limitPath := fieldpath.ResourcePath(c.path.Child("resources", "limits"), "memory")
		if own := byContainer[c.c.Name]; len(own) > 0 {
			r.readAll(own)
			r.suspectTemplate(RuleMemoryLimitAtStart, limitPath, scoreCertain,
				"the runtime reports "+initOOM+" for container "+c.c.Name+r.copiesOf(own)+": it cannot start inside its memory limit "+limit.String())
		}
		if len(sandbox) > 0 {
			score := scoreLikely
			if limit.Value() == smallest {
				score = scoreCertain
			}
			r.readAll(sandbox)
			r.suspectTemplate(RuleMemoryLimitAtStart, limitPath, score,
				"the pod's sandbox is OOM-killed as it is created"+r.copiesOf(sandbox)+"; container "+c.c.Name+"'s memory limit is "+limit.String())
		}
	}
}

// processEnds reads copies whose container completed (exit code 0) and was restarted: the
// failure has no message at all (podSignals skips a clean exit), yet a server that returns is
// the spec's doing, its command or its image's entrypoint. A batch kind's container is meant to.
func (r *ranker) processEnds() {
	if r.in.Batch {
		return
	}
	ended := map[string]int{}
	for _, f := range r.in.Copies {
		lt := &f.LastTerminated
		if f.Dies == "" || !f.Current || !f.Terminated || lt.Init || lt.ExitCode != 0 || lt.Reason != "Completed" {
			continue
		}
		ended[lt.Container]++
	}
	for _, c := range r.containers() {
		n := ended[c.c.Name]
		if n == 0 {
			continue
		}
		copies := "1 copy"
		if n > 1 {
			copies = strconv.Itoa(n) + " copies"
		}
		said := "container " + c.c.Name + " ends on its own (Completed, exit code 0) on " + copies +
			" and is restarted: a " + r.in.Kind + "'s container must keep running in the foreground"
		switch {
		case len(c.c.Command) > 0:
			r.suspectTemplate(RuleProcessEnds, c.path.Child("command"), scoreLikely, said+"; its command "+Clip(strings.Join(c.c.Command, " "), 80)+" runs to completion")
		case len(c.c.Args) > 0:
			r.suspectTemplate(RuleProcessEnds, c.path.Child("args"), scoreLikely, said+"; the image's entrypoint, given args "+Clip(strings.Join(c.c.Args, " "), 80)+", runs to completion")
		default:
			r.suspectTemplate(RuleProcessEnds, c.path.Child("image"), scoreLikely, said+"; the image's own entrypoint runs to completion")
		}
	}
}

// reHeapFlag matches the JVM's initial and maximum heap flags (-Xms256m, -Xmx1g).
var reHeapFlag = regexp.MustCompile(`(?:^|\s)-Xm([sx])(\d+)([kKmMgGtT]?)\b`)

// heapAboveLimit finds a heap flag in the container's args, command or env values that asks
// for at least the memory limit: the spec contradicts itself, whatever the input.
func (r *ranker) heapAboveLimit(c containerRef, limitPath *field.Path, limit int64) {
	for _, f := range valuedFields(c) {
		for _, m := range reHeapFlag.FindAllStringSubmatch(f.value, -1) {
			heap := heapBytes(m[2], m[3])
			if heap < limit {
				continue
			}
			flag := "-Xm" + m[1] + m[2] + m[3]
			r.suspectTemplate(RuleMemoryBelowHeap, limitPath, scoreCertain+5,
				fmt.Sprintf("the memory limit %s is below the heap %s asks for in %s", resource.NewQuantity(limit, resource.BinarySI), flag, f.path))
			r.suspectTemplate(RuleMemoryBelowHeap, f.path, scoreLikely,
				fmt.Sprintf("%s asks for a heap at or above the memory limit %s", flag, resource.NewQuantity(limit, resource.BinarySI)))
		}
	}
}

// heapBytes reads a JVM size: digits and an optional unit (none is bytes).
func heapBytes(digits, unit string) int64 {
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0
	}
	shift := map[string]uint{"": 0, "k": 10, "m": 20, "g": 30, "t": 40}[strings.ToLower(unit)]
	if n > 1<<(62-shift) {
		return 1 << 62
	}
	return n << shift
}

// executable names the command or args element that names a missing executable, or the image
// when the executable is the image's own entrypoint.
func (r *ranker) executable(name string, s *Signal) {
	for _, c := range r.containersOf(s) {
		found := false
		for i, a := range c.c.Command {
			if a == name {
				r.suspectTemplate(RuleCommandNotFound, c.path.Child("command").Index(i), scoreCertain-i,
					"the image has no executable "+name)
				found = true
			}
		}
		if len(c.c.Command) == 0 {
			for i, a := range c.c.Args {
				if a == name {
					r.suspectTemplate(RuleCommandNotFound, c.path.Child("args").Index(i), scoreCertain-i,
						"with no command, args[0] is run: the image has no executable "+name)
					found = true
				}
			}
		}
		if !found && len(c.c.Command) == 0 {
			r.suspectTemplate(RuleCommandNotFound, c.path.Child("image"), scoreLikely,
				"the image's entrypoint "+name+" is missing from the image")
		}
	}
}

// An executable the kernel cannot run: runc's init calls execve on the entrypoint once the
// container has started, and ENOEXEC comes back as `exec /usr/local/bin/app: exec format error`
// on the container's stderr (runc 1.1 and later; before, `standard_init_linux.go:228: exec user
// process caused: exec format error`). A binary built for another CPU architecture is the
// usual cause; a script without a #! line is the other.
var reExecFormat = regexp.MustCompile(`exec (\S+): exec format error`)

// execFormat suspects the image of the container that could not run its executable, and says
// which architecture the copy's node has.
func (r *ranker) execFormat(s *Signal) {
	what := "its executable"
	if m := reExecFormat.FindStringSubmatch(s.Text); m != nil {
		what = m[1]
	}
	reason := "the kernel cannot run " + what + " (exec format error): it is built for another CPU architecture"
	if arch := r.nodeArch(s.Pod); arch != "" {
		reason += " than the node's " + arch
	}
	reason += ", or is a script without a #! line"
	for _, c := range r.containersOf(s) {
		r.suspectTemplate(RuleExecFormat, c.path.Child("image"), scoreCertain, reason+"; image "+c.c.Image)
	}
}

// nodeArch is the architecture of the node the copy named pod runs on, "" when the snapshot
// does not hold it.
func (r *ranker) nodeArch(pod string) string {
	for _, c := range r.in.Copies {
		if c.Name != pod || c.Node == "" {
			continue
		}
		if n := r.in.Node(c.Node); n != nil {
			return n.Status.NodeInfo.Architecture
		}
	}
	return ""
}

// Probe failures. The kubelet's prober (pkg/kubelet/prober/prober.go) records Unhealthy events
// `<Readiness|Liveness|Startup> probe failed: OUTPUT` or
// `... probe errored and resulted in <state> state: ERR`. OUTPUT of an HTTP probe is
// `HTTP probe failed with statuscode: N` (pkg/probe/http/http.go) or the client's error
// `Get "http://IP:PORT/PATH": dial tcp IP:PORT: connect: connection refused`; a TCP probe's is
// `dial tcp IP:PORT: connect: connection refused`. A named port that the container does not
// declare fails with `port "NAME" not found` (pkg/probe/util.go).
var (
	reProbe        = regexp.MustCompile(`^(Readiness|Liveness|Startup) probe (?:failed|errored and resulted in \S+ state): (.*)$`)
	reProbeStatus  = regexp.MustCompile(`HTTP probe failed with statuscode: (\d+)`)
	reProbeRefused = regexp.MustCompile(`dial tcp \S*?:(\d+): connect: connection refused`)
	reProbePortNF  = regexp.MustCompile(`port "([^"]+)" not found`)
)

type probeRef struct {
	kind  string // Readiness, Liveness, Startup
	probe *corev1.Probe
	path  *field.Path
}

func probesOf(c containerRef) []probeRef {
	var out []probeRef
	for _, p := range []probeRef{
		{"Readiness", c.c.ReadinessProbe, c.path.Child("readinessProbe")},
		{"Liveness", c.c.LivenessProbe, c.path.Child("livenessProbe")},
		{"Startup", c.c.StartupProbe, c.path.Child("startupProbe")},
	} {
		if p.probe != nil {
			out = append(out, p)
		}
	}
	return out
}

// ProbePort returns the port a probe targets, ok false for an exec probe.
func ProbePort(p *corev1.Probe) (port intstr.IntOrString, ok bool) {
	port, _, ok = probePort(probeRef{probe: p})
	return port, ok
}

// probePort returns the port a probe targets and its path.
func probePort(p probeRef) (intstr.IntOrString, *field.Path, bool) {
	h := p.probe.ProbeHandler
	switch {
	case h.HTTPGet != nil:
		return h.HTTPGet.Port, p.path.Child("httpGet", "port"), true
	case h.TCPSocket != nil:
		return h.TCPSocket.Port, p.path.Child("tcpSocket", "port"), true
	case h.GRPC != nil:
		return intstr.FromInt32(h.GRPC.Port), p.path.Child("grpc", "port"), true
	}
	return intstr.IntOrString{}, nil, false
}

// DeclaresPort reports whether the container declares the port (by name or number); known is
// false when a number is asked of a container that declares no ports at all.
func DeclaresPort(c *corev1.Container, port intstr.IntOrString) (declared, known bool) {
	for _, p := range c.Ports {
		if port.Type == intstr.String && p.Name == port.StrVal || port.Type == intstr.Int && p.ContainerPort == port.IntVal {
			return true, true
		}
	}
	return false, port.Type == intstr.String || len(c.Ports) > 0
}

// probeRules checks probe ports against the declared ports and reads probe failures.
func (r *ranker) probeRules() {
	for _, c := range r.containers() {
		for _, p := range probesOf(c) {
			port, pp, ok := probePort(p)
			if ok && port.Type == intstr.String {
				if declared, _ := DeclaresPort(c.c, port); !declared {
					r.suspectTemplate(RuleProbePort, pp, scoreCertain,
						fmt.Sprintf("the %s probe targets port %q, which container %s does not declare", strings.ToLower(p.kind), port.StrVal, c.c.Name))
				}
			}
		}
	}
	for _, s := range r.in.Signals {
		if s.Reason != "Unhealthy" {
			continue
		}
		m := reProbe.FindStringSubmatch(s.Text)
		if m == nil {
			continue
		}
		r.read(s)
		kind, out := m[1], m[2]
		for _, c := range r.containersOf(s) {
			for _, p := range probesOf(c) {
				if p.kind == kind {
					if r.probeFailure(c, p, out) {
						s.Explained = true
					}
				}
			}
		}
	}
}

func (r *ranker) probeFailure(c containerRef, p probeRef, out string) bool {
	lower := strings.ToLower(p.kind)
	if m := reProbeStatus.FindStringSubmatch(out); m != nil && p.probe.HTTPGet != nil {
		code, _ := strconv.Atoi(m[1])
		path := p.path.Child("httpGet", "path")
		switch {
		case code == 404 || code == 410:
			r.suspectTemplate(RuleProbePath, path, scoreCertain,
				fmt.Sprintf("the application answers the %s probe's %s with %d: it serves no such path", lower, p.probe.HTTPGet.Path, code))
			return true
		case code >= 400 && code < 500:
			r.suspectTemplate(RuleProbePath, path, scoreLikely,
				fmt.Sprintf("the application answers the %s probe's %s with %d", lower, p.probe.HTTPGet.Path, code))
			return true
		}
		// A 5xx is the application saying it is not well; what it depends on is in its logs.
		return false
	}
	return r.probePortFailure(c, p, out)
}

// probePortFailure reads a probe failure that is not an HTTP status: a refused connection, a
// port that is not declared, or a timeout on a port the container does not declare.
func (r *ranker) probePortFailure(c containerRef, p probeRef, out string) bool {
	lower := strings.ToLower(p.kind)
	port, pp, ok := probePort(p)
	if !ok {
		return false
	}
	if reProbePortNF.MatchString(out) {
		r.suspectTemplate(RuleProbePort, pp, scoreCertain, fmt.Sprintf("the %s probe's port is not declared: %s", lower, out))
		return true
	}
	if m := reProbeRefused.FindStringSubmatch(out); m != nil {
		declared, known := DeclaresPort(c.c, port)
		switch {
		case !declared && known:
			r.suspectTemplate(RuleProbePort, pp, scoreCertain,
				fmt.Sprintf("nothing listens on port %s that the %s probe asks; container %s declares no such port", m[1], lower, c.c.Name))
		case exitsByItself(r.in.Copies, c.c.Name):
			// The process exits on its own between restarts: nothing listens because it is not
			// running, which its crash explains; the probe's port is not shown to be wrong.
			return false
		default:
			r.suspectTemplate(RuleProbePort, pp, scorePossible,
				fmt.Sprintf("nothing listens on port %s that the %s probe asks", m[1], lower))
		}
		return true
	}
	if declared, known := DeclaresPort(c.c, port); !declared && known {
		r.suspectTemplate(RuleProbePort, pp, scoreLikely,
			fmt.Sprintf("the %s probe fails (%s) on port %s, which container %s does not declare", lower, Clip(out, 120), port.String(), c.c.Name))
		return true
	}
	if p.kind == "Readiness" && r.in.Shape == ShapeLiveButIdle && reProbeTimeout.MatchString(out) {
		// The container runs and answers nothing in time: a check slower than its timeout, or
		// an application stuck on what it depends on, which its logs name (the general rule's).
		r.suspectTemplate(RuleReadinessTimeout, p.path.Child("timeoutSeconds"), scoreLikely-10,
			fmt.Sprintf("the readiness probe times out (%s), so no copy serves; timeoutSeconds is %d", Clip(out, 120), max(p.probe.TimeoutSeconds, 1)))
		return true
	}
	if p.kind == "Liveness" && r.in.Shape == ShapeStartsAndDies && reProbeTimeout.MatchString(out) {
		timeout := max(p.probe.TimeoutSeconds, 1)
		if r.in.LastServingRevision == "" {
			// Nothing ever served: the container is killed before it finishes starting, which
			// the probe's own settings decide.
			r.suspectTemplate(RuleLivenessStartup, p.path.Child("timeoutSeconds"), scoreLikely,
				fmt.Sprintf("the liveness probe times out (%s) and the kubelet kills the container before it ever served; timeoutSeconds %d, initialDelaySeconds %d, no startupProbe",
					Clip(out, 120), timeout, p.probe.InitialDelaySeconds))
			return true
		}
		r.suspectTemplate(RuleLivenessTimeout, p.path.Child("timeoutSeconds"), scoreLikely-10,
			fmt.Sprintf("the liveness probe times out (%s) and the kubelet restarts the container; timeoutSeconds is %d", Clip(out, 120), timeout))
		return true
	}
	return false
}

// reProbeTimeout matches a probe that got no answer in time: the HTTP client's
// `context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, a dial timeout,
// the exec prober's `command timed out: "CMD" timed out after 1s` (k8s.io/cri-client/pkg/remote_runtime.go), or
// the gRPC prober's `timeout: failed to connect service` (pkg/probe/grpc/grpc.go).
var reProbeTimeout = regexp.MustCompile(`context deadline exceeded|i/o timeout|command timed out|timeout: failed to connect service`)

// exitsByItself reports whether container name of some copy last ended with an exit code of its
// own (Copy.OwnExits).
func exitsByItself(copies []Copy, name string) bool {
	for _, c := range copies {
		if slices.Contains(c.OwnExits, name) {
			return true
		}
	}
	return false
}

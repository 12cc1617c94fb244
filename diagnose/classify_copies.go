package diagnose

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// Waiting reasons that mean a container never got to run, as the kubelet writes them
// (pkg/kubelet/images/types.go, kuberuntime/kuberuntime_container.go, container/sync_result.go,
// kubelet_pods.go).
var neverStartReasons = map[string]bool{
	"ErrImagePull":               true,
	"ImagePullBackOff":           true,
	"InvalidImageName":           true,
	"ErrImageNeverPull":          true,
	"ImageInspectError":          true,
	"CreateContainerConfigError": true,
	"CreateContainerError":       true,
	"CreatePodSandboxError":      true,
	"ConfigPodSandboxError":      true,
	"PreStartHookError":          true,
}

// Terminated reasons the runtime gives a container whose process could not be started at all
// (containerd: StartError, exit code 128; dockershim: ContainerCannotRun).
var startFailureReasons = map[string]bool{"StartError": true, "ContainerCannotRun": true}

// Waiting reasons that are normal for a moment and a fault when they last.
var slowStartReasons = map[string]bool{"ContainerCreating": true, "PodInitializing": true}

// Thresholds of the copy rules.
const (
	// recentWindow: a termination older than this, followed by a copy that stayed up, is history,
	// not a fault ("old restarts long ago are healthy").
	recentWindow = time.Hour
	// stuckCreating: ContainerCreating or an unscheduled Pending copy older than this is stuck.
	stuckCreating = facts.StuckCreating
	// settleTime: a container that restarted recently and has been Ready this long since is
	// back, not dying; rising restarts are this many or more with the last one recent.
	settleTime = facts.SettleTime
	rising     = 3
)

// copyFacts is what one copy shows, read from its lifecycle and its observations.
type copyFacts struct {
	Pod *corev1.Pod
	// Life is the copy's lifecycle (workload.life).
	Life    *facts.Copy
	Rev     *revision
	Current bool
	Active  bool
	Ready   bool
	Serving bool
	// Running: phase Running and every container running.
	Running bool
	// NeverStarts and Dies name the copy's fault signal, with the container and message;
	// signalObs is the index of the observation they were read from.
	NeverStarts, Dies  string
	Container, Message string
	signalObs          int
	// readyObs is the index of the copy's Ready condition observation, -1 without one.
	readyObs int
	// LastTerminated is the copy's newest container termination (lastTerminationState), at
	// index lastTerminatedObs of the observations.
	LastTerminated        *Observation
	lastTerminatedObs     int
	LastTerminatedIsFresh bool
	Age                   time.Duration
	// Dialing: the copy is Ready and routed to but keeps failing to reach an endpoint its
	// env names, so it does not serve (findDialLoop).
	Dialing *dialLoop
	// Starting says what a copy that is still on its way up is doing (an image pull in
	// progress, with no error, inside its deadline): it is progressing, not failing.
	Starting string
}

// fillCopy reads copy i of the workload (workload.Pods[i]) from its observations into f: the
// engine reads a workload's copies into one slice.
func fillCopy(f *copyFacts, w *workload, i int, ref time.Time) {
	p, life := w.Pods[i], w.life(i)
	*f = copyFacts{
		Pod: p, Life: life, Rev: w.cls.revAt[i], Active: life.Active, Ready: life.Ready, Running: life.Running,
		Serving: w.serving[i], Age: ref.Sub(life.Created), signalObs: -1, lastTerminatedObs: -1, readyObs: -1,
	}
	f.Current = f.Rev != nil && f.Rev == w.cls.Current
	if w.cls.dialing != nil {
		f.Dialing = w.cls.dialing[i]
	}
	if w.cls.Current == nil {
		f.Current = true
	}
	obs := w.observe()
	base := int(obs.byPod[i].from)
	list := obs.pod(i)
	// A container's lastTerminationState comes just before its state (facts.AppendPod).
	var lt *Observation
	for k := range list {
		o := &list[k]
		switch o.Kind {
		case ObsReadyChanged:
			f.readyObs = base + k
			continue
		case ObsContainerTerminated:
			if o.Last {
				if f.LastTerminated == nil || o.At.After(f.LastTerminated.At) {
					f.LastTerminated, f.lastTerminatedObs = o, base+k
					f.LastTerminatedIsFresh = ref.Sub(o.At) <= recentWindow
				}
				lt = o
				continue
			}
		case ObsContainerWaiting, ObsContainerRunning:
		default:
			continue
		}
		if lt != nil && lt.Container() != o.Container() {
			lt = nil
		}
		f.readContainer(o, lt, base+k, ref)
		lt = nil
	}
	if life.Phase == corev1.PodFailed && life.Reason == rules.ReasonEvicted {
		// The kubelet evicted the copy and says why; its containers' states
		// (ContainerStatusUnknown, exit 137) are what the eviction left, not a failure of theirs.
		f.NeverStarts = ""
		f.Dies, f.Container, f.Message, f.signalObs = rules.ReasonEvicted, "", strings.TrimSpace(life.Message), base
	}
	if slowStartReasons[f.NeverStarts] {
		if why := pullUnderWay(w, p, ref); why != "" {
			f.NeverStarts, f.Container, f.Message, f.signalObs = "", "", "", -1
			f.Starting = why
		}
	}
	if f.NeverStarts == "" && p.Spec.NodeName == "" && life.Phase == corev1.PodPending {
		for k := range list {
			if c := &list[k]; c.Kind == ObsConditionChanged && c.Type() == string(corev1.PodScheduled) && c.Status == string(corev1.ConditionFalse) {
				f.setNeverStarts(c.Reason, "", c.Text, base+k)
			}
		}
		if f.NeverStarts == "" && f.Age > stuckCreating {
			// The copy's own creation dates it: nothing else says why it waits.
			f.setNeverStarts("Pending", "", "not scheduled", base)
		}
	}
}

// readContainer reads one container's state o (its last termination lt, when it has one) at
// index at of the observations.
func (f *copyFacts) readContainer(o, lt *Observation, at int, ref time.Time) {
	p := f.Pod
	life := f.Life
	switch o.Kind {
	case ObsContainerWaiting:
		r := o.Reason
		switch {
		case lt != nil && startFailureReasons[lt.Reason]:
			// Back-off after a process that could not be started: the start failure is
			// the signal, not the back-off.
			f.setNeverStarts(lt.Reason, o.Container(), lt.TerminationText(), at-1)
		case neverStartReasons[r], r == "RunContainerError" && o.Count == 0:
			f.setNeverStarts(r, o.Container(), o.Text, at)
		case slowStartReasons[r] && f.Age > stuckCreating:
			f.setNeverStarts(r, o.Container(), o.Text, at)
		case r == "CrashLoopBackOff" || r == "RunContainerError" || r == "PostStartHookError":
			msg := o.Text
			if lt != nil {
				msg = lt.TerminationText()
			}
			f.setDies(r, o.Container(), msg, at)
		}
	case ObsContainerTerminated:
		if startFailureReasons[o.Reason] {
			f.setNeverStarts(o.Reason, o.Container(), o.Text, at)
		} else if o.ExitCode != 0 && (p.Spec.RestartPolicy != corev1.RestartPolicyNever || life.Phase == corev1.PodFailed) {
			// Under restartPolicy Never (a Job's) the pod itself fails, and the Job
			// controller starts another: dying all the same.
			f.setDies(o.Reason, o.Container(), o.TerminationText(), at)
		}
	case ObsContainerRunning:
		if lt != nil && ref.Sub(lt.At) <= recentWindow && o.Count > 0 {
			// Running again after dying recently: still the dying shape until it has stayed up
			// and Ready for a while, unless it keeps dying (restarts piling up).
			settled := o.Ready && ref.Sub(o.Since) >= settleTime || startupHiccup(life, o, lt, ref)
			if !settled || o.Count >= rising {
				f.setDies(lt.Reason, o.Container(), lt.TerminationText(), at-1)
			}
		}
	}
}

// pullUnderWay reports a copy waiting in ContainerCreating or PodInitializing while the kubelet
// pulls its image: a Pulling event with no Pulled after it and no Warning event on the copy,
// inside the deadline a rollout gives a copy (the Deployment's progress deadline, 600 s for the
// other kinds, from the copy's creation). A large image takes minutes to pull; a copy doing so
// without an error is on its way up, and rolling back would throw a good release away. It
// returns what the copy is doing, or "".
func pullUnderWay(w *workload, p *corev1.Pod, ref time.Time) string {
	if ref.Sub(p.CreationTimestamp.Time) > progressDeadline(w.Object) {
		return ""
	}
	var pulling, pulled time.Time
	image := ""
	evs := w.observe().eventList()
	for k := range evs {
		e := &evs[k]
		if e.Object.Kind != "Pod" || e.Object.Name != p.Name {
			continue
		}
		if facts.EventFailing(e.Status, e.Reason, e.Text) {
			return ""
		}
		switch e.Reason {
		case "Pulling":
			if at := e.At; at.After(pulling) {
				pulling, image = at, e.Text
			}
		case "Pulled":
			if at := e.At; at.After(pulled) {
				pulled = at
			}
		}
	}
	if pulling.IsZero() || !pulled.Before(pulling) {
		return ""
	}
	return strings.ToLower(image[:1]) + image[1:] + " for " + preciseDuration(ref.Sub(pulling)) + ", no error"
}

// startupHiccup reports a container that restarted once in its copy's first moments (a
// dependency not up yet at start, a race with a sidecar) and has been running and Ready since
// for longer than its probes allow: it serves, and the restart is a note, not a crash loop.
func startupHiccup(c *facts.Copy, running, lt *Observation, ref time.Time) bool {
	if running.Count != 1 || !running.Ready || c.Started.IsZero() {
		return false
	}
	return lt.At.Sub(c.Started) <= earlyWindow && ref.Sub(running.Since) > c.ProbeAllowance
}

func (f *copyFacts) setNeverStarts(reason, container, msg string, obs int) {
	if f.NeverStarts == "" {
		f.NeverStarts, f.Container, f.Message, f.signalObs = reason, container, msg, obs
	}
}

func (f *copyFacts) setDies(reason, container, msg string, obs int) {
	if f.Dies == "" && f.NeverStarts == "" {
		f.Dies, f.Container, f.Message, f.signalObs = reason, container, msg, obs
	}
}

func withContainer(container, msg string) string {
	if container == "" {
		return msg
	}
	if msg == "" {
		return "container " + container
	}
	return "container " + container + ": " + msg
}

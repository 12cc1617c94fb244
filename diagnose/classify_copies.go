package diagnose

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
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
	stuckCreating = 2 * time.Minute
	// settleTime: a container that restarted recently and has been Ready this long since is
	// back, not dying; rising restarts are this many or more with the last one recent.
	settleTime = 10 * time.Minute
	rising     = 3
)

// copyFacts is what one copy shows, read once from its status.
type copyFacts struct {
	Pod     *corev1.Pod
	Rev     *revision
	Current bool
	Active  bool
	Ready   bool
	Serving bool
	// Running: phase Running and every container running.
	Running bool
	// NeverStarts and Dies name the copy's fault signal, with the container and message.
	NeverStarts, Dies     string
	Container, Message    string
	LastTerminated        *corev1.ContainerStateTerminated
	LastTerminatedIsFresh bool
	Age                   time.Duration
}

func readCopy(w *workload, p *corev1.Pod, ref time.Time) *copyFacts {
	f := &copyFacts{
		Pod: p, Rev: w.cls.revisionOf[p.UID], Active: active(p), Ready: podReady(p),
		Serving: w.ServingPods[p.UID], Age: ref.Sub(p.CreationTimestamp.Time),
	}
	f.Current = f.Rev != nil && f.Rev == w.cls.Current
	if w.cls.Current == nil {
		f.Current = true
	}
	f.Running = p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) > 0
	statuses := append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil {
			f.Running = false
		}
	}
	for i := range statuses {
		cs := &statuses[i]
		lt := cs.LastTerminationState.Terminated
		if lt != nil && (f.LastTerminated == nil || lt.FinishedAt.After(f.LastTerminated.FinishedAt.Time)) {
			f.LastTerminated = lt
			f.LastTerminatedIsFresh = ref.Sub(lt.FinishedAt.Time) <= recentWindow
		}
		switch {
		case cs.State.Waiting != nil:
			r := cs.State.Waiting.Reason
			switch {
			case lt != nil && startFailureReasons[lt.Reason]:
				// Back-off after a process that could not be started: the start failure is
				// the signal, not the back-off.
				f.setNeverStarts(lt.Reason, cs.Name, terminationText(lt))
			case neverStartReasons[r], r == "RunContainerError" && cs.RestartCount == 0:
				f.setNeverStarts(r, cs.Name, cs.State.Waiting.Message)
			case slowStartReasons[r] && f.Age > stuckCreating:
				f.setNeverStarts(r, cs.Name, cs.State.Waiting.Message)
			case r == "CrashLoopBackOff" || r == "RunContainerError":
				msg := cs.State.Waiting.Message
				if lt != nil {
					msg = terminationText(lt)
				}
				f.setDies(r, cs.Name, msg)
			}
		case cs.State.Terminated != nil:
			t := cs.State.Terminated
			if startFailureReasons[t.Reason] {
				f.setNeverStarts(t.Reason, cs.Name, t.Message)
			} else if t.ExitCode != 0 && (p.Spec.RestartPolicy != corev1.RestartPolicyNever || p.Status.Phase == corev1.PodFailed) {
				// Under restartPolicy Never (a Job's) the pod itself fails, and the Job
				// controller starts another: dying all the same.
				f.setDies(t.Reason, cs.Name, terminationText(t))
			}
		case cs.State.Running != nil && lt != nil && ref.Sub(lt.FinishedAt.Time) <= recentWindow && cs.RestartCount > 0:
			// Running again after dying recently: still the dying shape until it has stayed up
			// and Ready for a while, unless it keeps dying (restarts piling up).
			settled := cs.Ready && ref.Sub(cs.State.Running.StartedAt.Time) >= settleTime
			if !settled || cs.RestartCount >= rising {
				f.setDies(lt.Reason, cs.Name, terminationText(lt))
			}
		}
	}
	if f.NeverStarts == "" && p.Spec.NodeName == "" && p.Status.Phase == corev1.PodPending {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				f.setNeverStarts(c.Reason, "", c.Message)
			}
		}
		if f.NeverStarts == "" && f.Age > stuckCreating {
			f.setNeverStarts("Pending", "", "not scheduled")
		}
	}
	return f
}

func (f *copyFacts) setNeverStarts(reason, container, msg string) {
	if f.NeverStarts == "" {
		f.NeverStarts, f.Container, f.Message = reason, container, msg
	}
}

func (f *copyFacts) setDies(reason, container, msg string) {
	if f.Dies == "" && f.NeverStarts == "" {
		f.Dies, f.Container, f.Message = reason, container, msg
	}
}

func terminationText(t *corev1.ContainerStateTerminated) string {
	s := t.Reason
	if s == "" {
		s = "terminated"
	}
	s += " (exit code " + strconv.Itoa(int(t.ExitCode)) + ")"
	if t.Message != "" {
		s += ": " + t.Message
	}
	return s
}

// toCopy renders the facts as the copy a person reads.
func (f *copyFacts) toCopy() Copy {
	p := f.Pod
	c := Copy{
		Name: p.Name, Phase: string(p.Status.Phase), Ready: f.Ready, Serving: f.Serving,
		Restarts: restarts(p), AgeSeconds: int64(f.Age / time.Second), Node: p.Spec.NodeName,
	}
	if f.Rev != nil {
		c.Revision = strconv.FormatInt(f.Rev.Number, 10)
	}
	switch {
	case p.DeletionTimestamp != nil:
		c.Reason, c.Message = "Terminating", ""
	case f.NeverStarts != "":
		c.Reason, c.Message = f.NeverStarts, withContainer(f.Container, f.Message)
	case f.Dies != "":
		c.Reason, c.Message = f.Dies, withContainer(f.Container, f.Message)
	case !f.Active:
		c.Reason, c.Message = p.Status.Reason, p.Status.Message
		if c.Reason == "" {
			c.Reason = string(p.Status.Phase)
		}
	case f.Running && !f.Ready:
		c.Reason = "NotReady"
		if rc := readyCondition(p); rc != nil {
			c.Message = rc.Message
		}
	case f.Ready && !f.Serving:
		c.Reason, c.Message = "NotAnEndpoint", "Ready, but no Service meant for the workload has it as a ready endpoint"
	case !f.Ready:
		c.Reason = string(p.Status.Phase)
	default:
		c.Reason = "Ready"
		if f.LastTerminated != nil {
			since := f.Age - f.LastTerminated.FinishedAt.Sub(p.CreationTimestamp.Time)
			c.Message = fmt.Sprintf("last restart %s ago: %s", humanDuration(since), terminationText(f.LastTerminated))
		}
	}
	return c
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

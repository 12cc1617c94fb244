package kubeletsim

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The status changes a kubelet writes for a pod that was running and ready, one write each, for
// a caller that churns many pods at once (scalegen's churn mode). Each takes the pod as the API
// server has it and returns the status the kubelet's next write would carry; nothing else of the
// pod changes. The formats are the v1.37 kubelet's:
//   - kubelet_pods.go convertToAPIContainerStatuses: a restarted container reports the new
//     instance as its state, the exited one (containerd's exit code and reason, its start and
//     finish, its container ID) as lastState.terminated, and the runtime's restart count, one more;
//     a container the kubelet will restart after a back-off is Waiting with the back-off's reason
//     and message (kuberuntime doBackOff: "back-off %s restarting failed container=%s pod=%s");
//   - prober_manager.go UpdatePodStatus: a new instance is started at once without a startup
//     probe, and ready only once its readiness probe has passed;
//   - status/generate.go: Ready and ContainersReady are False with ContainersNotReady and
//     "containers with unready status: [names]" while any container is not ready;
//   - status_manager.go updateLastTransitionTime: a condition's lastTransitionTime is the write's
//     time when its status flips and kept otherwise.

// Restarted is the status after container (every container when "") exited with exitCode and
// reason ("Error", "OOMKilled", as containerd reports them) at now and was started again at once,
// the first restart within the back-off's reset window (kuberuntime doBackOff lets it through).
// The restarted containers are running and not ready until their readiness probe passes (ready
// at once when they have none). It fails when such a container is not running.
func Restarted(pod *corev1.Pod, container string, exitCode int32, reason string, now time.Time) (corev1.PodStatus, error) {
	st := *pod.Status.DeepCopy()
	finished := metaTime(now)
	n := 0
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		if container != "" && cs.Name != container {
			continue
		}
		n++
		if cs.State.Running == nil {
			return corev1.PodStatus{}, fmt.Errorf("restart %s/%s container %s: not running", pod.Namespace, pod.Name, cs.Name)
		}
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exitCode, Reason: reason,
			StartedAt: cs.State.Running.StartedAt, FinishedAt: finished,
			ContainerID: cs.ContainerID,
		}}
		cs.ContainerID = "containerd://" + newContainerID()
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: finished}}
		cs.RestartCount++
		started := true
		cs.Started = &started
		cs.Ready = readinessProbe(pod, cs.Name) == nil
	}
	if n == 0 {
		return corev1.PodStatus{}, fmt.Errorf("restart %s/%s: no container %q", pod.Namespace, pod.Name, container)
	}
	st.Phase = corev1.PodRunning
	setReadyConditions(pod, &st, now)
	return st, nil
}

// ReadyAgain is the status once every running container's readiness probe has passed again.
func ReadyAgain(pod *corev1.Pod, now time.Time) corev1.PodStatus {
	st := *pod.Status.DeepCopy()
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		if cs.State.Running != nil && cs.Started != nil && *cs.Started {
			cs.Ready = true
		}
	}
	setReadyConditions(pod, &st, now)
	return st
}

// CrashLooping is the status after every container, restarted once already (Restarted), exited
// again with exitCode ("Error" when not 0) at now and waits out its back-off before the next
// start: doBackOff let the first exit's restart through and now holds this one for the initial
// 10 s (kubelet.go backOffPeriod). The restart count stays the exited instance's; the pod stays
// Running, as getPhase keeps a pod whose containers will restart. It fails when a container is
// not running or has not restarted before.
func CrashLooping(pod *corev1.Pod, exitCode int32, now time.Time) (corev1.PodStatus, error) {
	st := *pod.Status.DeepCopy()
	reason := "Error"
	if exitCode == 0 {
		reason = "Completed"
	}
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		if cs.State.Running == nil || cs.RestartCount == 0 {
			return corev1.PodStatus{}, fmt.Errorf("crash %s/%s container %s: not running after a restart", pod.Namespace, pod.Name, cs.Name)
		}
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exitCode, Reason: reason,
			StartedAt: cs.State.Running.StartedAt, FinishedAt: metaTime(now),
			ContainerID: cs.ContainerID,
		}}
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason:  "CrashLoopBackOff",
			Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", 10*time.Second, cs.Name, podFullName(pod)),
		}}
		started := false
		cs.Started = &started
		cs.Ready = false
	}
	st.Phase = corev1.PodRunning
	setReadyConditions(pod, &st, now)
	return st, nil
}

func readinessProbe(pod *corev1.Pod, container string) *corev1.Probe {
	for _, c := range pod.Spec.Containers {
		if c.Name == container {
			return c.ReadinessProbe
		}
	}
	return nil
}

// setReadyConditions sets Ready and ContainersReady from the container statuses, in the order
// of the pod's containers, flipping lastTransitionTime to now only where the status changed.
func setReadyConditions(pod *corev1.Pod, st *corev1.PodStatus, now time.Time) {
	ready := map[string]bool{}
	for _, cs := range st.ContainerStatuses {
		ready[cs.Name] = cs.Ready
	}
	var unready []string
	for _, c := range pod.Spec.Containers {
		if !ready[c.Name] {
			unready = append(unready, c.Name)
		}
	}
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != corev1.PodReady && c.Type != corev1.ContainersReady {
			continue
		}
		status, reason, msg := corev1.ConditionTrue, "", ""
		if len(unready) > 0 {
			status, reason = corev1.ConditionFalse, "ContainersNotReady"
			msg = fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
		}
		if c.Status != status {
			c.LastTransitionTime = metaTime(now)
		}
		c.Status, c.Reason, c.Message = status, reason, msg
	}
}

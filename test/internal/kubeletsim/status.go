package kubeletsim

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func metaTime(t time.Time) metav1.Time { return metav1.NewTime(t.Truncate(time.Second)) }

// status builds the pod status the kubelet would report (kubelet_pods.go
// generateAPIPodStatus, status/generate.go), with its condition order: PodReadyToStartContainers,
// Initialized, Ready, ContainersReady, PodScheduled.
func (w *podWorker) status(now time.Time) corev1.PodStatus {
	gen := w.pod.Generation
	var initStatuses, statuses []corev1.ContainerStatus
	var incomplete, unready []string
	initialized := true
	for _, c := range w.init {
		initStatuses = append(initStatuses, w.containerStatus(c))
		if completed := c.term != nil && c.term.ExitCode == 0 && !c.running; !completed {
			initialized = false
			incomplete = append(incomplete, c.spec.Name)
		}
	}
	for _, c := range w.ctrs {
		st := w.containerStatus(c)
		if !initialized && st.State.Waiting != nil && st.LastTerminationState.Terminated == nil {
			st.State.Waiting.Reason, st.State.Waiting.Message = "PodInitializing", ""
		}
		statuses = append(statuses, st)
		if !st.Ready {
			unready = append(unready, c.spec.Name)
		}
	}
	cond := func(t corev1.PodConditionType, ok bool, reason, msg string) corev1.PodCondition {
		status := corev1.ConditionFalse
		if ok {
			status = corev1.ConditionTrue
			reason, msg = "", ""
		}
		cs, seen := w.conds[t]
		if !seen || cs.status != status {
			cs = condState{status: status, since: now}
			w.conds[t] = cs
		}
		return corev1.PodCondition{
			Type: t, Status: status, Reason: reason, Message: msg,
			LastTransitionTime: metaTime(cs.since), ObservedGeneration: gen,
		}
	}
	// Volumes are mounted before the sandbox is created (kubelet SyncPod).
	sandbox := w.mountFails == 0
	initMsg := fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(incomplete, " "))
	readyMsg := fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
	conds := []corev1.PodCondition{
		cond(corev1.PodReadyToStartContainers, sandbox, "", ""),
		cond(corev1.PodInitialized, initialized, "ContainersNotInitialized", initMsg),
		cond(corev1.PodReady, len(unready) == 0, "ContainersNotReady", readyMsg),
		cond(corev1.ContainersReady, len(unready) == 0, "ContainersNotReady", readyMsg),
	}
	for _, c := range w.pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			c.ObservedGeneration = gen
			conds = append(conds, c)
		}
	}
	return corev1.PodStatus{
		ObservedGeneration:    gen,
		Phase:                 w.phase(initialized, statuses),
		Conditions:            conds,
		HostIP:                nodeIP,
		HostIPs:               []corev1.HostIP{{IP: nodeIP}},
		PodIP:                 w.ip,
		PodIPs:                []corev1.PodIP{{IP: w.ip}},
		StartTime:             ptr.To(metaTime(w.startTime)),
		InitContainerStatuses: initStatuses,
		ContainerStatuses:     statuses,
		QOSClass:              w.pod.Status.QOSClass,
	}
}

// phase is a reduced getPhase: Pending until initialized and every container has run once;
// Running while any runs or will restart; Succeeded/Failed when all stopped for good.
func (w *podWorker) phase(initialized bool, statuses []corev1.ContainerStatus) corev1.PodPhase {
	if !initialized {
		for _, c := range w.init {
			if c.term != nil && c.term.ExitCode != 0 && !w.shouldRestart(c) {
				return corev1.PodFailed
			}
		}
		return corev1.PodPending
	}
	running, waiting, stopped, failed := 0, 0, 0, 0
	for _, st := range statuses {
		switch {
		case st.State.Running != nil:
			running++
		case st.State.Terminated != nil:
			stopped++
			if st.State.Terminated.ExitCode != 0 {
				failed++
			}
		case st.LastTerminationState.Terminated != nil:
			stopped++
		default:
			waiting++
		}
	}
	switch {
	case waiting > 0:
		return corev1.PodPending
	case running > 0:
		return corev1.PodRunning
	}
	for _, c := range w.ctrs {
		if c.term == nil || w.shouldRestart(c) {
			return corev1.PodRunning
		}
	}
	if failed > 0 {
		return corev1.PodFailed
	}
	return corev1.PodSucceeded
}

// containerStatus reports one container as containerd and the kubelet would.
func (w *podWorker) containerStatus(c *ctr) corev1.ContainerStatus {
	st := corev1.ContainerStatus{
		Name:         c.spec.Name,
		Image:        c.spec.Image,
		RestartCount: c.restarts,
		Ready:        c.running && c.started && c.ready,
		Started:      ptr.To(c.running && c.started),
		VolumeMounts: volumeMountStatus(c.spec),
	}
	if c.lastTerm != nil {
		st.LastTerminationState.Terminated = c.lastTerm.DeepCopy()
	}
	created := c.running || c.term != nil || c.lastTerm != nil
	if created {
		st.Image, st.ImageID = statusImage(c.spec.Image)
		if len(c.spec.Resources.Requests) > 0 {
			st.AllocatedResources = c.spec.Resources.Requests.DeepCopy()
		}
		st.Resources = c.spec.Resources.DeepCopy()
		st.User = w.user(c)
	}
	switch {
	case c.running:
		st.ContainerID = "containerd://" + c.id
		st.State.Running = &corev1.ContainerStateRunning{StartedAt: metaTime(c.startedAt)}
	case c.term != nil && c.waitingReason == "":
		st.ContainerID = c.term.ContainerID
		st.State.Terminated = c.term.DeepCopy()
	case c.term != nil:
		// In crash back-off the exited instance is reported as the last state.
		st.ContainerID = c.term.ContainerID
		st.LastTerminationState.Terminated = c.term.DeepCopy()
		st.State.Waiting = &corev1.ContainerStateWaiting{Reason: c.waitingReason, Message: c.waitingMessage}
	default:
		reason := c.waitingReason
		if reason == "" {
			reason = "ContainerCreating"
		}
		if c.lastTerm != nil {
			st.ContainerID = c.lastTerm.ContainerID
		}
		st.State.Waiting = &corev1.ContainerStateWaiting{Reason: reason, Message: c.waitingMessage}
	}
	return st
}

// user is the identity the runtime reports: runAsUser/runAsGroup, else root.
func (w *podWorker) user(c *ctr) *corev1.ContainerUser {
	uid, gid := int64(0), int64(0)
	if psc := w.pod.Spec.SecurityContext; psc != nil {
		uid, gid = ptr.Deref(psc.RunAsUser, uid), ptr.Deref(psc.RunAsGroup, gid)
	}
	if sc := c.spec.SecurityContext; sc != nil {
		uid, gid = ptr.Deref(sc.RunAsUser, uid), ptr.Deref(sc.RunAsGroup, gid)
	}
	groups := []int64{gid}
	if psc := w.pod.Spec.SecurityContext; psc != nil {
		groups = append(groups, psc.SupplementalGroups...)
	}
	return &corev1.ContainerUser{Linux: &corev1.LinuxContainerUser{UID: uid, GID: gid, SupplementalGroups: groups}}
}

func volumeMountStatus(c corev1.Container) []corev1.VolumeMountStatus {
	var out []corev1.VolumeMountStatus
	for _, vm := range c.VolumeMounts {
		s := corev1.VolumeMountStatus{Name: vm.Name, MountPath: vm.MountPath, ReadOnly: vm.ReadOnly}
		if vm.ReadOnly {
			s.RecursiveReadOnly = ptr.To(corev1.RecursiveReadOnlyDisabled)
		}
		out = append(out, s)
	}
	return out
}

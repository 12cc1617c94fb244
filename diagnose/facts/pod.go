package facts

import (
	corev1 "k8s.io/api/core/v1"
)

// PodFactCount is how many facts AppendPod appends for p: a list taken once has no room to
// spare.
func PodFactCount(p *corev1.Pod) int {
	n := 1 + len(p.Status.Conditions) + len(p.Status.InitContainerStatuses) + len(p.Status.ContainerStatuses)
	if p.DeletionTimestamp != nil {
		n++
	}
	for _, css := range [2][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for j := range css {
			if css[j].LastTerminationState.Terminated != nil {
				n++
			}
		}
	}
	return n
}

// AppendPod appends to list what p's status says, each fact dated and pointing at obj: its
// creation (with its phase and the kubelet's reason and message), its deletion, each
// condition's last change, and each container's state, its last termination just before it.
func AppendPod(list []Fact, p *corev1.Pod, obj *Ref) []Fact {
	from := len(list)
	// The phase, and the reason and message the kubelet gave it, ride on the creation.
	list = append(list, Fact{Kind: PodCreated, Status: string(p.Status.Phase), Reason: p.Status.Reason, Text: p.Status.Message, At: p.CreationTimestamp.Time})
	if p.DeletionTimestamp != nil {
		list = append(list, Fact{Kind: PodDeleted, At: p.DeletionTimestamp.Time})
	}
	for ix := range p.Status.Conditions {
		c := &p.Status.Conditions[ix]
		kind := ConditionChanged
		if c.Type == corev1.PodReady {
			kind = ReadyChanged
		}
		list = append(list, Fact{Kind: kind, Name: string(c.Type), Status: string(c.Status), Reason: c.Reason, Text: c.Message, At: c.LastTransitionTime.Time})
	}
	for g, css := range [2][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		init := g == 0
		for j := range css {
			cs := &css[j]
			// The last termination first: readers that take a container's state take the
			// current one, which follows.
			if t := cs.LastTerminationState.Terminated; t != nil {
				list = append(list, terminated(cs, t, true, init))
			}
			switch s := cs.State; {
			case s.Waiting != nil:
				list = append(list, Fact{Kind: ContainerWaiting, Init: init, Name: cs.Name, Ready: cs.Ready, Count: cs.RestartCount, Reason: s.Waiting.Reason, Text: s.Waiting.Message})
			case s.Running != nil:
				list = append(list, Fact{Kind: ContainerRunning, Init: init, Name: cs.Name, Ready: cs.Ready, Count: cs.RestartCount, Since: s.Running.StartedAt.Time})
			case s.Terminated != nil:
				list = append(list, terminated(cs, s.Terminated, false, init))
			}
		}
	}
	// What every fact of the copy shares.
	for k := from; k < len(list); k++ {
		list[k].Object = obj
	}
	return list
}

func terminated(cs *corev1.ContainerStatus, t *corev1.ContainerStateTerminated, last, init bool) Fact {
	return Fact{
		Kind: ContainerTerminated, Last: last, Init: init, Name: cs.Name, Ready: cs.Ready, Count: cs.RestartCount,
		ExitCode: t.ExitCode, Reason: t.Reason, Text: t.Message, At: t.FinishedAt.Time, Since: t.StartedAt.Time,
	}
}

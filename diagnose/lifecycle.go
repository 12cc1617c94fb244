package diagnose

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
)

// life returns the lifecycle of copy i (workload.Pods[i]). Every copy's is read when first
// asked for, once per diagnosis: this is the one place the engine reads a pod's status for
// its timing (observe reads it into the observation list).
func (w *workload) life(i int) *facts.Copy {
	if w.lives == nil {
		w.readLives()
	}
	return &w.lives[i]
}

// lifeOf returns the lifecycle of p, one of the workload's copies (a revision's).
func (w *workload) lifeOf(p *corev1.Pod) *facts.Copy {
	i := w.observe().podOf(p.Name)
	if i < 0 || w.Pods[i] != p {
		// Not one of the workload's copies (podOf names the first of a name): read it on
		// its own.
		c := facts.ReadCopy(p)
		return &c
	}
	return w.life(i)
}

func (w *workload) readLives() {
	lives, room := w.texts.lifeRoom(len(w.Pods))
	n := 0
	for _, p := range w.Pods {
		n += len(p.Status.ContainerStatuses)
	}
	if cap(room) < n {
		room = make([]facts.Container, 0, n)
	}
	for i, p := range w.Pods {
		room = facts.ReadCopyInto(&lives[i], p, room)
	}
	w.texts.keepContainers(room)
	w.lives = lives
}

package diagnose

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
)

// life returns the lifecycle of copy i (workload.Pods[i]). Every copy's is read when first
// asked for, once per diagnosis, and every reader of a copy's phase, readiness, start,
// restarts or addresses reads it (the observation list, facts.AppendPod, holds its dated
// states).
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
	w.texts.keepContainers(facts.ReadCopies(w.Pods, lives, room))
	w.lives = lives
}

package dump

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// newestTime is the reference time of a dump: the newest timestamp any object carries. Node
// heartbeats count: in the scenarios they are the latest clock reading, 30 s to 2 min before the
// dump was taken, while the newest event can be days old (events expire after an hour). The
// result is never after the moment of the dump, so ages read from it err on the young side.
// Timestamps inside log lines do not count: their format and time zone are the application's.
// It is the zero time when nothing in the dump carries a timestamp.
func newestTime(s *snapshot.Snapshot) time.Time {
	var n newest
	each(s, n.object)
	return n.t
}

// each calls f on every object of the snapshot.
func each(s *snapshot.Snapshot, f func(runtime.Object)) { s.Each(f) }

// objectTime is the newest timestamp one object carries.
func objectTime(o runtime.Object) time.Time {
	var n newest
	n.object(o)
	return n.t
}

func (n *newest) object(obj runtime.Object) {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		n.meta(&o.ObjectMeta)
		for _, c := range o.Status.Conditions {
			n.add(c.LastUpdateTime, c.LastTransitionTime)
		}
	case *appsv1.StatefulSet:
		n.meta(&o.ObjectMeta)
		for _, c := range o.Status.Conditions {
			n.add(c.LastTransitionTime)
		}
	case *appsv1.DaemonSet:
		n.meta(&o.ObjectMeta)
		for _, c := range o.Status.Conditions {
			n.add(c.LastTransitionTime)
		}
	case *appsv1.ReplicaSet:
		n.meta(&o.ObjectMeta)
		for _, c := range o.Status.Conditions {
			n.add(c.LastTransitionTime)
		}
	case *batchv1.Job:
		n.meta(&o.ObjectMeta)
		if o.Status.StartTime != nil {
			n.add(*o.Status.StartTime)
		}
		if o.Status.CompletionTime != nil {
			n.add(*o.Status.CompletionTime)
		}
		for _, c := range o.Status.Conditions {
			n.add(c.LastProbeTime, c.LastTransitionTime)
		}
	case *batchv1.CronJob:
		n.meta(&o.ObjectMeta)
		for _, t := range []*metav1.Time{o.Status.LastScheduleTime, o.Status.LastSuccessfulTime} {
			if t != nil {
				n.add(*t)
			}
		}
	case *corev1.Pod:
		n.pod(o)
	case *corev1.Event:
		n.meta(&o.ObjectMeta)
		n.add(o.FirstTimestamp, o.LastTimestamp)
		n.micro(o.EventTime)
		if o.Series != nil {
			n.micro(o.Series.LastObservedTime)
		}
	case *corev1.Service:
		n.meta(&o.ObjectMeta)
		for _, c := range o.Status.Conditions {
			n.add(c.LastTransitionTime)
		}
	case *corev1.PersistentVolumeClaim:
		n.meta(&o.ObjectMeta)
		for _, c := range o.Status.Conditions {
			n.add(c.LastProbeTime, c.LastTransitionTime)
		}
	case *corev1.Node:
		n.meta(&o.ObjectMeta)
		for _, c := range o.Status.Conditions {
			n.add(c.LastHeartbeatTime, c.LastTransitionTime)
		}
	default:
		// ControllerRevisions, quotas and slices carry only their creation time.
		if m, err := meta.Accessor(obj); err == nil {
			n.at(m.GetCreationTimestamp().Time)
		}
	}
}

// atTooEarly notes an --at before every object's creation: every age read from it is negative.
func atTooEarly(s *snapshot.Snapshot, at time.Time) (snapshot.Visibility, bool) {
	var oldest time.Time
	each(s, func(o runtime.Object) {
		m, err := meta.Accessor(o)
		if err != nil {
			return
		}
		if c := m.GetCreationTimestamp().Time; !c.IsZero() && (oldest.IsZero() || c.Before(oldest)) {
			oldest = c
		}
	})
	if oldest.IsZero() || !at.Before(oldest) {
		return snapshot.Visibility{}, false
	}
	return snapshot.Visibility{Reason: fmt.Sprintf(
		"--at %s is before every object in the dump (the oldest was created at %s): every age, restart and event "+
			"is in the future of --at, so ages and recent-failure rules read nothing; set --at within the dump's time",
		at.Format(time.RFC3339), oldest.UTC().Format(time.RFC3339))}, true
}

type newest struct{ t time.Time }

func (n *newest) at(t time.Time) {
	if t.After(n.t) {
		n.t = t.UTC()
	}
}

func (n *newest) add(ts ...metav1.Time) {
	for _, t := range ts {
		n.at(t.Time)
	}
}

func (n *newest) micro(t metav1.MicroTime) { n.at(t.Time) }

func (n *newest) meta(m *metav1.ObjectMeta) {
	// deletionTimestamp is left out: it is when a graceful deletion will end, in the future of a
	// terminating pod.
	n.add(m.CreationTimestamp)
}

func (n *newest) pod(p *corev1.Pod) {
	n.meta(&p.ObjectMeta)
	if p.Status.StartTime != nil {
		n.add(*p.Status.StartTime)
	}
	for _, c := range p.Status.Conditions {
		n.add(c.LastProbeTime, c.LastTransitionTime)
	}
	for _, list := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses, p.Status.EphemeralContainerStatuses} {
		for i := range list {
			n.state(list[i].State)
			n.state(list[i].LastTerminationState)
		}
	}
}

func (n *newest) state(s corev1.ContainerState) {
	if s.Running != nil {
		n.add(s.Running.StartedAt)
	}
	if s.Terminated != nil {
		n.add(s.Terminated.StartedAt, s.Terminated.FinishedAt)
	}
}

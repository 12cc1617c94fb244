package dump

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// newestTime is the reference time of a dump: the newest timestamp any object carries. Node
// heartbeats count: in the scenarios they are the latest clock reading, 30 s to 2 min before the
// dump was taken, while the newest event can be days old (events expire after an hour). The
// result is never after the moment of the dump, so ages read from it err on the young side.
// Timestamps inside log lines do not count: their format and time zone are the application's.
// It is the zero time when nothing in the dump carries a timestamp.
func newestTime(s *snapshot.Snapshot) time.Time {
	var t newest
	for _, o := range s.Deployments {
		t.meta(&o.ObjectMeta)
		for _, c := range o.Status.Conditions {
			t.add(c.LastUpdateTime, c.LastTransitionTime)
		}
	}
	for _, o := range s.StatefulSets {
		t.meta(&o.ObjectMeta)
		for _, c := range o.Status.Conditions {
			t.add(c.LastTransitionTime)
		}
	}
	for _, o := range s.DaemonSets {
		t.meta(&o.ObjectMeta)
		for _, c := range o.Status.Conditions {
			t.add(c.LastTransitionTime)
		}
	}
	for _, o := range s.ReplicaSets {
		t.meta(&o.ObjectMeta)
		for _, c := range o.Status.Conditions {
			t.add(c.LastTransitionTime)
		}
	}
	for _, o := range s.ControllerRevisions {
		t.meta(&o.ObjectMeta)
	}
	for _, o := range s.Pods {
		t.pod(o)
	}
	for _, o := range s.Events {
		t.meta(&o.ObjectMeta)
		t.add(o.FirstTimestamp, o.LastTimestamp)
		t.micro(o.EventTime)
		if o.Series != nil {
			t.micro(o.Series.LastObservedTime)
		}
	}
	for _, o := range s.Services {
		t.meta(&o.ObjectMeta)
		for _, c := range o.Status.Conditions {
			t.add(c.LastTransitionTime)
		}
	}
	for _, o := range s.PersistentVolumeClaims {
		t.meta(&o.ObjectMeta)
		for _, c := range o.Status.Conditions {
			t.add(c.LastProbeTime, c.LastTransitionTime)
		}
	}
	for _, o := range s.Nodes {
		t.meta(&o.ObjectMeta)
		for _, c := range o.Status.Conditions {
			t.add(c.LastHeartbeatTime, c.LastTransitionTime)
		}
	}
	for _, o := range s.ResourceQuotas {
		t.meta(&o.ObjectMeta)
	}
	for _, o := range s.EndpointSlices {
		t.meta(&o.ObjectMeta)
	}
	return t.t
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

package dump

import (
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// newestTime is the reference time of a dump: the newest timestamp any object carries. Node
// heartbeats count: in the scenarios they are the latest clock reading, 30 s to 2 min before the
// dump was taken, while the newest event can be days old (events expire after an hour). The
// result is never after the moment of the dump, so ages read from it err on the young side.
// Timestamps inside log lines do not count: their format and time zone are the application's.
// It is the zero time when nothing in the dump carries a timestamp. Timestamps past the bound
// of referenceTime do not count either.
func newestTime(s *snapshot.Snapshot) time.Time {
	t, _ := referenceTime(s)
	return t
}

// Bounds on a dump's clock. A kubelet reports its node's status at least every five minutes
// (nodeStatusReportFrequency), so the dump was taken at most that long after its newest
// heartbeat; aheadOfNodes adds a minute of clock skew. Without nodes, a timestamp more than
// lonelyGap after every other object's stands alone: events expire after an hour, and what
// the cluster does leaves several objects dated together (a pod, its events, its controller).
const (
	aheadOfNodes = 6 * time.Minute
	lonelyGap    = time.Hour
)

// outliers are the objects whose timestamps referenceTime left out.
type outliers struct {
	// n counts them; newest is the newest of them, at its newest timestamp.
	n      int
	newest snapshot.ObjectKey
	at     time.Time
	// bound is what they passed: the nodes' newest heartbeat (byNodes), or the newest
	// timestamp of the rest of the dump.
	bound   time.Time
	byNodes bool
}

// referenceTime is the newest timestamp of the dump within a bound, and the objects past it.
// One object's clock must not move every age: an Event anyone may create, or a skewed clock,
// dated ten minutes after the dump turns a rollout under way into a stall, and a year 9999
// makes every age the longest duration there is. The bound is the nodes' newest heartbeat plus
// aheadOfNodes; without nodes, the few newest objects that stand more than lonelyGap after
// the rest are left out.
func referenceTime(s *snapshot.Snapshot) (time.Time, outliers) {
	var out outliers
	var bound, beat time.Time
	for _, n := range s.Nodes {
		for _, c := range n.Status.Conditions {
			if c.LastHeartbeatTime.After(beat) {
				beat = c.LastHeartbeatTime.UTC()
			}
		}
	}
	if !beat.IsZero() {
		out.bound, out.byNodes = beat, true
		bound = beat.Add(aheadOfNodes)
	} else if s.Len() >= 3 {
		// Unix seconds (nanoseconds overflow past 2262): a large dump's times cost 8 bytes an
		// object while they are sorted.
		times := make([]int64, 0, s.Len())
		each(s, func(o runtime.Object) {
			if t := objectTime(o); !t.IsZero() {
				times = append(times, t.Unix())
			}
		})
		slices.Sort(times)
		slices.Reverse(times)
		// At most one in twenty objects may stand alone: a dump is mostly its own moment.
		limit := max(1, len(times)/20)
		i := 0
		for i < limit && i+1 < len(times) && times[i]-times[i+1] > int64(lonelyGap/time.Second) {
			i++
		}
		if i > 0 {
			// The bound takes in the whole second of the newest time kept.
			out.bound, bound = time.Unix(times[i], 0).UTC(), time.Unix(times[i]+1, 0).UTC()
		}
	}
	var n newest
	for i := range snapshot.Kinds {
		kind := snapshot.Kinds[i].Kind
		snapshot.Kinds[i].Each(s, func(o runtime.Object) {
			t := objectTime(o)
			if bound.IsZero() || !t.After(bound) {
				n.at(t)
				return
			}
			key := datedKey(kind, o)
			if out.n == 0 || t.After(out.at) || t.Equal(out.at) && keyLess(key, out.newest) {
				out.newest, out.at = key, t.UTC()
			}
			out.n++
			// Its other timestamps may still be the dump's: a creation before the skewed one.
			c := newest{cap: bound}
			c.object(o)
			n.at(c.t)
		})
	}
	return n.t, out
}

// note says which timestamps the reference time left out, and how to set it instead.
func (o outliers) note(ref time.Time) (snapshot.Visibility, bool) {
	if o.n == 0 {
		return snapshot.Visibility{}, false
	}
	what := fmt.Sprintf("%s %s/%s is dated %s", o.newest.Kind, o.newest.Namespace, o.newest.Name, o.at.Format(time.RFC3339))
	if o.newest.Namespace == "" {
		what = fmt.Sprintf("%s %s is dated %s", o.newest.Kind, o.newest.Name, o.at.Format(time.RFC3339))
	}
	if o.n > 1 {
		what += fmt.Sprintf(" (and %d more objects past the same bound)", o.n-1)
	}
	past := fmt.Sprintf("more than %s after the nodes' newest heartbeat (%s), later than the dump can have been taken",
		duration.HumanDuration(aheadOfNodes), o.bound.Format(time.RFC3339))
	if !o.byNodes {
		past = fmt.Sprintf("more than %s after every other timestamp of the dump (the newest %s)",
			duration.HumanDuration(lonelyGap), o.bound.Format(time.RFC3339))
	}
	return snapshot.Visibility{Reason: fmt.Sprintf(
		"%s, %s: ages count from %s instead; if the dump was taken later, set the time with --at",
		what, past, ref.Format(time.RFC3339))}, true
}

func datedKey(kind string, o runtime.Object) snapshot.ObjectKey {
	k := snapshot.ObjectKey{Kind: kind}
	if m, err := meta.Accessor(o); err == nil {
		k.Namespace, k.Name = m.GetNamespace(), m.GetName()
	}
	return k
}

func keyLess(a, b snapshot.ObjectKey) bool {
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
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

// newest keeps the newest time it is given, up to cap when cap is set.
type newest struct{ t, cap time.Time }

func (n *newest) at(t time.Time) {
	if t.After(n.t) && (n.cap.IsZero() || !t.After(n.cap)) {
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

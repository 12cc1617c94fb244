package diagnose

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// podKey names a pod in its namespace.
type podKey struct{ namespace, name string }

// podFacts files which pods the snapshot has log tails of, and which objects events name
// without a UID, so that a copy costs one lookup for its events (by its UID) and one for its
// logs, not a lookup per container and two for events; the workload and its ReplicaSets one
// for their events too.
type podFacts struct {
	// every says to ask the snapshot about every copy: nothing is filed.
	every bool
	logs  map[podKey]bool
	// keyedEvents are the objects named by events without a UID, which EventsFor also returns
	// for an object of that kind and name; nil in most snapshots.
	keyedEvents map[snapshot.ObjectKey]bool
}

func newPodFacts(s *snapshot.Snapshot) *podFacts {
	f := &podFacts{logs: podsWithLogs(s)}
	for _, e := range s.Events {
		if e.InvolvedObject.UID != "" {
			continue
		}
		ns := e.InvolvedObject.Namespace
		if ns == "" {
			ns = e.Namespace // as the snapshot's index files it
		}
		if f.keyedEvents == nil {
			f.keyedEvents = map[snapshot.ObjectKey]bool{}
		}
		f.keyedEvents[snapshot.ObjectKey{Kind: e.InvolvedObject.Kind, Namespace: ns, Name: e.InvolvedObject.Name}] = true
	}
	return f
}

// askEveryPodsEvents makes collectShared ask EventsFor for the events of every object: the
// reference TestPodFactsAsEventsFor holds podFacts to. Set only by that test.
var askEveryPodsEvents bool

// appendEvents appends what EventsFor returns for an object to events. An object with a UID
// that no event names without one has only the events naming its UID: one lookup, where
// EventsFor takes two and a list of its own (and a set of the UIDs events name, filed on every
// diagnosis, cost a third for every copy that had events).
func (f *podFacts) appendEvents(s *snapshot.Snapshot, events []*corev1.Event, kind, namespace, name string, uid types.UID) []*corev1.Event {
	if askEveryPodsEvents || f.every || uid == "" || f.keyedEvents[snapshot.ObjectKey{Kind: kind, Namespace: namespace, Name: name}] {
		return append(events, s.EventsFor(kind, namespace, name, uid)...)
	}
	return append(events, s.EventsOfUID(uid)...)
}

// mayHaveLogs reports whether the snapshot may hold a log tail of p.
func (f *podFacts) mayHaveLogs(p *corev1.Pod) bool {
	return f.every || f.logs[podKey{p.Namespace, p.Name}]
}

// podsWithLogs files the pods the snapshot has a log tail of, so that a copy without one
// (most copies: sources read the logs of failing copies) costs one lookup, not two per
// container.
func podsWithLogs(s *snapshot.Snapshot) map[podKey]bool {
	out := make(map[podKey]bool)
	for i := range s.Logs {
		out[podKey{s.Logs[i].Namespace, s.Logs[i].Pod}] = true
	}
	return out
}

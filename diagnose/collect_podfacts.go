package diagnose

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// podKey names a pod in its namespace.
type podKey struct{ namespace, name string }

// podFacts files which pods the snapshot has log tails of, and which it has events of that
// name them without a UID, so that a copy costs one lookup for its events (by its UID) and
// one for its logs, not a lookup per container and two for events.
type podFacts struct {
	// every says to ask the snapshot about every copy: nothing is filed.
	every bool
	logs  map[podKey]bool
	// keyedEvents are the pods named by events without a UID, which EventsFor also returns
	// for a pod of that name.
	keyedEvents map[podKey]bool
}

func newPodFacts(s *snapshot.Snapshot) *podFacts {
	f := &podFacts{logs: podsWithLogs(s)}
	for _, e := range s.Events {
		if e.InvolvedObject.UID != "" {
			continue
		}
		if e.InvolvedObject.Kind != "Pod" {
			continue
		}
		ns := e.InvolvedObject.Namespace
		if ns == "" {
			ns = e.Namespace // as the snapshot's index files it
		}
		if f.keyedEvents == nil {
			f.keyedEvents = map[podKey]bool{}
		}
		f.keyedEvents[podKey{ns, e.InvolvedObject.Name}] = true
	}
	return f
}

// askEveryPodsEvents makes collectShared ask the snapshot for every copy's events: the
// reference TestPodFactsAsEventsFor holds podFacts to. Set only by that test.
var askEveryPodsEvents bool

// appendEvents appends what EventsFor returns for p to events. A copy with a UID that no
// event names without one has only the events naming its UID: one lookup, where a filed set
// of the UIDs events name cost one more for every copy that has events, and its filing a map
// entry per event on every diagnosis.
func (f *podFacts) appendEvents(s *snapshot.Snapshot, events []*corev1.Event, p *corev1.Pod) []*corev1.Event {
	if askEveryPodsEvents || f.every || p.UID == "" || f.keyedEvents[podKey{p.Namespace, p.Name}] {
		return append(events, s.EventsFor("Pod", p.Namespace, p.Name, p.UID)...)
	}
	return append(events, s.EventsOfUID(p.UID)...)
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

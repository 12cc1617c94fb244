package diagnose

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// podKey names a pod in its namespace.
type podKey struct{ namespace, name string }

// podFacts files which pods the snapshot has log tails and events of, so that a copy without
// them (most copies) costs a lookup or two, not a lookup per container and two for events.
type podFacts struct {
	// every says to ask the snapshot about every copy: nothing is filed.
	every bool
	logs  map[podKey]bool
	// eventUIDs holds the UIDs events name; keyedEvents the pods named by events without a
	// UID, which EventsFor also returns for a pod of that name.
	eventUIDs   map[types.UID]bool
	keyedEvents map[podKey]bool
}

func newPodFacts(s *snapshot.Snapshot) *podFacts {
	f := &podFacts{logs: podsWithLogs(s), eventUIDs: make(map[types.UID]bool, len(s.Events))}
	for _, e := range s.Events {
		if e.InvolvedObject.UID != "" {
			f.eventUIDs[e.InvolvedObject.UID] = true
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

// mayHaveEvents reports whether EventsFor can return events of p: those naming its UID, and
// those without a UID naming its name.
func (f *podFacts) mayHaveEvents(p *corev1.Pod) bool {
	return askEveryPodsEvents || f.every || p.UID == "" || f.eventUIDs[p.UID] || f.keyedEvents[podKey{p.Namespace, p.Name}]
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

package metamorph

import (
	"sort"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// The facts the transformations read are also what the story checker's oracles read: what a
// copy signalled, and when it started. They read the snapshot, never the engine.

// Span is a stretch of time over which a copy signalled a failure: one failing log line (From
// equals To), or a Warning event from its first sighting to its last.
type Span struct {
	From, To time.Time
}

// Failures returns the copy's failure signals, oldest first: the failing lines of its current
// log tail (warn or worse, or a failure word of the rewordings table) and the Warning events
// about it.
func Failures(s *snapshot.Snapshot, p *corev1.Pod) []Span {
	var out []Span
	for _, l := range s.Logs {
		if l.Namespace != p.Namespace || l.Pod != p.Name || l.Previous {
			continue
		}
		for _, line := range l.Lines {
			if at, ok := failingLine(line); ok {
				out = append(out, Span{at, at})
			}
		}
	}
	for _, e := range podEvents(s, p) {
		if e.Type == corev1.EventTypeWarning {
			out = append(out, Span{eventFirst(e), eventLast(e)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].From.Before(out[j].From) })
	return out
}

// Start is when the copy started: its status's start time, else its creation.
func Start(p *corev1.Pod) time.Time { return podStart(p) }

// Revision is a Deployment's ReplicaSet's revision number, as its annotation says ("" when it
// has none).
func Revision(rs *appsv1.ReplicaSet) string {
	if n := revisionOf(rs); n > 0 {
		return strconv.Itoa(n)
	}
	return ""
}

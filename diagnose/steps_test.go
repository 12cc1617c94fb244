package diagnose

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// The engine's steps as the tests call them one at a time: Diagnose runs them together
// (collectSome, diagnoseEach), and these are its shorter forms for a test that wants one step.

// collectWorkloads gathers every workload of the snapshot (collectSome accepting all).
func collectWorkloads(s *snapshot.Snapshot) []*workload { return collectSome(s, nil) }

// diagnoseAll diagnoses every workload with up to workers goroutines. It returns nil when done
// closed first; each worker checks done before each workload.
func diagnoseAll(s *snapshot.Snapshot, ws []*workload, done <-chan struct{}, workers int) []Diagnosis {
	return diagnoseEach(s, len(ws), func(i int, _ *workload) *workload {
		w := ws[i]
		// The report keeps the diagnosis, not the working state: let it go.
		ws[i] = nil
		return w
	}, done, workers)
}

// serviceIndexOf files svcs, whatever their namespaces, in a snapshot of their own.
func serviceIndexOf(svcs []*corev1.Service) *serviceIndex {
	return newServiceIndex(&snapshot.Snapshot{Services: svcs})
}

// readCopy reads copy i of the workload (workload.Pods[i]) from its observations.
func readCopy(w *workload, i int, ref time.Time) *copyFacts {
	f := new(copyFacts)
	fillCopy(f, w, i, ref)
	return f
}

// normalizeEventMessage is normalizeEventText of an event's message about its object.
func normalizeEventMessage(e *corev1.Event) string {
	return normalizeEventText(e.InvolvedObject.Name, string(e.InvolvedObject.UID), e.Message)
}

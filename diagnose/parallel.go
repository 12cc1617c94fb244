package diagnose

import (
	"sync"
	"sync/atomic"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Workloads are diagnosed apart from each other: each reads the snapshot (indexed before) and
// writes only its own state, so a few workers share them. The diagnoses land in the workloads'
// order, so the report does not depend on which worker ran which.

// workPerWorker is the fewest workloads worth another goroutine.
const workPerWorker = 64

// diagnoseAll diagnoses every workload with up to workers goroutines. It returns nil when done
// closed first; each worker checks done before each workload.
func diagnoseAll(s *snapshot.Snapshot, ws []*workload, done <-chan struct{}, workers int) []Diagnosis {
	out := make([]Diagnosis, len(ws))
	workers = min(workers, (len(ws)+workPerWorker-1)/workPerWorker)
	var next atomic.Int64
	var canceled atomic.Bool
	run := func() {
		texts := &textCache{}
		for {
			i := int(next.Add(1) - 1)
			if i >= len(ws) || canceled.Load() {
				return
			}
			if closed(done) {
				canceled.Store(true)
				return
			}
			ws[i].texts = texts
			out[i] = diagnoseWorkload(s, ws[i])
			// The report keeps the diagnosis, not the working state: let it go.
			ws[i] = nil
		}
	}
	if workers <= 1 {
		run()
	} else {
		var wg sync.WaitGroup
		for range workers {
			wg.Go(run)
		}
		wg.Wait()
	}
	if canceled.Load() {
		return nil
	}
	return out
}

// forEachChunk is how many indexes a worker of forEach takes at a time: enough that the
// shared counter is not contended, few enough that both workers end together.
const forEachChunk = 16

// forEach calls fn for every index below n on up to workers goroutines, which take the
// indexes in chunks as they finish the last. fn must touch only what index i owns.
func forEach(n, workers int, fn func(i int)) {
	workers = min(workers, (n+workPerWorker-1)/workPerWorker)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				from := int(next.Add(forEachChunk) - forEachChunk)
				if from >= n {
					return
				}
				for i := from; i < min(from+forEachChunk, n); i++ {
					fn(i)
				}
			}
		})
	}
	wg.Wait()
}

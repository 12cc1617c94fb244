package diagnose

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Workloads are diagnosed apart from each other: each reads the snapshot (indexed before) and
// writes only its own state, so a few workers share them. The diagnoses land in the workloads'
// order, so the report does not depend on which worker ran which.

// workPerWorker is the fewest workloads worth another goroutine.
const workPerWorker = 64

// diagnoseEach diagnoses the workloads get(0) to get(n-1), each got once, by the worker that
// diagnoses it, with up to workers goroutines. get may return room, the worker's own workload,
// which it hands again once the diagnosis is done. It returns nil when done closed first; each
// worker checks done before each workload.
func diagnoseEach(s *snapshot.Snapshot, n int, get func(i int, room *workload) *workload, done <-chan struct{}, workers int) []Diagnosis {
	out := make([]Diagnosis, n)
	workers = min(workers, (n+workPerWorker-1)/workPerWorker)
	var next atomic.Int64
	var canceled atomic.Bool
	run := func() {
		texts := &textCache{}
		// room is where get may read the next workload: the report keeps nothing of the
		// working state, and a workload is a kilobyte with pointers, one per workload.
		room := new(workload)
		for {
			i := int(next.Add(1) - 1)
			if i >= n || canceled.Load() {
				return
			}
			if closed(done) {
				canceled.Store(true)
				return
			}
			texts.reset()
			// The room carries the worker's rooms into the reading: a kind read into the
			// room keeps them (collectDeployment), others are given them below.
			room.texts = texts
			w := get(i, room)
			w.texts = texts
			out[i] = diagnoseWorkload(s, w)
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

// sortStable is sort.SliceStable(s, less) without its reflection: sort.SliceStable builds a
// swapper per call, one of the most frequent allocations of a 100,000-pod diagnosis. Both are
// stable sorts by the same relation, so they order s the same.
func sortStable[T any](s []T, less func(a, b T) bool) {
	slices.SortStableFunc(s, func(a, b T) int {
		if less(a, b) {
			return -1
		}
		if less(b, a) {
			return 1
		}
		return 0
	})
}

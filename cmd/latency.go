package cmd

import (
	"context"
	"math"
	"runtime/debug"
	"sync"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
	"github.com/kubediagnose/kubectl-diagnose/tui"
)

// latencyGCPercent is the collector's pace while the console's first live read and its
// diagnosis run. A live read cannot hold a heap floor as a dump's does (it does not know its
// size before the lists come), and at the default pace the collector ran 12-13 cycles over a
// 20,000-pod read, each marking what had been read so far, on the cores the API server answers
// the lists with: at 400, 4 cycles, and the console's complete first screen came at 0.91 of the
// audit's time instead of 1.03-1.06 (docs/performance.md). Its peak rose by up to 60 MiB (645 MiB
// against 593 under churn), within the console's goal, a third of k9s's Pod view (753 MiB).
const latencyGCPercent = 400

// latencyGC counts the first reads running at latencyGCPercent: a namespace switch starts one
// while the last may not have ended, and the pace goes back only when none runs.
var latencyGC struct {
	sync.Mutex
	reads int
	// saved is the pace before the first of them.
	saved int
}

// firstReadForLatency has the console's watch make its first read, and the console its first
// diagnosis, at latencyGCPercent, until the console lets go of the watch's hold (that diagnosis
// is on screen) or the watch ends; then the collector goes back to its pace. A watch without a
// hold, a pace already slower (GOGC above it, or off) and a memory limit (which sets the pace
// itself) are left alone. Only the console of one context takes it: a fleet reads several
// clusters at once, where the garbage let stand would be each cluster's (fleetHeapFloor).
func firstReadForLatency(watch tui.WatchFunc) tui.WatchFunc {
	return func(ctx context.Context, hooks snapshot.WatchHooks) (<-chan *snapshot.Snapshot, <-chan error) {
		if hooks.Hold != nil && paceForLatency() {
			go func() {
				select {
				case <-hooks.Hold:
				case <-ctx.Done():
				}
				paceAgain()
			}()
		}
		return watch(ctx, hooks)
	}
}

// paceForLatency counts a first read in and reports whether it must count it out.
func paceForLatency() bool {
	latencyGC.Lock()
	defer latencyGC.Unlock()
	if latencyGC.reads == 0 {
		if debug.SetMemoryLimit(-1) != math.MaxInt64 {
			return false
		}
		prev := debug.SetGCPercent(latencyGCPercent)
		if prev < 0 || prev >= latencyGCPercent {
			debug.SetGCPercent(prev)
			return false
		}
		latencyGC.saved = prev
	}
	latencyGC.reads++
	return true
}

func paceAgain() {
	latencyGC.Lock()
	defer latencyGC.Unlock()
	latencyGC.reads--
	if latencyGC.reads == 0 {
		debug.SetGCPercent(latencyGC.saved)
	}
}

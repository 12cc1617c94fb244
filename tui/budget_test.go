//go:build !race

// The race detector slows every frame several-fold; the budget is about the product, so this
// check is built only without it (make test runs without -race).

package tui

import (
	"testing"
	"time"
)

// TestWorkloadsFrameBudget fails when a frame of 10,000 workloads at 200x60 takes 5 ms or more,
// so the budget is checked by make test, not only by make bench.
func TestWorkloadsFrameBudget(t *testing.T) {
	m := bigModel(t, 10000, 200, 60)
	// The best of three runs: other packages' tests share the machine, and a busy neighbour is
	// not a slow frame.
	per := time.Duration(1 << 62)
	for range 3 {
		r := testing.Benchmark(func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_ = m.View()
			}
		})
		per = min(per, time.Duration(r.NsPerOp()))
	}
	if per >= 5*time.Millisecond {
		t.Fatalf("a frame takes %v, budget 5ms", per)
	} else {
		t.Logf("a frame of 10,000 workloads at 200x60 takes %v", per)
	}
}

package diagnose

import (
	"fmt"
	"math"
	"testing"
)

// TestHotMessagesAsSprintf holds the messages written without fmt to what fmt.Sprintf wrote.
func TestHotMessagesAsSprintf(t *testing.T) {
	for _, n := range []int64{0, 1, -1, 9, 10, 99, 1000, 123456789, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64} {
		if got, want := itoa(n), fmt.Sprintf("%d", n); got != want {
			t.Errorf("itoa(%d) = %q", n, got)
		}
		if n >= math.MinInt32 && n <= math.MaxInt32 {
			if got, want := itoa(int32(n)), fmt.Sprintf("%d", int32(n)); got != want {
				t.Errorf("itoa(int32 %d) = %q", n, got)
			}
		}
	}
	for _, c := range []Counts{{}, {Declared: 10, Existing: 10, Serving: 10}, {Declared: 3, Existing: 1}, {Declared: 1, Existing: 2, Serving: 1}, {Declared: 250, Existing: 12, Serving: 7}} {
		w := &workload{Counts: c}
		want := fmt.Sprintf("%d of %d copies exist · %d serving", c.Existing, c.Declared, c.Serving)
		if c.Existing > c.Declared {
			want = fmt.Sprintf("%d copies exist for %d declared · %d serving", c.Existing, c.Declared, c.Serving)
		}
		if got := headline(w, ShapeHealthy); len(got) < len(want) || got[:len(want)] != want {
			t.Errorf("headline of %+v = %q, want it to begin %q", c, got, want)
		}
	}
}

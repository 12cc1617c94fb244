package memory

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// pace is the collector's pace as set now.
func pace() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

func TestForReadsPacesTheCollectorUntilSettled(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	settle := ForReads()
	if p := pace(); p != ReadPace {
		t.Fatalf("pace %d while reading, want %d", p, ReadPace)
	}
	// A read's heap: what it keeps, marked by a cycle, and garbage past twice that, under the
	// goal of ReadPace.
	kept := make([][]byte, 16)
	for i := range kept {
		kept[i] = make([]byte, 1<<20)
	}
	runtime.GC()
	for range 40 {
		runtime.KeepAlive(make([]byte, 1<<20))
	}
	var garbage [][]byte
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	settle()
	if p := pace(); p != 100 {
		t.Fatalf("pace %d once settled, want the 100 it started at", p)
	}
	// The heap is past the goal at 100: the next allocations start a collection.
	var after runtime.MemStats
	for i := 0; i < 64; i++ {
		garbage = append(garbage, make([]byte, 64<<10))
		if runtime.ReadMemStats(&after); after.NumGC > before.NumGC {
			break
		}
	}
	if after.NumGC == before.NumGC {
		t.Error("settling left the heap past its goal without a collection")
	}
	runtime.KeepAlive(kept)
	runtime.KeepAlive(garbage)
	debug.SetGCPercent(300)
	settle()
	if p := pace(); p != 300 {
		t.Errorf("a second settle set the pace again: %d", p)
	}
}

func TestForReadsLeavesTheUsersSettings(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, env := range []struct{ gogc, limit string }{{"800", ""}, {"", "600MiB"}, {"off", ""}} {
		t.Setenv("GOGC", env.gogc)
		t.Setenv("GOMEMLIMIT", env.limit)
		debug.SetGCPercent(150)
		settle := ForReads()
		if p := pace(); p != 150 {
			t.Errorf("GOGC=%q GOMEMLIMIT=%q: pace %d, want the process's 150 left alone", env.gogc, env.limit, p)
		}
		settle()
		if p := pace(); p != 150 {
			t.Errorf("GOGC=%q GOMEMLIMIT=%q: settle set the pace to %d", env.gogc, env.limit, p)
		}
	}
}

package dump

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
)

// floorChildEnv makes a run of this test binary read the dump it names and print what the
// read cost the collector (see readForFloor): "floor=PATH" reads as ever, "nofloor=PATH"
// without the heap floor, "limit=PATH" under a memory limit (far above what it needs),
// "freed=PATH" with a floor after 8 MB were used and freed.
const floorChildEnv = "KUBEDIAGNOSE_FLOOR_CHILD"

func TestMain(m *testing.M) {
	if v := os.Getenv(floorChildEnv); v != "" {
		os.Exit(readForFloor(v))
	}
	os.Exit(m.Run())
}

// readForFloor reads a dump in a process of its own, as the commands do (a test process's
// heap would set the collector's pace instead), and prints the collector's cycles from the
// moment the floor is made to the read's end, and how much the resident memory grew in the
// making of the floor, in kB.
func readForFloor(v string) int {
	mode, path, _ := strings.Cut(v, "=")
	var opts Options
	switch mode {
	case "latency":
		opts.ForLatency = true
	case "nofloor":
		maxHeapFloor = 0
	case "limit":
		debug.SetMemoryLimit(8 << 30)
	case "freed":
		// Memory used and freed at the heap's end, where a span the floor starts is zeroed
		// whole by the allocator.
		junk := make([]byte, 8<<20)
		for i := range junk {
			junk[i] = 1
		}
		runtime.KeepAlive(junk)
		runtime.GC()
	}
	// Counted from the floor on: making it may start a cycle or two over the few megabytes
	// the process holds, and a read without one counts from the same moment.
	sample := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	var before uint64
	rssBefore, err := residentKB()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var rssFloor int64
	floorSet = func() {
		metrics.Read(sample)
		before = sample[0].Value.Uint64()
		rssFloor, err = residentKB()
	}
	s, rerr := ReadContext(context.Background(), path, nil, opts)
	if err = errors.Join(rerr, err); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	metrics.Read(sample)
	fmt.Println(sample[0].Value.Uint64()-before, rssFloor-rssBefore, len(s.Pods))
	return 0
}

// residentKB is the process's VmRSS in kB.
func residentKB() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			var kb int64
			_, err := fmt.Sscan(rest, &kb)
			return kb, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/self/status")
}

// TestReadHoldsAHeapFloor reads a dump of 2,000 pods (about 28 MB of JSON) with and without
// the heap floor, each in a process of its own, and counts the collector's cycles from the
// moment the floor is made: without it the collector runs a cycle at every doubling of the
// heap as the objects are read (each marking all read so far), 5-7 here (10-11 under the race
// detector); with it, the end of the floor's own and about one more, and held for latency
// (Options.ForLatency) that one no more. Making the floor must leave the resident memory where
// it was, also when the process freed memory at the heap's end just before (where one span is
// zeroed whole). Under a memory limit no floor is held: the limit would count it. The dump is
// read as a directory and as one file.
func TestReadHoldsAHeapFloor(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("the resident memory is read from /proc")
	}
	dir := filepath.Join(t.TempDir(), "dump")
	if err := Write(dir, scaleSnapshot(t, 200, 100, 0), false); err != nil {
		t.Fatal(err)
	}
	size, err := jsonBytes(dir)
	if err != nil {
		t.Fatal(err)
	}
	if size < minHeapFloor {
		t.Fatalf("the dump has %d bytes of JSON, under the %d a floor is held for", size, minHeapFloor)
	}
	// The same lists as one file, as kubectl cluster-info dump writes them to standard output:
	// the read of a single file sizes the floor by the file.
	stream := filepath.Join(t.TempDir(), "cluster-info-dump.json")
	files, err := dumpFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if err := os.WriteFile(stream, all, 0o600); err != nil {
		t.Fatal(err)
	}
	child := func(mode, dir string) (cycles, floorKB int64) {
		cmd := exec.Command(os.Args[0], "-test.run", "^$")
		// The collector's settings are the runtime's defaults, whatever the caller's.
		cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
			return strings.HasPrefix(kv, "GOGC=") || strings.HasPrefix(kv, "GOMEMLIMIT=")
		})
		cmd.Env = append(cmd.Env, floorChildEnv+"="+mode+"="+dir)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v: %s", mode, err, stderr.String())
		}
		var pods int
		if _, err := fmt.Sscan(string(out), &cycles, &floorKB, &pods); err != nil {
			t.Fatalf("%s printed %q: %v", mode, out, err)
		}
		if pods != 2000 {
			t.Fatalf("%s read %d pods, want 2000", mode, pods)
		}
		return cycles, floorKB
	}
	without, _ := child("nofloor", dir)
	// Read three times: the allocator zeroed the whole floor in about 1 read of 12 when the
	// collector's first cycle began while the floor was made (4e760d9:BENCHMARKS.md, 2026-12-05).
	var with, grew int64
	withLeast := int64(math.MaxInt64)
	for range 3 {
		c, g := child("floor", dir)
		with, grew, withLeast = max(with, c), max(grew, g), min(withLeast, c)
	}
	limited, _ := child("limit", dir)
	withStream, grewStream := child("floor", stream)
	withStreamLeast := withStream
	if c, _ := child("floor", stream); c < withStreamLeast {
		withStreamLeast = c
	}
	// The least of a few reads, as withLeast: the floor's own cycles are one or two, and a read
	// held for latency runs those alone.
	latency, latencyStream := int64(math.MaxInt64), int64(math.MaxInt64)
	var grewLatency int64
	for range 3 {
		c, g := child("latency", dir)
		cs, gs := child("latency", stream)
		latency, latencyStream, grewLatency = min(latency, c), min(latencyStream, cs), max(grewLatency, g, gs)
	}
	_, grewFreed := child("freed", dir)
	t.Logf("%d bytes of JSON: %d cycles without the floor, %d-%d with it (%d as one file), %d held for latency (%d as one file), %d under a memory limit; resident memory grew by %d, %d and (after 8 MB were freed) %d kB in its making",
		size, without, withLeast, with, withStream, latency, latencyStream, limited, grew, grewStream, grewFreed)
	if with > 4 || withStream > 4 {
		t.Errorf("the read ran %d collector cycles with the floor (%d as one file), want at most 4", with, withStream)
	}
	if without < with+2 {
		t.Errorf("without the floor the read ran %d cycles, with it %d: the floor saved none", without, with)
	}
	// Held for latency, the floor leaves room for all the read allocates: the cycle near its
	// end is gone.
	if latency >= withLeast || latencyStream >= withStreamLeast {
		t.Errorf("held for latency the read ran %d cycles (%d as one file), with the floor at least %d (%d): it saved none", latency, latencyStream, withLeast, withStreamLeast)
	}
	if limited < with+2 {
		t.Errorf("under a memory limit the read ran %d cycles, with the floor %d: the floor was held under the limit", limited, with)
	}
	// After the 8 MB were freed, the floor's first piece goes over them and is zeroed; it is
	// the rest, most of the floor, that must stay untouched.
	for _, g := range []struct{ grew, most int64 }{{grew, size / 1024 / 4}, {grewStream, size / 1024 / 4}, {grewFreed, size / 1024 / 2}, {grewLatency, size / 1024 / 4}} {
		if g.grew > g.most {
			t.Errorf("the resident memory grew by %d kB in the making of a %d kB floor: its pages were written", g.grew, size/1024)
		}
	}
}

// TestHeapFloorGivesTheCollectorBack makes floors one after another and side by side and checks
// that the collector runs at the pace it had before: each floor is made with it off, and a
// floor that left it off would let a long-running process (serve, the console) grow unbounded.
// The floor test above would not see that: fewer cycles pass its bounds.
func TestHeapFloorGivesTheCollectorBack(t *testing.T) {
	if debug.SetMemoryLimit(-1) != math.MaxInt64 || runtime.GOOS == "windows" {
		t.Skip("no floor is held under a memory limit or on Windows")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	if f := heapFloor(minHeapFloor); len(f) == 0 {
		t.Fatal("no floor made for a dump of the smallest size that gets one")
	}
	if got := debug.SetGCPercent(150); got != 150 {
		t.Fatalf("after a floor the collector's percent is %d, want 150 as before", got)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { runtime.KeepAlive(heapFloor(minHeapFloor)) })
	}
	wg.Wait()
	if got := debug.SetGCPercent(150); got != 150 {
		t.Fatalf("after four floors side by side the collector's percent is %d, want 150", got)
	}
}

package dump

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"
)

// floorChildEnv makes a run of this test binary read the dump it names and print what the
// read cost the collector (see readForFloor): "floor=PATH" reads as ever, "nofloor=PATH"
// without the heap floor, "limit=PATH" under a memory limit (far above what it needs).
const floorChildEnv = "KUBEDIAGNOSE_FLOOR_CHILD"

func TestMain(m *testing.M) {
	if v := os.Getenv(floorChildEnv); v != "" {
		os.Exit(readForFloor(v))
	}
	os.Exit(m.Run())
}

// readForFloor reads a dump in a process of its own, as the commands do (a test process's
// heap would set the collector's pace instead), and prints the collector's cycles during the
// read and the peak resident memory in kB.
func readForFloor(v string) int {
	mode, path, _ := strings.Cut(v, "=")
	switch mode {
	case "nofloor":
		maxHeapFloor = 0
	case "limit":
		debug.SetMemoryLimit(8 << 30)
	}
	sample := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(sample)
	before := sample[0].Value.Uint64()
	s, err := ReadContext(context.Background(), path, nil, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	metrics.Read(sample)
	hwm, err := peakRSS()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(sample[0].Value.Uint64()-before, hwm, len(s.Pods))
	return 0
}

// peakRSS is the process's VmHWM in kB.
func peakRSS() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			var kb int64
			_, err := fmt.Sscan(rest, &kb)
			return kb, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}

// raceBuild reports whether this binary has the race detector, whose sync.Pool drops a share
// of what is put back: the read's buffers then become garbage the floor lets stand.
func raceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// TestReadHoldsAHeapFloor reads a dump of 2,000 pods (about 28 MB of JSON) with and without
// the heap floor, each in a process of its own: without it the collector runs a cycle at
// every doubling of the heap as the objects are read (each marking all read so far); with it,
// the cycle the floor itself starts and at most two more (under the race detector, whose
// pools make garbage). The floor's pages are never touched, so the peak resident memory stays
// where it was; that is compared without the race detector (make test-unit runs this test
// both ways), as its garbage stands longer with the floor. Under a memory limit no floor is
// held: the limit would count it. The dump is read as a directory and as one file.
func TestReadHoldsAHeapFloor(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("peak resident memory is read from /proc")
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
	child := func(mode, dir string) (cycles, rssKB int64) {
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
		if _, err := fmt.Sscan(string(out), &cycles, &rssKB, &pods); err != nil {
			t.Fatalf("%s printed %q: %v", mode, out, err)
		}
		if pods != 2000 {
			t.Fatalf("%s read %d pods, want 2000", mode, pods)
		}
		return cycles, rssKB
	}
	without, rssWithout := child("nofloor", dir)
	with, rssWith := child("floor", dir)
	limited, _ := child("limit", dir)
	withStream, _ := child("floor", stream)
	t.Logf("%d bytes of JSON: %d cycles and %d kB peak without the floor, %d and %d kB with it, %d cycles under a memory limit; as one file, %d cycles with the floor",
		size, without, rssWithout, with, rssWith, limited, withStream)
	if with > 3 {
		t.Errorf("the read ran %d collector cycles with the floor, want at most 3", with)
	}
	if withStream > 3 {
		t.Errorf("the read of the dump as one file ran %d collector cycles with the floor, want at most 3", withStream)
	}
	if without < 2*with {
		t.Errorf("without the floor the read ran %d cycles, with it %d: the floor did not halve them", without, with)
	}
	if limited < 2*with {
		t.Errorf("under a memory limit the read ran %d cycles, with the floor %d: the floor was held under the limit", limited, with)
	}
	if raceBuild() {
		return
	}
	if grown := rssWith - rssWithout; grown > size/1024/4 {
		t.Errorf("peak RSS %d kB with the floor, %d kB without: the floor's %d kB were touched", rssWith, rssWithout, size/1024)
	}
}

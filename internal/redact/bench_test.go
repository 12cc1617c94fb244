package redact

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
	"github.com/kubediagnose/kubectl-diagnose/test/testbed/fleetsim"
)

// cpuTime is the process's user and system CPU time so far: the machine is shared, and wall
// time says what the benchmark waited as much as what it did.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkReport20kPods measures the pass over the report of 20,000 pods (every scenario's
// namespaces cloned, as serve's scrape benchmark builds them) in CPU time, beside the CPU time
// the engine took over the same snapshot.
func BenchmarkReport20kPods(b *testing.B) {
	dirs, err := filepath.Glob(filepath.Join("..", "..", "testdata", "scenarios", "*", "dump"))
	if err != nil || len(dirs) == 0 {
		b.Fatalf("scenario dumps: %v", err)
	}
	var srcs []*snapshot.Snapshot
	for _, d := range dirs {
		s, err := dump.Read(d, nil)
		if err != nil {
			b.Fatal(err)
		}
		srcs = append(srcs, s)
	}
	s := fleetsim.Clone(srcs, 20000)
	cpu0 := cpuTime(b)
	rep := diagnose.Diagnose(s)
	engine := cpuTime(b) - cpu0
	r := New()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 = cpuTime(b)
	n := 0
	for b.Loop() {
		r.Report(rep, s)
		n++
	}
	pass := (cpuTime(b) - cpu0) / time.Duration(n)
	b.ReportMetric(float64(engine.Milliseconds()), "diagnose-cpu-ms")
	b.ReportMetric(float64(pass.Microseconds())/1000, "pass-cpu-ms")
}

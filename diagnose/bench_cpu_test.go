//go:build linux

package diagnose

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// BenchmarkDiagnose100kCPU is BenchmarkDiagnose100k that also reports the process's CPU time
// per op (user + sys of every thread, the garbage collector's included) over the timed loop
// alone: on a shared machine wall time is the load's, and CPU time without the setup is the
// comparable figure.
func BenchmarkDiagnose100kCPU(b *testing.B) {
	s := syntheticHealthyClusterOf(10000, 100, 10)
	s.Index()
	runtime.GC()
	b.ReportAllocs()
	before := processCPU(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.ForgetServicesFiled()
		r := Diagnose(s)
		if r.Summary[ShapeHealthy] != 9500 {
			b.Fatalf("%d healthy workloads, want 9500 (summary %v)", r.Summary[ShapeHealthy], r.Summary)
		}
	}
	b.StopTimer()
	b.ReportMetric((processCPU(b)-before).Seconds()/float64(b.N), "cpu-s/op")
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

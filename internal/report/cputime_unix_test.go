//go:build unix

package report

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the test process has used, user and system: on a shared machine
// the benchmarks report it beside the wall time, which other work stretches.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

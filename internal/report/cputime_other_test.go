//go:build !unix

package report

import "time"

// processCPU is unknown here; the benchmarks then report 0 CPU.
func processCPU() time.Duration { return 0 }

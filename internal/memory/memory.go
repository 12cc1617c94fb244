// Package memory is the process's one memory policy: the pace of the garbage collector
// (GOGC), set once as a command starts and settled once by a command that goes on after its
// first read. Nothing else in the tool steers the collector. docs/performance.md ("The memory
// policy") says why, and what it costs.
package memory

import (
	"os"
	"runtime/debug"
	"sync"
)

// ReadPace is the collector's pace (GOGC) while a command reads and diagnoses its first
// snapshot.
const ReadPace = 400

// ForReads sets the collector's pace to ReadPace, unless the environment sets GOGC or
// GOMEMLIMIT. It returns settle, which sets the pace back once, from any goroutine; settle
// does nothing when ForReads did nothing.
func ForReads() (settle func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	prev := debug.SetGCPercent(ReadPace)
	var once sync.Once
	return func() { once.Do(func() { debug.SetGCPercent(prev) }) }
}

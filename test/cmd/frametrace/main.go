// Command frametrace prints the key-to-frame latencies of a console frame trace
// (KUBECTL_DIAGNOSE_FRAME_TRACE): p50, p90, p99 and max of the whole latency and of its parts.
//
//	KUBECTL_DIAGNOSE_FRAME_TRACE=/tmp/trace kubectl-diagnose --dump DIR   # type, then quit
//	go run ./test/cmd/frametrace /tmp/trace
//
// -skip N leaves out the first N keys (typed before the diagnosis was complete, say).
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/frametrace"
)

func main() {
	skip := flag.Int("skip", 0, "leave out the first `N` keys")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "frametrace: usage: frametrace [-skip N] TRACE")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *skip); err != nil {
		fmt.Fprintln(os.Stderr, "frametrace:", err)
		os.Exit(1)
	}
}

func run(path string, skip int) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open trace: %w", err)
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose on close
	keys, err := frametrace.Parse(f)
	if err != nil {
		return err
	}
	keys = keys[min(skip, len(keys)):]
	undrawn, unchanged := 0, 0
	for _, k := range keys {
		switch {
		case k.Unchanged:
			unchanged++
		case !k.Drawn:
			undrawn++
		}
	}
	fmt.Printf("keys %d, drawn %d, changed nothing on screen %d, never drawn %d\n", len(keys), len(keys)-undrawn-unchanged, unchanged, undrawn)
	for _, part := range []struct {
		name string
		of   func(frametrace.Key) time.Duration
	}{
		{"key to frame", frametrace.Key.Frame},
		{"  Update", func(k frametrace.Key) time.Duration { return k.Updated - k.Arrived }},
		{"  View", func(k frametrace.Key) time.Duration { return k.Viewed - k.Updated }},
		{"  to the tick", func(k frametrace.Key) time.Duration { return k.WriteBegan - k.Viewed }},
		{"  write", func(k frametrace.Key) time.Duration { return k.Written - k.WriteBegan }},
	} {
		fmt.Printf("%-15s %s\n", part.name, frametrace.Summarize(keys, part.of))
	}
	return nil
}

// Command kubectl-diagnose says why a Kubernetes workload at its declared count serves nothing,
// and which spec field is to blame. Installed on PATH it also runs as `kubectl diagnose`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubediagnose/kubectl-diagnose/cmd"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	var caught atomic.Value // the first signal, a syscall.Signal
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		caught.Store(sig)
		cancel()
		// A second signal means the user will not wait for the first to be honoured.
		if sig, ok := <-sigs; ok {
			os.Exit(signalCode(sig))
		}
	}()
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	err := cmd.NewRootCmd(streams).ExecuteContext(ctx)
	cancel()
	// An interrupted run exits as a shell reports a process the signal killed, whatever the
	// command returned: its output is incomplete.
	if sig, ok := caught.Load().(os.Signal); ok {
		fmt.Fprintf(os.Stderr, "error: interrupted by %s\n", signalName(sig))
		os.Exit(signalCode(sig))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
	}
	os.Exit(cmd.ExitCode(err))
}

// signalCode is 128 plus the signal's number: 130 for SIGINT, 143 for SIGTERM.
func signalCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 128 + int(syscall.SIGINT)
}

func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	default:
		return "SIGINT"
	}
}

// Command kubectl-diagnose says why a Kubernetes workload at its declared count serves nothing,
// and which spec field is to blame. Installed on PATH it also runs as `kubectl diagnose`.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"

	"github.com/kubediagnose/kubectl-diagnose/cmd"
)

func main() {
	// client-go logs through klog to stderr ("Unexpected error when reading response body")
	// beside the error it returns; the error, printed once below, is what the user reads.
	klog.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		// A second signal kills at once, as it would without this handler.
		signal.Stop(sigs)
		if sig, ok := s.(syscall.Signal); ok {
			cancel(&cmd.Interrupted{Signal: sig})
		}
	}()
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	err := cmd.NewRootCmd(streams).ExecuteContext(ctx)
	var intr *cmd.Interrupted
	if cause := context.Cause(ctx); errors.As(cause, &intr) {
		// Whatever the command returned on its way out ("context canceled") is not news; one
		// line says the output is incomplete because of the signal, and the status says which.
		err = intr
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
	}
	cancel(nil)
	os.Exit(cmd.ExitCode(err))
}

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

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubediagnose/kubectl-diagnose/cmd"
)

func main() {
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

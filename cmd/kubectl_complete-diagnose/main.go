// Command kubectl_complete-diagnose completes `kubectl diagnose <TAB>`: kubectl 1.26 and later
// run it, found on PATH beside kubectl-diagnose, with the words typed after `kubectl diagnose`,
// and relay its answer to the shell. It is the plugin's own completion, cobra's __complete.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubediagnose/kubectl-diagnose/cmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	root := cmd.NewRootCmd(streams)
	root.SetArgs(append([]string{cobra.ShellCompRequestCmd}, os.Args[1:]...))
	err := root.ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
	}
	os.Exit(cmd.ExitCode(err))
}

// Command gendocs writes docs/cli/: one Markdown page per command, from the same cobra tree
// as --help, so the pages cannot say what the binary does not. Its test fails when the checked-in
// pages differ from what it writes; run `make docs` to refresh them.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubediagnose/kubectl-diagnose/cmd"
)

func main() {
	dir := "docs/cli"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := generate(dir); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

// generate writes the pages into dir, removing pages of commands that no longer exist.
func generate(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range old {
		if err := os.Remove(dir + "/" + e.Name()); err != nil {
			return err
		}
	}
	return doc.GenMarkdownTree(root(), dir)
}

// root is the command tree as the binary builds it, with the defaults that depend on the machine
// written as they are for every user.
func root() *cobra.Command {
	r := cmd.NewRootCmd(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	r.DisableAutoGenTag = true
	// The pages name the command as kubectl runs the plugin, whatever ran this generator.
	r.Annotations[cobra.CommandDisplayNameAnnotation] = cmd.CommandName("kubectl-diagnose")
	// Cobra adds `completion` when the binary runs; the docs show it too.
	r.InitDefaultCompletionCmd()
	if f := r.PersistentFlags().Lookup("cache-dir"); f != nil {
		f.DefValue = "$HOME/.kube/cache"
	}
	return r
}

package cmd

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// version is set at build time: -ldflags "-X github.com/kubediagnose/kubectl-diagnose/cmd.version=v0.1.0".
var version = ""

// Version returns the version of this build: the linked-in version, else the module version,
// else "dev", with the VCS revision when the build recorded one.
func Version() string {
	v := version
	info, ok := debug.ReadBuildInfo()
	if v == "" && ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	if v == "" {
		v = "dev"
	}
	if ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " (" + s.Value[:12] + ")"
			}
		}
	}
	return v
}

// NewCmdVersion returns the version command.
func NewCmdVersion(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(streams.Out, "kubectl-diagnose %s %s/%s %s\n", Version(), runtime.GOOS, runtime.GOARCH, runtime.Version())
			return err
		},
	}
}

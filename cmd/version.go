package cmd

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"
)

// version is set at build time: -ldflags "-X github.com/kubediagnose/kubectl-diagnose/cmd.version=v0.1.0".
var version = ""

// commit is the VCS revision, set at build time by the release build (-X ...cmd.commit=...), whose
// -trimpath builds may record none; otherwise the build info's vcs.revision is used.
var commit = ""

// Version returns the version of this build: the linked-in version, else the module version,
// else "dev", with the VCS revision when the build recorded one.
func Version() string {
	info := Info()
	if len(info.GitCommit) >= 12 {
		return info.Version + " (" + info.GitCommit[:12] + ")"
	}
	return info.Version
}

// VersionInfo is what `version -o json|yaml` prints; the keys are those of kubectl version's
// clientVersion where they mean the same.
type VersionInfo struct {
	Version   string `json:"version"`
	GitCommit string `json:"gitCommit,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Info describes this build.
func Info() VersionInfo {
	v := VersionInfo{Version: version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if v.Version == "" && ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v.Version = info.Main.Version
	}
	if v.Version == "" {
		v.Version = "dev"
	}
	v.GitCommit = commit
	if ok && v.GitCommit == "" {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				v.GitCommit = s.Value
			}
		}
	}
	return v
}

// NewCmdVersion returns the version command.
func NewCmdVersion(streams genericiooptions.IOStreams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version [-o json|yaml]",
		Short: "Print the version",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			info := Info()
			switch output {
			case "":
				_, err := fmt.Fprintf(streams.Out, "kubectl-diagnose %s %s %s\n", Version(), info.Platform, info.GoVersion)
				return err
			case "json":
				b, err := json.MarshalIndent(info, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(streams.Out, "%s\n", b)
				return err
			case "yaml":
				b, err := yaml.Marshal(info)
				if err != nil {
					return err
				}
				_, err = streams.Out.Write(b)
				return err
			}
			return usageErrorf("unknown output format %q; use json or yaml", output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: json|yaml; default one line.")
	return cmd
}

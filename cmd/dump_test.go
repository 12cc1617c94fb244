package cmd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubediagnose/kubectl-diagnose/internal/live"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// dumpParent mirrors the root command's persistent flags, so -n and -A parse as they do under it.
func dumpParent(streams genericiooptions.IOStreams, runF func(*DumpOptions) error) *cobra.Command {
	flags := genericclioptions.NewConfigFlags(false)
	parent := &cobra.Command{Use: "kubectl-diagnose", SilenceErrors: true, SilenceUsage: true}
	flags.AddFlags(parent.PersistentFlags())
	parent.PersistentFlags().BoolP("all-namespaces", "A", false, "")
	parent.AddCommand(newCmdDump(streams, flags, runF))
	parent.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	return parent
}

func TestDumpArgvToOptions(t *testing.T) {
	tests := []struct {
		name      string
		argv      []string
		wantDir   string
		wantForce bool
		wantNS    []string
		wantAll   bool
		wantErr   string
	}{
		{name: "directory only", argv: []string{"dump", "--output-directory", "out"}, wantDir: "out"},
		{
			name: "namespace and force", argv: []string{"dump", "--output-directory=out", "--force", "-n", "telemetry"},
			wantDir: "out", wantForce: true, wantNS: []string{"telemetry"},
		},
		{name: "all namespaces", argv: []string{"dump", "-A", "--output-directory", "out"}, wantDir: "out", wantAll: true},
		{name: "all namespaces before the subcommand", argv: []string{"-A", "dump", "--output-directory", "out"}, wantDir: "out", wantAll: true},
		{name: "missing directory", argv: []string{"dump"}, wantErr: "--output-directory is required"},
		{
			name: "namespace with all namespaces", argv: []string{"dump", "-A", "-n", "x", "--output-directory", "out"},
			wantErr: "--namespace and --all-namespaces cannot be used together",
		},
		{name: "stray argument", argv: []string{"dump", "extra", "--output-directory", "out"}, wantErr: "extra"},
		{name: "unknown flag", argv: []string{"dump", "--output-dir", "out"}, wantErr: "unknown flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			streams, _, _, _ := genericiooptions.NewTestIOStreams()
			var got *DumpOptions
			parent := dumpParent(streams, func(o *DumpOptions) error { got = o; return nil })
			parent.SetArgs(tt.argv)
			err := parent.Execute()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				if code := ExitCode(err); code != ExitUsage {
					t.Errorf("exit code = %d, want %d (usage)", code, ExitUsage)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if got == nil {
				t.Fatal("run hook not called")
			}
			if got.OutputDirectory != tt.wantDir || got.Force != tt.wantForce || got.AllNamespaces != tt.wantAll ||
				strings.Join(got.Namespaces, ",") != strings.Join(tt.wantNS, ",") {
				t.Errorf("options = dir %q force %v namespaces %v all %v; want dir %q force %v namespaces %v all %v",
					got.OutputDirectory, got.Force, got.Namespaces, got.AllNamespaces, tt.wantDir, tt.wantForce, tt.wantNS, tt.wantAll)
			}
		})
	}
}

type staticSource struct {
	snap *snapshot.Snapshot
	err  error
}

func (s staticSource) Snapshot(context.Context) (*snapshot.Snapshot, error) { return s.snap, s.err }

func dumpOptions(t *testing.T, dir string, force bool, src snapshot.Source) (*DumpOptions, *bytes.Buffer, *int) {
	t.Helper()
	streams, _, _, errOut := genericiooptions.NewTestIOStreams()
	opened := 0
	o := &DumpOptions{
		IOStreams: streams, ConfigFlags: genericclioptions.NewConfigFlags(false),
		OutputDirectory: dir, Force: force, Namespaces: []string{"telemetry"},
		newSource: func(_ *genericclioptions.ConfigFlags, opts live.Options) (snapshot.Source, error) {
			opened++
			if len(opts.Namespaces) != 1 || opts.Namespaces[0] != "telemetry" {
				t.Errorf("live options namespaces = %v, want [telemetry]", opts.Namespaces)
			}
			return src, nil
		},
	}
	return o, errOut, &opened
}

func telemetrySnapshot() *snapshot.Snapshot {
	return &snapshot.Snapshot{
		Namespaces: []string{"telemetry"},
		Source:     snapshot.SourceInfo{Type: snapshot.SourceLive},
		Pods: []*corev1.Pod{{
			TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "telemetry", Name: "ingester-1"},
		}},
		Visibility: []snapshot.Visibility{{Kind: "Event", Namespace: "telemetry", Reason: "forbidden: no"}},
	}
}

func TestDumpWritesWhatTheSourceRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "incident")
	o, errOut, _ := dumpOptions(t, dir, false, staticSource{snap: telemetrySnapshot()})
	if err := o.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	pods := filepath.Join(dir, "telemetry", "pods.json")
	data, err := os.ReadFile(pods)
	if err != nil {
		t.Fatalf("read %s: %v", pods, err)
	}
	if !strings.Contains(string(data), `"ingester-1"`) {
		t.Errorf("%s does not hold the pod read", pods)
	}
	for _, want := range []string{"warning: not dumped: Event in telemetry: forbidden: no", "Dumped 1 objects and 0 log tails of namespace telemetry to " + dir} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr = %q, want %q", errOut.String(), want)
		}
	}
}

func TestDumpRefusesANonEmptyDirectoryWithoutForce(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(keep, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, _, opened := dumpOptions(t, dir, false, staticSource{snap: telemetrySnapshot()})
	err := o.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "directory is not empty; use --force") {
		t.Fatalf("err = %v, want a refusal that names --force", err)
	}
	if *opened != 0 {
		t.Error("the cluster was read before the refusal")
	}
	if _, err := os.Stat(filepath.Join(dir, "telemetry")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a refused dump wrote files")
	}

	o, _, _ = dumpOptions(t, dir, true, staticSource{snap: telemetrySnapshot()})
	if err := o.Run(context.Background()); err != nil {
		t.Fatalf("with --force: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "telemetry", "pods.json")); err != nil {
		t.Errorf("with --force: %v", err)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "mine" {
		t.Errorf("an unrelated file was touched: %q, %v", b, err)
	}
}

func TestDumpReturnsTheSourceError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "incident")
	want := errors.New("cannot reach the API server at 127.0.0.1:1: connection refused")
	o, _, _ := dumpOptions(t, dir, false, staticSource{err: want})
	if err := o.Run(context.Background()); !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
	if ExitCode(want) != ExitError {
		t.Errorf("exit code = %d, want %d", ExitCode(want), ExitError)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Error("a failed read left a directory behind")
	}
}

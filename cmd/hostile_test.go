package cmd

import (
	"bytes"
	"errors"
	"strings"
	"syscall"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

func TestFailOnCannotPassWhenWorkloadsWereNotListed(t *testing.T) {
	forbidden := snapshot.Visibility{Kind: "StatefulSet", Namespace: "dev-web", Reason: `forbidden: User "ci" cannot list resource "statefulsets"`}
	events := snapshot.Visibility{Kind: "Event", Namespace: "dev-web", Reason: "forbidden: no"}
	healthy := diagnose.Diagnosis{Kind: "Deployment", Namespace: "dev-web", Name: "web", Shape: diagnose.ShapeHealthy}
	broken := diagnose.Diagnosis{Kind: "Deployment", Namespace: "dev-web", Name: "api", Shape: diagnose.ShapeNeverStarts}
	tests := []struct {
		name      string
		output    string
		vis       []snapshot.Visibility
		workloads []diagnose.Diagnosis
		failOn    []string
		want      string // "" for no error; a *FailOnError for "exit 3"
	}{
		{
			name: "a refused workload kind fails --fail-on", output: "json", vis: []snapshot.Visibility{forbidden}, workloads: []diagnose.Diagnosis{healthy}, failOn: []string{"broken"},
			want: "--fail-on cannot pass: could not list StatefulSets in namespace dev-web (see the warnings above)",
		},
		{
			name: "also with nothing to list in a table", output: "table", vis: []snapshot.Visibility{forbidden}, failOn: []string{"broken"},
			want: "--fail-on cannot pass: could not list StatefulSets in namespace dev-web (see the warnings above)",
		},
		{name: "a match still exits 3", output: "json", vis: []snapshot.Visibility{forbidden}, workloads: []diagnose.Diagnosis{broken}, failOn: []string{"broken"}, want: "exit 3"},
		{name: "a refused kind that is not a workload does not", output: "json", vis: []snapshot.Visibility{events}, workloads: []diagnose.Diagnosis{healthy}, failOn: []string{"broken"}},
		{name: "without --fail-on the partial report is the answer", output: "json", vis: []snapshot.Visibility{forbidden}, workloads: []diagnose.Diagnosis{healthy}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			o := &AuditOptions{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, Source: NewSourceOptions(nil), Output: tt.output, FailOnRaw: tt.failOn}
			if err := o.Complete(); err != nil {
				t.Fatal(err)
			}
			r := &diagnose.Report{Visibility: tt.vis, Workloads: tt.workloads}
			err := o.print(&snapshot.Snapshot{}, r, "dev-web")
			var failOn *FailOnError
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("err = %v, want none", err)
			case tt.want == "exit 3" && !errors.As(err, &failOn):
				t.Fatalf("err = %v, want a FailOnError", err)
			case tt.want != "" && tt.want != "exit 3" && (err == nil || err.Error() != tt.want || ExitCode(err) != ExitError):
				t.Fatalf("err = %v (exit %d), want %q and exit 1", err, ExitCode(err), tt.want)
			}
		})
	}
}

func TestHostileArgvIsAUsageError(t *testing.T) {
	tests := []struct{ argv, want string }{
		{"explain deploy/a deploy/b", "explain takes one workload, got 2: deploy/a deploy/b"},
		{"explain deploy a/b", "explain takes one workload, got 2: deploy a/b"},
		{"dump --dump ./incident --output-directory out", "--dump cannot be used with dump, which reads the live cluster; to diagnose ./incident run: kubectl diagnose audit --dump ./incident"},
		{"--dump ./incident dump --output-directory out", "--dump cannot be used with dump, which reads the live cluster; to diagnose ./incident run: kubectl diagnose audit --dump ./incident"},
		{"dump --at 2026-11-24T14:32:10Z --output-directory out", "--at cannot be used with dump: a dump records the time it was read, and audit --dump --at sets another"},
	}
	for _, tt := range tests {
		t.Run(tt.argv, func(t *testing.T) {
			_, _, err := run(t, nil, hooks{
				interactive: func() bool { return false },
				runExplain:  func(*ExplainOptions) error { return nil },
			}, strings.Fields(tt.argv)...)
			checkUsageError(t, err, tt.want)
		})
	}
}

func TestSignalsExitAsTheShellReportsThem(t *testing.T) {
	if got := ExitCode(&Interrupted{Signal: syscall.SIGINT}); got != 130 {
		t.Errorf("SIGINT exits %d, want 130", got)
	}
	if got := ExitCode(errors.Join(errors.New("read"), &Interrupted{Signal: syscall.SIGTERM})); got != 143 {
		t.Errorf("SIGTERM exits %d, want 143", got)
	}
}

package cmd

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

var errClosedPipe = errors.New("broken pipe")

// closedPipe fails every write, like stdout piped into a reader that went away.
type closedPipe struct{}

func (closedPipe) Write([]byte) (int, error) { return 0, errClosedPipe }

// TestAuditReturnsWriteErrors: a report or notice that could not be written is an error, never a
// silent exit 0.
func TestAuditReturnsWriteErrors(t *testing.T) {
	partial := &diagnose.Report{
		Visibility: []snapshot.Visibility{{Kind: "Event", Namespace: "dev-web", Reason: "events is forbidden"}},
		Workloads:  []diagnose.Diagnosis{{Kind: "Deployment", Namespace: "dev-web", Name: "web-frontend", Shape: diagnose.ShapeUnknown}},
	}
	tests := []struct {
		name        string
		out, errOut bool // which stream is broken
		report      *diagnose.Report
		output      string
		wantPrefix  string
	}{
		{"report to a closed stdout", true, false, partial, "table", "write report: "},
		{"json to a closed stdout", true, false, partial, "json", "write report: "},
		{"visibility warning to a closed stderr", false, true, partial, "table", "write warning: "},
		{"no-workloads notice to a closed stderr", false, true, &diagnose.Report{}, "table", "write notice: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			streams := genericiooptions.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
			if tc.out {
				streams.Out = closedPipe{}
			}
			if tc.errOut {
				streams.ErrOut = closedPipe{}
			}
			o := &AuditOptions{IOStreams: streams, Source: NewSourceOptions(nil), Output: tc.output}
			err := o.print(&snapshot.Snapshot{}, tc.report, "dev-web")
			if !errors.Is(err, errClosedPipe) || !strings.HasPrefix(err.Error(), tc.wantPrefix) {
				t.Errorf("err = %v, want %q wrapping %v", err, tc.wantPrefix, errClosedPipe)
			}
		})
	}
}

package cmd

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

func TestAuditKubectlFlags(t *testing.T) {
	tests := []struct {
		name    string
		argv    []string
		check   func(t *testing.T, o *AuditOptions)
		wantErr string
	}{
		{name: "defaults", argv: []string{"audit"}, check: func(t *testing.T, o *AuditOptions) {
			if o.Watch || o.NoHeaders || o.SortBy != "shape" || !o.Source.Selector.Empty() {
				t.Errorf("defaults: watch %v no-headers %v sort-by %q selector %+v", o.Watch, o.NoHeaders, o.SortBy, o.Source.Selector)
			}
		}},
		{name: "selectors, short and long", argv: []string{"audit", "-l", "tier=web,env!=dev", "--field-selector", "metadata.name=api"}, check: func(t *testing.T, o *AuditOptions) {
			if s := o.Source.Selector; s.Label != "tier=web,env!=dev" || s.Field != "metadata.name=api" || s.Empty() {
				t.Errorf("selector = %+v", s)
			}
		}},
		{name: "--selector", argv: []string{"audit", "--selector", "tier in (web,api)"}, check: func(t *testing.T, o *AuditOptions) {
			if o.Source.Selector.Label != "tier in (web,api)" {
				t.Errorf("selector = %+v", o.Source.Selector)
			}
		}},
		{name: "watch, no headers, sort", argv: []string{"audit", "-w", "--no-headers", "--sort-by", "restarts", "-o", "wide"}, check: func(t *testing.T, o *AuditOptions) {
			if !o.Watch || !o.NoHeaders || o.SortBy != "restarts" || o.Output != "wide" {
				t.Errorf("watch %v no-headers %v sort-by %q output %q", o.Watch, o.NoHeaders, o.SortBy, o.Output)
			}
		}},
		{name: "watch with custom columns", argv: []string{"audit", "--watch", "-o", "custom-columns=NAME:.name"}, check: func(t *testing.T, o *AuditOptions) {
			if !o.Watch || o.Output != "custom-columns=NAME:.name" {
				t.Errorf("watch %v output %q", o.Watch, o.Output)
			}
		}},
		{name: "kubectl formats", argv: []string{"audit", "-o", "jsonpath={.workloads[*].name}"}, check: func(t *testing.T, o *AuditOptions) {
			if o.Output != "jsonpath={.workloads[*].name}" {
				t.Errorf("output %q", o.Output)
			}
		}},
		{name: "bad label selector", argv: []string{"audit", "-l", "tier in (web"}, wantErr: `invalid label selector "tier in (web": `},
		{name: "field the server cannot select on", argv: []string{"audit", "--field-selector", "status.phase=Running"}, wantErr: `"status.phase" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{name: "bad sort key", argv: []string{"audit", "--sort-by", "metadata.name"}, wantErr: `unknown --sort-by "metadata.name"; use one of shape, age, restarts, name, or a JSONPath such as '{.counts.serving}'`},
		{name: "bad custom columns", argv: []string{"audit", "-o", "custom-columns=NAME"}, wantErr: "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"},
		{name: "bad jsonpath", argv: []string{"audit", "-o", "jsonpath={.workloads["}, wantErr: "-o jsonpath={.workloads[: error parsing jsonpath"},
		{name: "watch a dump", argv: []string{"audit", "-w", "--dump", "./incident"}, wantErr: "--watch follows a live cluster; a dump does not change"},
		{name: "watch as json", argv: []string{"audit", "-w", "-o", "json"}, wantErr: "--watch prints rows: use -o table, wide, name or custom-columns=..., not json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := parseArgs(tt.argv...)
			if tt.wantErr != "" {
				var usage *UsageError
				if !errors.As(err, &usage) || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want a usage error starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, p.audit)
		})
	}
}

func TestAuditKubectlOutput(t *testing.T) {
	mixed := scenarioDump("dev-mixed")
	tests := []struct {
		name       string
		argv       []string
		wantOut    string
		wantErrOut string
		wantCode   int
	}{
		{
			name: "label selector keeps the deployments' replicasets with them",
			argv: []string{"audit", "--dump", mixed, "-l", "app.kubernetes.io/part-of=shop", "-o", "name"},
			// recommender is still mid-rollout: its ReplicaSets were kept, and none became a row.
			wantOut: "deployment.apps/recommender\ndeployment.apps/checkout\n",
		},
		{
			name:    "set-based selector, sorted by name",
			argv:    []string{"audit", "--dump", mixed, "-l", "app in (batch-exporter,recommender)", "--sort-by", "name", "-o", "name"},
			wantOut: "deployment.apps/batch-exporter\ndeployment.apps/recommender\n",
		},
		{
			name:    "field selector",
			argv:    []string{"audit", "--dump", mixed, "--field-selector", "metadata.name!=checkout,metadata.namespace=dev-mixed", "-o", "jsonpath={.workloads[*].name}"},
			wantOut: "recommender batch-exporter",
		},
		{
			name:       "a label only replicasets carry selects nothing",
			argv:       []string{"audit", "--dump", mixed, "-l", "pod-template-hash"},
			wantErrOut: "No workloads found.\n",
		},
		{
			name:    "custom columns without headers, by restarts",
			argv:    []string{"audit", "--dump", mixed, "-o", "custom-columns=NAME:.name,RESTARTS:.counts.restarts,SHAPE:.shape", "--no-headers", "--sort-by", "restarts"},
			wantOut: "checkout         1     healthy\nrecommender      0     progressing\nbatch-exporter   0     healthy\n",
		},
		{
			name:     "fail-on with -o name",
			argv:     []string{"audit", "--dump", scenarioDump("dev-payments"), "-o", "name", "--fail-on", "broken"},
			wantOut:  "deployment.apps/payments-api\n",
			wantCode: ExitFailedOn,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := run(t, nil, hooks{}, tt.argv...)
			if code := ExitCode(err); code != tt.wantCode {
				t.Fatalf("exit %d (%v), want %d; stderr %q", code, err, tt.wantCode, errOut)
			}
			if out != tt.wantOut {
				t.Errorf("stdout:\n%s\nwant:\n%s", out, tt.wantOut)
			}
			if errOut != tt.wantErrOut {
				t.Errorf("stderr = %q, want %q", errOut, tt.wantErrOut)
			}
		})
	}
}

// watchedDumps is a source whose watch replays snapshots of dumps, one after another, as a
// live cluster's informers would emit them.
func watchedDumps(t *testing.T, first string, then ...string) func() (*openedSource, error) {
	t.Helper()
	read := func(path string) *snapshot.Snapshot {
		s, err := dump.Source{Path: path}.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	src := &openedSource{Source: &scopedSource{src: dump.Source{Path: first}}, Label: "live"}
	src.watch = func(ctx context.Context) (<-chan *snapshot.Snapshot, <-chan error) {
		// Unbuffered: the error is read before the first snapshot is sent, and the channel
		// closes after the last one, which ends the watch.
		snaps, errs := make(chan *snapshot.Snapshot), make(chan error)
		go func() {
			defer close(snaps)
			select {
			case errs <- errors.New("watch of pods in namespace dev-mixed broke: connection reset by peer"):
			case <-ctx.Done():
				return
			}
			for _, p := range append([]string{first}, then...) {
				select {
				case snaps <- read(p):
				case <-ctx.Done():
					return
				}
			}
		}()
		return snaps, errs
	}
	return func() (*openedSource, error) { return src, nil }
}

// runWatch runs audit with its source replaced by open, until the watch ends or timeout passes,
// which stands for the interrupt of a person at a terminal.
func runWatch(t *testing.T, timeout time.Duration, open func() (*openedSource, error), argv ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return runWatchContext(t, ctx, open, argv...)
}

//nolint:revive // t first, as every test helper takes it
func runWatchContext(t *testing.T, ctx context.Context, open func() (*openedSource, error), argv ...string) (string, string, error) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	source := NewSourceOptions(streams.In)
	var cmd *cobra.Command
	cmd = NewCmdAudit(streams, source, func(o *AuditOptions) error {
		o.open = open
		return o.Run(cmd)
	})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetErr(streams.ErrOut)
	source.AddFlags(cmd.PersistentFlags())
	cmd.SetArgs(argv)
	err := cmd.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

func TestAuditWatch(t *testing.T) {
	t.Run("unchanged rows are not printed again; new ones are, under the first table's columns", func(t *testing.T) {
		open := watchedDumps(t, scenarioDump("dev-mixed"), scenarioDump("dev-mixed"), scenarioDump("dev-payments"))
		out, errOut, err := runWatch(t, time.Minute, open, "-w")
		if err != nil {
			t.Fatalf("watch ended with %v, want it to end cleanly when the feed does", err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 5 || !strings.HasPrefix(lines[0], "SHAPE") || !strings.Contains(lines[0], "NAMESPACE") {
			t.Fatalf("want the header, the three dev-mixed rows once, and payments-api:\n%s", out)
		}
		if f := strings.Fields(lines[4]); f[0] != "never-starts" || f[1] != "dev-payments" || f[2] != "deployment/payments-api" {
			t.Errorf("last row %q, want payments-api with its namespace", lines[4])
		}
		if strings.Count(errOut, "connection reset by peer") != 1 {
			t.Errorf("stderr %q: want the watch error once, as a warning", errOut)
		}
	})
	t.Run("fail-on exits the moment a row matches", func(t *testing.T) {
		open := watchedDumps(t, scenarioDump("dev-mixed"), scenarioDump("dev-payments"), scenarioDump("dev-thumbs"))
		out, _, err := runWatch(t, time.Minute, open, "-w", "-o", "name", "--fail-on", "broken")
		var failed *FailOnError
		if !errors.As(err, &failed) || ExitCode(err) != ExitFailedOn {
			t.Fatalf("err = %v, want a FailOnError", err)
		}
		want := "deployment.apps/recommender\ndeployment.apps/batch-exporter\ndeployment.apps/checkout\ndeployment.apps/payments-api\n"
		if out != want {
			t.Errorf("stdout:\n%s\nwant it to stop at payments-api:\n%s", out, want)
		}
	})
}

// TestAuditWatchNamedWorkloads: a watch of named workloads follows those alone, and one that is
// not there fails before it starts, as kubectl get -w NAME does.
func TestAuditWatchNamedWorkloads(t *testing.T) {
	open := watchedDumps(t, scenarioDump("dev-mixed"), scenarioDump("dev-payments"))
	out, _, err := runWatch(t, time.Minute, open, "-w", "-o", "name", "deploy/recommender", "deploy/checkout")
	if err != nil || out != "deployment.apps/recommender\ndeployment.apps/checkout\n" {
		t.Errorf("watch of two named workloads: %v\n%s\nwant them alone, not payments-api when it comes", err, out)
	}
	open = watchedDumps(t, scenarioDump("dev-mixed"), scenarioDump("dev-payments"))
	out, _, err = runWatch(t, time.Minute, open, "-w", "deploy/nope")
	if err == nil || err.Error() != "deployment/nope not found in any namespace" || out != "" {
		t.Errorf("watch of a workload that is not there: %v\n%s", err, out)
	}
}

func TestAuditWatchInterrupted(t *testing.T) {
	src := &openedSource{Source: &scopedSource{src: dump.Source{Path: scenarioDump("dev-mixed")}}, Label: "live"}
	// The interrupt comes once the first table is out, when the watch starts, rather than after
	// a fixed time that a loaded machine may spend before the first read ends.
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	src.watch = func(context.Context) (<-chan *snapshot.Snapshot, <-chan error) {
		interrupt()
		return make(chan *snapshot.Snapshot), make(chan error) // a quiet cluster
	}
	out, _, err := runWatchContext(t, ctx, func() (*openedSource, error) { return src, nil }, "-w", "-o", "name")
	var interrupted *InterruptedError
	if !errors.As(err, &interrupted) || ExitCode(err) != ExitInterrupted {
		t.Errorf("err = %v, want an InterruptedError (exit 130)", err)
	}
	if strings.Count(out, "\n") != 3 {
		t.Errorf("stdout %q: want the three workloads of the first read", out)
	}
}

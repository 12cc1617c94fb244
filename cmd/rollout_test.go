package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

func parseRollout(argv ...string) (*RolloutOptions, error) {
	var got *RolloutOptions
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	cmd := newRootCmd(streams, hooks{runRollout: func(o *RolloutOptions) error { got = o; return nil }})
	cmd.SetArgs(argv)
	err := cmd.ExecuteContext(context.Background())
	return got, err
}

func TestRolloutFlags(t *testing.T) {
	tests := []struct {
		name    string
		argv    string
		check   func(t *testing.T, o *RolloutOptions)
		wantErr string
	}{
		{name: "defaults", argv: "rollout deploy/api", check: func(t *testing.T, o *RolloutOptions) {
			if o.Kind != "Deployment" || o.Name != "api" || o.Settle != 0 || o.Timeout != 10*time.Minute || o.Output != "text" {
				t.Errorf("defaults: %+v", o)
			}
		}},
		{name: "kind and name apart, every flag", argv: "rollout sts search-indexer -n search --settle 30s --timeout 2m -o json", check: func(t *testing.T, o *RolloutOptions) {
			if o.Kind != "StatefulSet" || o.Name != "search-indexer" || o.Source.Namespace != "search" ||
				o.Settle != 30*time.Second || o.Timeout != 2*time.Minute || o.Output != "json" {
				t.Errorf("got %+v %+v", o, o.Source)
			}
		}},
		{name: "daemonset, no timeout", argv: "rollout DaemonSets.apps/fluent-bit --timeout 0", check: func(t *testing.T, o *RolloutOptions) {
			if o.Kind != "DaemonSet" || o.Timeout != 0 {
				t.Errorf("got %+v", o)
			}
		}},
		{name: "no workload", argv: "rollout", wantErr: "rollout takes one workload as KIND/NAME, e.g. deploy/telemetry-ingester"},
		{name: "no kind", argv: "rollout api", wantErr: "want KIND/NAME, e.g. deploy/api"},
		{name: "a replicaset has no rollout", argv: "rollout rs/api-7d9f", wantErr: `cannot follow the rollout of "rs"; use deployment (deploy), statefulset (sts) or daemonset (ds)`},
		{name: "a cronjob has no rollout", argv: "rollout cj/nightly", wantErr: `cannot follow the rollout of "cj"; use deployment (deploy), statefulset (sts) or daemonset (ds)`},
		{name: "unknown kind", argv: "rollout pod/api", wantErr: `cannot follow the rollout of "pod"; use deployment (deploy), statefulset (sts) or daemonset (ds)`},
		{name: "bad output", argv: "rollout deploy/api -o yaml", wantErr: `unknown output format "yaml"; use one of text, json`},
		{name: "a dump", argv: "rollout deploy/api --dump ./incident", wantErr: "rollout follows a live cluster; --dump cannot be used (use explain on a dump)"},
		{name: "all namespaces", argv: "rollout deploy/api -A", wantErr: "rollout follows one workload; --all-namespaces cannot be used, pick its namespace with -n"},
		{name: "a reference time", argv: "rollout deploy/api --at 2026-11-24T14:32:10Z", wantErr: "rollout follows the cluster as it is now; --at cannot be used"},
		{name: "negative settle", argv: "rollout deploy/api --settle -1s", wantErr: "invalid --settle -1s: want a duration of 0 or more"},
		{name: "negative timeout", argv: "rollout deploy/api --timeout -5m", wantErr: "invalid --timeout -5m0s: want a duration of 0 or more"},
		{name: "bad duration", argv: "rollout deploy/api --settle soon", wantErr: `invalid argument "soon" for "--settle" flag: time: invalid duration "soon"; see 'kubectl diagnose rollout --help'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseRollout(strings.Fields(tt.argv)...)
			if tt.wantErr != "" {
				checkUsageError(t, err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o == nil {
				t.Fatal("rollout did not run")
			}
			tt.check(t, o)
		})
	}
}

// fixtureSnapshot reads a fixture dump a real v1.37 API server wrote, re-dated to now so the
// gate's clock and the snapshot's agree.
func fixtureSnapshot(t *testing.T, id string) *snapshot.Snapshot {
	t.Helper()
	s, err := dump.Source{Path: filepath.Join("..", "testdata", "fixtures", id, "dump")}.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s.ReferenceTime = time.Now().UTC()
	return s
}

// unobserved is the moment after an apply: the controller has not seen the new generation.
func unobserved(s *snapshot.Snapshot) *snapshot.Snapshot {
	out := &snapshot.Snapshot{
		ReferenceTime: s.ReferenceTime, Namespaces: s.Namespaces, Source: s.Source,
		ReplicaSets: s.ReplicaSets, Pods: s.Pods, Events: s.Events, Services: s.Services,
		EndpointSlices: s.EndpointSlices, Nodes: s.Nodes, Logs: s.Logs,
	}
	for _, d := range s.Deployments {
		d = d.DeepCopy()
		d.Generation++
		out.Deployments = append(out.Deployments, d)
	}
	return out
}

// rolloutRun runs the rollout command's Run on snapshots fed as a watch would.
func rolloutRun(ctx context.Context, t *testing.T, o *RolloutOptions, ns string, snaps ...*snapshot.Snapshot) (string, string, error) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	o.IOStreams = streams
	o.Source = NewSourceOptions(nil)
	o.tick = 10 * time.Millisecond
	if o.Output == "" {
		o.Output = "text"
	}
	o.openWatch = func(*RolloutOptions) (string, watchFunc, error) {
		return ns, func(context.Context) (<-chan *snapshot.Snapshot, <-chan error) {
			ch := make(chan *snapshot.Snapshot, len(snaps))
			for _, s := range snaps {
				ch <- s
			}
			return ch, make(chan error)
		}, nil
	}
	err := o.Run(ctx)
	return out.String(), errOut.String(), err
}

func TestRolloutRun(t *testing.T) {
	t.Run("succeeds after the settle period", func(t *testing.T) {
		s := fixtureSnapshot(t, "old-restarts")
		o := &RolloutOptions{Kind: "Deployment", Name: "pricing", Settle: 100 * time.Millisecond, Timeout: 10 * time.Second}
		out, errOut, err := rolloutRun(context.Background(), t, o, "fixture-old-restarts", unobserved(s), s)
		if err != nil || ExitCode(err) != ExitOK {
			t.Fatalf("exit %d: %v", ExitCode(err), err)
		}
		if !strings.HasPrefix(out, "deployment/pricing rolled out after ") || strings.Count(out, "\n") != 1 {
			t.Errorf("stdout = %q, want the one verdict line", out)
		}
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if len(lines) != 4 || lines[0] != "Following the rollout of deployment/pricing in namespace fixture-old-restarts." ||
			!strings.Contains(lines[1], "progressing  waiting for the deployment spec update to be observed") ||
			!strings.Contains(lines[2], "settling") || !strings.Contains(lines[3], "succeeded") {
			t.Errorf("stderr = %q, want the header and one line per change", errOut)
		}
	})
	t.Run("fails with the diagnosis", func(t *testing.T) {
		o := &RolloutOptions{Kind: "Deployment", Name: "storefront", Timeout: 10 * time.Second}
		out, _, err := rolloutRun(context.Background(), t, o, "fixture-invalid-image", fixtureSnapshot(t, "invalid-image"))
		if ExitCode(err) != ExitRolloutFailed || err.Error() != "rollout of deployment/storefront failed: never-starts" {
			t.Fatalf("exit %d: %v", ExitCode(err), err)
		}
		for _, want := range []string{
			"deployment/storefront rollout failed after", "Shape:     never-starts",
			"spec.template.spec.containers[0].image", "kubectl rollout undo deployment/storefront --to-revision=1",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("stdout lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("fails as json", func(t *testing.T) {
		o := &RolloutOptions{Kind: "Deployment", Name: "storefront", Timeout: 10 * time.Second, Output: "json"}
		out, _, err := rolloutRun(context.Background(), t, o, "fixture-invalid-image", fixtureSnapshot(t, "invalid-image"))
		if ExitCode(err) != ExitRolloutFailed {
			t.Fatalf("exit %d: %v", ExitCode(err), err)
		}
		var doc struct {
			APIVersion, Kind, Result, Reason string
			Workload                         struct{ Kind, Namespace, Name string }
			Status                           *struct{ Declared, Updated, Available int32 }
			Diagnosis                        *struct {
				Shape, Fix string
				Suspects   []struct{ Path string }
			}
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("decode: %v\n%s", err, out)
		}
		if doc.Kind != "RolloutResult" || doc.Result != "failed" || doc.Workload.Name != "storefront" || doc.Status == nil ||
			doc.Diagnosis == nil || doc.Diagnosis.Shape != "never-starts" || !strings.Contains(doc.Diagnosis.Fix, "--to-revision=1") ||
			len(doc.Diagnosis.Suspects) == 0 || doc.Diagnosis.Suspects[0].Path != "spec.template.spec.containers[0].image" {
			t.Errorf("document = %+v\n%s", doc, out)
		}
	})
	t.Run("times out with the state at that moment", func(t *testing.T) {
		o := &RolloutOptions{Kind: "Deployment", Name: "pricing", Timeout: 100 * time.Millisecond, Output: "json"}
		out, _, err := rolloutRun(context.Background(), t, o, "fixture-old-restarts", unobserved(fixtureSnapshot(t, "old-restarts")))
		var te *RolloutTimeoutError
		if ExitCode(err) != ExitTimedOut || !errors.As(err, &te) {
			t.Fatalf("exit %d: %v", ExitCode(err), err)
		}
		var doc struct {
			Result, Reason string
			Diagnosis      *struct{ Shape string }
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("decode: %v\n%s", err, out)
		}
		if doc.Result != "timed-out" || !strings.Contains(doc.Reason, "spec update to be observed") || doc.Diagnosis == nil {
			t.Errorf("document = %+v", doc)
		}
	})
	t.Run("interrupted: no verdict", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		o := &RolloutOptions{Kind: "Deployment", Name: "pricing"}
		out, _, err := rolloutRun(ctx, t, o, "fixture-old-restarts", unobserved(fixtureSnapshot(t, "old-restarts")))
		if ExitCode(err) != ExitInterrupted || out != "" {
			t.Errorf("exit %d (%v), stdout %q; want 130 and nothing on stdout", ExitCode(err), err, out)
		}
	})
	t.Run("missing workload", func(t *testing.T) {
		o := &RolloutOptions{Kind: "Deployment", Name: "pricing-v2"}
		_, _, err := rolloutRun(context.Background(), t, o, "fixture-old-restarts", fixtureSnapshot(t, "old-restarts"))
		if ExitCode(err) != ExitError || err.Error() != "deployment/pricing-v2 not found in namespace fixture-old-restarts" {
			t.Errorf("exit %d: %v", ExitCode(err), err)
		}
	})
	t.Run("an OnDelete statefulset", func(t *testing.T) {
		s := fixtureSnapshot(t, "storageclass")
		for _, st := range s.StatefulSets {
			st.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
		}
		o := &RolloutOptions{Kind: "StatefulSet", Name: "metrics-db"}
		_, _, err := rolloutRun(context.Background(), t, o, "fixture-storageclass", s)
		if ExitCode(err) != ExitError || !strings.Contains(err.Error(), "OnDelete") {
			t.Errorf("exit %d: %v", ExitCode(err), err)
		}
	})
}

func TestRolloutOnAnUnreachableServer(t *testing.T) {
	_, _, err := run(t, nil, hooks{}, "rollout", "deploy/api", "--kubeconfig", kubeconfig(t), "--timeout", "20s")
	if ExitCode(err) != ExitError || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("exit %d: %v; want exit 1 naming the server", ExitCode(err), err)
	}
}

func TestRolloutExitCodes(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{&RolloutFailedError{Workload: "deployment/api", Why: "never-starts"}, ExitRolloutFailed},
		{errors.Join(errors.New("ctx"), &RolloutTimeoutError{Workload: "deployment/api", Timeout: time.Minute}), ExitTimedOut},
		{&InterruptedError{}, ExitInterrupted},
	}
	for _, tt := range tests {
		if got := ExitCode(tt.err); got != tt.want {
			t.Errorf("%v: exit %d, want %d", tt.err, got, tt.want)
		}
	}
	if got := (&RolloutTimeoutError{Workload: "deployment/api", Timeout: 90 * time.Second}).Error(); got != "rollout of deployment/api undecided after --timeout 1m30s" {
		t.Errorf("timeout message %q", got)
	}
}

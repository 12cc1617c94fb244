package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/controlplane"
)

var (
	// cp is the one control plane of this package run.
	cp *controlplane.ControlPlane
	// binary is the kubectl-diagnose built from this checkout.
	binary string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "kubectl-diagnose-e2e-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(tmp) }() // scratch space; nothing to keep
	binary, err = build(tmp)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		return 1
	}
	// RunTests fails the run, naming `make e2e-assets`, when the assets are missing.
	return controlplane.RunTests(m, controlplane.Options{}, func(c *controlplane.ControlPlane) { cp = c })
}

// build compiles the binary from the repository root, the way a user installs it.
func build(dir string) (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate the repository root")
	}
	root := filepath.Join(filepath.Dir(file), "..", "..")
	out := filepath.Join(dir, "kubectl-diagnose")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build kubectl-diagnose: %w\n%s", err, b)
	}
	return out, nil
}

// result is one run of the binary.
type result struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// diagnoseCmd runs the binary with args and no terminal.
func diagnoseCmd(t *testing.T, args ...string) result {
	t.Helper()
	return diagnoseEnv(t, "/nonexistent/kubeconfig", args...)
}

// diagnoseEnv runs the binary with KUBECONFIG set to kubeconfig.
func diagnoseEnv(t *testing.T, kubeconfig string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		t.Fatalf("run %s %s: %v", binary, strings.Join(args, " "), err)
	}
	return r
}

// report is the documented JSON schema of `audit -o json`; decoding it with unknown fields
// disallowed checks the key names as well as the values.
type report struct {
	APIVersion    string         `json:"apiVersion"`
	Kind          string         `json:"kind"`
	ReferenceTime time.Time      `json:"referenceTime"`
	Source        sourceInfo     `json:"source"`
	Visibility    []visibility   `json:"visibility"`
	Summary       map[string]int `json:"summary"`
	// SharedDependencies is docs/schema.md's sharedDependencies.
	SharedDependencies []sharedDependency `json:"sharedDependencies"`
	Workloads          []workload         `json:"workloads"`
}

// sharedDependency is docs/schema.md's SharedDependency: a target several broken workloads
// fail to reach at once.
type sharedDependency struct {
	Target    string   `json:"target"`
	Object    string   `json:"object"`
	Namespace string   `json:"namespace"`
	Failure   string   `json:"failure"`
	Workloads []string `json:"workloads"`
	Pull      bool     `json:"pull"`
}

type sourceInfo struct {
	Type    string         `json:"type"`
	Path    string         `json:"path"`
	Context string         `json:"context"`
	Server  string         `json:"server"`
	Skipped map[string]int `json:"skipped"`
}

type visibility struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Reason    string `json:"reason"`
}

type workload struct {
	Kind                string          `json:"kind"`
	Namespace           string          `json:"namespace"`
	Name                string          `json:"name"`
	Shape               string          `json:"shape"`
	Counts              counts          `json:"counts"`
	YoungestCopySeconds *int64          `json:"youngestCopySeconds"`
	OldestCopySeconds   *int64          `json:"oldestCopySeconds"`
	Headline            string          `json:"headline"`
	Cause               string          `json:"cause"`
	Argument            *argument       `json:"argument"`
	Suspects            []suspect       `json:"suspects"`
	Evidence            []evidence      `json:"evidence"`
	Revisions           *revisions      `json:"revisions"`
	SignalGaps          []signalGap     `json:"signalGaps"`
	Fix                 string          `json:"fix"`
	Timeline            []timelineEntry `json:"timeline"`
	Waived              *waiver         `json:"waived"`
}

// waiver is docs/schema.md's waived: what the kubediagnose.dev/waive annotation named, and why.
type waiver struct {
	What   string `json:"what"`
	Reason string `json:"reason"`
}

// timelineEntry is one dated moment of docs/schema.md's TimelineEntry.
type timelineEntry struct {
	At          time.Time `json:"at"`
	Kind        string    `json:"kind"`
	Message     string    `json:"message"`
	Object      string    `json:"object"`
	ServingFrom *int32    `json:"servingFrom"`
	ServingTo   *int32    `json:"servingTo"`
}

// argument is docs/schema.md's Argument: the case for the cause.
type argument struct {
	Object  string `json:"object"`
	For     string `json:"for"`
	Against string `json:"against"`
}

type counts struct {
	Declared int32 `json:"declared"`
	Existing int32 `json:"existing"`
	Serving  int32 `json:"serving"`
	Restarts int32 `json:"restarts"`
}

type suspect struct {
	Rule          string `json:"rule"`
	Object        string `json:"object"`
	Path          string `json:"path"`
	Value         string `json:"value"`
	PreviousValue string `json:"previousValue"`
	Element       string `json:"element"`
	Confidence    string `json:"confidence"`
	Reason        string `json:"reason"`
}

type evidence struct {
	Kind     string     `json:"kind"`
	Message  string     `json:"message"`
	Source   string     `json:"source"`
	Objects  []string   `json:"objects"`
	Count    int32      `json:"count"`
	LastSeen *time.Time `json:"lastSeen"`
}

type revisions struct {
	Current      string   `json:"current"`
	LastServing  string   `json:"lastServing"`
	ChangedPaths []string `json:"changedPaths"`
}

type signalGap struct {
	Object  string `json:"object"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

func decodeReport(data string) (*report, error) {
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	var r report
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("decode audit -o json: %w\n%s", err, data)
	}
	return &r, nil
}

func (r *report) find(kind, name string) *workload {
	for i := range r.Workloads {
		if r.Workloads[i].Kind == kind && r.Workloads[i].Name == name {
			return &r.Workloads[i]
		}
	}
	return nil
}

// topSuspect is the first-ranked suspect's path, or "".
func (w *workload) topSuspect() string {
	if len(w.Suspects) == 0 {
		return ""
	}
	return w.Suspects[0].Path
}

func (w *workload) String() string {
	b, _ := json.MarshalIndent(w, "", "  ")
	return string(b)
}

// audit runs `audit -o json` with a kubeconfig (and extra flags) and fails the test unless it
// exits 0 with a report.
func audit(t *testing.T, kubeconfig string, args ...string) *report {
	t.Helper()
	argv := append([]string{"audit", "-o", "json", "--kubeconfig", kubeconfig}, args...)
	res := diagnoseCmd(t, argv...)
	if res.code != 0 {
		t.Fatalf("kubectl-diagnose %s: exit %d\nstderr: %s", strings.Join(argv, " "), res.code, res.stderr)
	}
	r, err := decodeReport(res.stdout)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// verdict is what a test expects of one workload; empty fields are not checked.
type verdict struct {
	kind, name, shape, cause string
	// suspect is the top suspect's path; object is its object when not the workload itself.
	suspect, object string
}

// check returns "" when the report says what v expects, else what differs.
func (v verdict) check(r *report) string {
	kind := v.kind
	if kind == "" {
		kind = "Deployment"
	}
	w := r.find(kind, v.name)
	switch {
	case w == nil:
		return fmt.Sprintf("%s/%s is not in the report", kind, v.name)
	case v.shape != "" && w.Shape != v.shape,
		v.cause != "" && w.Cause != v.cause,
		v.suspect != "" && w.topSuspect() != v.suspect,
		v.object != "" && (len(w.Suspects) == 0 || w.Suspects[0].Object != v.object):
		return fmt.Sprintf("%s/%s: want shape %q cause %q top suspect %q %s; got:\n%s", kind, v.name, v.shape, v.cause, v.object, v.suspect, w)
	}
	return ""
}

// eventuallyAudit runs audit until every verdict holds, and fails with the last differences
// after timeout. The simulated cluster converges in seconds, but not at once.
func eventuallyAudit(t *testing.T, timeout time.Duration, kubeconfig string, args []string, want ...verdict) *report {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		r := audit(t, kubeconfig, args...)
		var diffs []string
		for _, v := range want {
			if d := v.check(r); d != "" {
				diffs = append(diffs, d)
			}
		}
		if len(diffs) == 0 {
			return r
		}
		if time.Now().After(deadline) {
			saveDump(t, kubeconfig, args)
			t.Fatalf("after %v the audit still differs:\n%s", timeout, strings.Join(diffs, "\n"))
		}
		time.Sleep(2 * time.Second)
	}
}

// eventually polls cond until it returns "" or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		msg := cond()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", timeout, msg)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// artifactsEnv names a directory where a failing test leaves a dump of its namespace, so the
// verdict can be replayed offline with `kubectl-diagnose audit --dump`.
const artifactsEnv = "KUBEDIAGNOSE_E2E_ARTIFACTS"

func saveDump(t *testing.T, kubeconfig string, args []string) {
	t.Helper()
	dir := os.Getenv(artifactsEnv)
	if dir == "" {
		t.Logf("set %s to keep a dump of the namespace of a failing test", artifactsEnv)
		return
	}
	out := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
	argv := append([]string{"dump", "--force", "--kubeconfig", kubeconfig, "--output-directory", out}, args...)
	if res := diagnoseCmd(t, argv...); res.code != 0 {
		t.Logf("dump for the artifacts: exit %d: %s", res.code, res.stderr)
		return
	}
	t.Logf("dump of the failing state: %s", out)
}

package scalegen_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/controlplane"
	"github.com/kubediagnose/kubectl-diagnose/test/internal/scalegen"
)

// report is the part of `audit -o json` this test compares.
type report struct {
	Workloads []struct {
		Name     string `json:"name"`
		Shape    string `json:"shape"`
		Cause    string `json:"cause"`
		Counts   struct{ Declared, Existing, Serving int32 }
		Suspects []struct {
			Rule   string `json:"rule"`
			Object string `json:"object"`
			Path   string `json:"path"`
		} `json:"suspects"`
	} `json:"workloads"`
}

// wantShape is what each fault must be diagnosed as.
var wantShape = map[scalegen.Fault]string{
	scalegen.FaultNone:     "healthy",
	scalegen.FaultImage:    "never-starts",
	scalegen.FaultCrash:    "starts-and-dies",
	scalegen.FaultUpstream: "live-but-idle",
	scalegen.FaultSelector: "live-but-idle",
}

// TestLoadAndDumpDiagnoseAlike loads a small namespace (every fault, both revision cases) on a
// real control plane, audits it live with the built binary, writes the same picture with
// WriteDump and audits that: each workload takes its fault's shape, and the dump gives the same
// verdicts, causes and first suspects as the live namespace.
func TestLoadAndDumpDiagnoseAlike(t *testing.T) {
	binary := make(chan string, 1)
	go func() { binary <- build(t) }()
	cp := controlplane.StartT(t, controlplane.Options{ControllerManagerArgs: scalegen.ControllerManagerArgs})
	opts := scalegen.Options{
		Namespace: "scalegen-test", Deployments: 8, PodsPer: 2, BrokenFraction: 0.5,
		ProgressDeadlineSeconds: 2, Logf: t.Logf,
	}
	plan := scalegen.Plan(opts)
	faults := map[scalegen.Fault]int{}
	revised := map[scalegen.Fault]bool{}
	for _, w := range plan {
		faults[w.Fault]++
		revised[w.Fault] = revised[w.Fault] || w.Revisions == 2
	}
	if len(faults) != 5 || !revised[scalegen.FaultNone] || !revised[scalegen.FaultImage] || !revised[scalegen.FaultCrash] {
		t.Fatalf("plan does not cover every fault and both revision cases: %+v", plan)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := scalegen.Load(ctx, cp.AdminConfig(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, controlplane.AdminUser, opts.Namespace); err != nil {
		t.Fatal(err)
	}
	settled := time.Now()
	bin := <-binary
	dir := filepath.Join(t.TempDir(), "dump")
	if err := scalegen.WriteDump(dir, opts); err != nil {
		t.Fatal(err)
	}
	offline := audit(t, bin, "audit", "--dump", dir, "-o", "json")
	// A copy Ready for less than 30 s may not be behind its Service's endpoints yet, so the
	// engine calls the selector fault progressing until then (diagnose's endpointGrace); the
	// live audit waits that out.
	time.Sleep(time.Until(settled.Add(31 * time.Second)))
	live := audit(t, bin, "--kubeconfig", kubeconfig, "audit", "-n", opts.Namespace, "-o", "json")

	for _, w := range plan {
		lw, ok := live[w.Name]
		if !ok {
			t.Errorf("%s: not in the live report", w.Name)
			continue
		}
		if lw.Shape != wantShape[w.Fault] {
			t.Errorf("%s (fault %q, %d revisions): live shape %s, want %s", w.Name, w.Fault, w.Revisions, lw.Shape, wantShape[w.Fault])
		}
		if w.Fault == scalegen.FaultCrash {
			// The program says DATABASE_URL is not set: the first revision never had it in
			// its env, the second took it out.
			want := "env-var-unset Deployment/" + w.Name + " spec.template.spec.containers[0].env"
			if w.Revisions == 2 {
				want += "[2]"
			}
			if got := lw.Rule + " " + lw.Suspect; got != want || lw.Cause != "spec" {
				t.Errorf("%s (%d revisions): first suspect %q, cause %s; want %q, spec", w.Name, w.Revisions, got, lw.Cause, want)
			}
		}
		ow, ok := offline[w.Name]
		if !ok {
			t.Errorf("%s: not in the dump's report", w.Name)
			continue
		}
		if ow != lw {
			t.Errorf("%s: dump says %+v, live says %+v", w.Name, ow, lw)
		}
	}
	if len(offline) != len(plan) || len(live) != len(plan) {
		t.Errorf("reports hold %d (live) and %d (dump) workloads, want %d", len(live), len(offline), len(plan))
	}
}

// verdict is one workload's verdict in comparable form.
type verdict struct {
	Shape, Cause, Suspect   string
	Rule                    string
	Declared, Existing, Srv int32
}

func audit(t *testing.T, bin string, args ...string) map[string]verdict {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "KUBECONFIG=/nonexistent")
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, args, err, stderr.String())
	}
	var r report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("decode %v: %v\n%s", args, err, stdout.String())
	}
	out := map[string]verdict{}
	for _, w := range r.Workloads {
		v := verdict{Shape: w.Shape, Cause: w.Cause, Declared: w.Counts.Declared, Existing: w.Counts.Existing, Srv: w.Counts.Serving}
		if len(w.Suspects) > 0 {
			v.Suspect = w.Suspects[0].Object + " " + w.Suspects[0].Path
			v.Rule = w.Suspects[0].Rule
		}
		out[w.Name] = v
	}
	return out
}

// build compiles kubectl-diagnose from the repository root.
func build(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	out := filepath.Join(t.TempDir(), "kubectl-diagnose")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("go build kubectl-diagnose: %v\n%s", err, b)
		return ""
	}
	return out
}

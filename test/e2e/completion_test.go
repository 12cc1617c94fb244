package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestKubectlCompletesThePlugin runs the real kubectl's completion of `kubectl diagnose ...`,
// which finds kubectl_complete-diagnose on PATH, against the real API server: namespaces and
// workload names come from the cluster.
func TestKubectlCompletesThePlugin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, world())
	e.create(t, deployment("pull", missingImage, 0, nil), false)
	dir := filepath.Dir(binary)
	_, file, _, _ := runtime.Caller(0)
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "kubectl_complete-diagnose"), "./cmd/kubectl_complete-diagnose")
	build.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build kubectl_complete-diagnose: %v\n%s", err, b)
	}

	complete := func(words ...string) []string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(cp.AssetsDir(), "kubectl"), append([]string{"__complete", "diagnose"}, words...)...)
		// kubectl looks up both the plugin and its completion executable on PATH.
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+cp.AdminKubeconfig())
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("kubectl __complete diagnose %q: %v\n%s", words, err, stderr.String())
		}
		return strings.Split(strings.TrimSpace(stdout.String()), "\n")
	}
	has := func(lines []string, want string) bool {
		for _, l := range lines {
			if w, _, _ := strings.Cut(l, "\t"); w == want {
				return true
			}
		}
		return false
	}

	if got := complete(""); !has(got, "audit") || !has(got, "explain") {
		t.Errorf("kubectl diagnose <TAB> = %q, want the subcommands", got)
	}
	if got := complete("audit", "-n", ""); !has(got, e.ns) || !has(got, "kube-system") {
		t.Errorf("kubectl diagnose audit -n <TAB> = %q, want the cluster's namespaces with %s", got, e.ns)
	}
	if got := complete("explain", "-n", e.ns, "deploy/"); !has(got, "deploy/pull") || got[len(got)-1] != ":4" {
		t.Errorf("kubectl diagnose explain -n %s deploy/<TAB> = %q, want deploy/pull", e.ns, got)
	}
	if got := complete("audit", "--fail-on", ""); !has(got, "broken") || !has(got, "never-starts") {
		t.Errorf("kubectl diagnose audit --fail-on <TAB> = %q", got)
	}
}

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
// which finds kubectl_complete-diagnose, the script the release archives and `make install` put
// beside the plugin, on PATH, against the real API server: namespaces and workload names come
// from the cluster.
func TestKubectlCompletesThePlugin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, world())
	e.create(t, deployment("pull", missingImage, 0, nil), false)
	e.create(t, ingester("ingest", 1, reachableIntake), false)
	e.waitPods(t, "ingest", 1, "running", running)
	_, file, _, _ := runtime.Caller(0)
	script, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "cmd", "kubectl_complete-diagnose"))
	if err != nil {
		t.Fatal(err)
	}
	// The plugin and the script side by side, as an archive unpacks them; kubectl itself from
	// the assets, so that it is the only kubectl on PATH.
	dir := t.TempDir()
	for name, src := range map[string]string{"kubectl-diagnose": binary, "kubectl": filepath.Join(cp.AssetsDir(), "kubectl")} {
		if err := os.Symlink(src, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "kubectl_complete-diagnose"), script, 0o755); err != nil {
		t.Fatal(err)
	}

	complete := func(words ...string) []string {
		t.Helper()
		return kubectlComplete(t, dir, words...)
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

	if got := complete("explain", "-n", e.ns, "pod/"); got[len(got)-1] != ":4" || len(got) != 2 || !strings.HasPrefix(got[0], "pod/ingest-") {
		t.Errorf("kubectl diagnose explain -n %s pod/<TAB> = %q, want the pod of deploy/ingest", e.ns, got)
	}

	// A script linked elsewhere, away from the plugin, finds the plugin on PATH.
	elsewhere := t.TempDir()
	if err := os.Symlink(filepath.Join(dir, "kubectl_complete-diagnose"), filepath.Join(elsewhere, "kubectl_complete-diagnose")); err != nil {
		t.Fatal(err)
	}
	if got := kubectlComplete(t, elsewhere+string(os.PathListSeparator)+dir, "audit", "--fail-on", ""); !has(got, "broken") {
		t.Errorf("through a link away from the plugin: kubectl diagnose audit --fail-on <TAB> = %q", got)
	}
}

// kubectlComplete runs the real kubectl's completion of `kubectl diagnose words...` with path as
// PATH (kubectl looks up both the plugin and its completion executable there), and returns its
// lines.
func kubectlComplete(t *testing.T, path string, words ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(cp.AssetsDir(), "kubectl"), append([]string{"__complete", "diagnose"}, words...)...)
	cmd.Env = append(os.Environ(), "PATH="+path+string(os.PathListSeparator)+"/usr/bin:/bin", "KUBECONFIG="+cp.AdminKubeconfig())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl __complete diagnose %q: %v\n%s", words, err, stderr.String())
	}
	return strings.Split(strings.TrimSpace(stdout.String()), "\n")
}

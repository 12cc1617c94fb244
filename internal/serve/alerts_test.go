package serve

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// promtool is Debian's prometheus package's rule checker, or $PROMTOOL_BINARY.
func promtool(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("PROMTOOL_BINARY")
	if bin == "" {
		bin = "/usr/bin/promtool"
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("promtool: %v; install Debian's prometheus package (apt-get install prometheus) or set PROMTOOL_BINARY", err)
	}
	return bin
}

// TestAlertRules checks deploy/alerts.yaml with promtool and runs its unit tests
// (testdata/alerts_test.yaml): the alert fires for a workload at full count with nothing
// serving for 5 minutes, and not for one short of its count, scaled to zero, or back serving.
func TestAlertRules(t *testing.T) {
	bin := promtool(t)
	rules := filepath.Join("..", "..", "deploy", "alerts.yaml")
	if out, err := exec.Command(bin, "check", "rules", rules).CombinedOutput(); err != nil || !strings.Contains(string(out), "SUCCESS: 2 rules found") {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "test", "rules", "alerts_test.yaml")
	cmd.Dir = "testdata"
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "SUCCESS") {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
}

// TestAlertRulesFailABrokenRule makes sure the unit tests can fail: the same rule that fires
// at 2 minutes instead of 5 fails them.
func TestAlertRulesFailABrokenRule(t *testing.T) {
	bin := promtool(t)
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(data), "for: 5m") != 1 {
		t.Fatal("deploy/alerts.yaml should hold FullCountZeroServing's `for: 5m` once")
	}
	dir := t.TempDir()
	broken := strings.Replace(string(data), "for: 5m", "for: 2m", 1)
	if err := os.WriteFile(filepath.Join(dir, "alerts.yaml"), []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join("testdata", "alerts_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tests = []byte(strings.Replace(string(tests), "../../../deploy/alerts.yaml", "alerts.yaml", 1))
	if err := os.WriteFile(filepath.Join(dir, "alerts_test.yaml"), tests, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "test", "rules", "alerts_test.yaml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("promtool test rules passed a rule that fires after 2 minutes:\n%s", out)
	}
}

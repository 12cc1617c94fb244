package snapshot

import (
	"os/exec"
	"strings"
	"testing"
)

// TestModelDoesNotDependOnTheClient keeps the snapshot model free of client-go: sources read
// clusters, the model only holds what they read, so a dump reader or the engine never pulls in
// a client. The dependency list comes from the go command, so an import through another package
// counts too.
func TestModelDoesNotDependOnTheClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var bad []string
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "k8s.io/client-go" || strings.HasPrefix(pkg, "k8s.io/client-go/") {
			bad = append(bad, pkg)
		}
	}
	if len(bad) > 0 {
		t.Errorf("internal/snapshot depends on %d packages of k8s.io/client-go, among them %s", len(bad), strings.Join(bad[:min(len(bad), 5)], ", "))
	}
}

package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAuditWatchExitsWhenARowMatches runs `audit -w --fail-on never-starts -l ...` against the
// real API server: the first table holds the healthy workload, and the process exits 3 as soon as
// a matching workload that never starts appears, with its row printed; one that the selector does
// not pick never shows.
func TestAuditWatchExitsWhenARowMatches(t *testing.T) {
	t.Parallel()
	e := newEnv(t, world())
	web := ingester("web", 1, reachableIntake)
	web.Labels["tier"] = "web"
	e.create(t, web, false)
	e.waitServing(t, "web", 1)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "audit", "-w", "-n", e.ns, "-l", "tier=web", "--fail-on", "never-starts", "-o", "name")
	// The process writes while the test reads.
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cp.AdminKubeconfig())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() string {
		if !strings.Contains(stdout.String(), "deployment.apps/web\n") {
			return "the first table does not list web yet: " + stdout.String()
		}
		return ""
	})
	other := deployment("pull-other", missingImage, 1, nil)
	other.Labels["tier"] = "db"
	e.create(t, other, false)
	pull := deployment("pull", missingImage, 1, nil)
	pull.Labels["tier"] = "web"
	e.create(t, pull, false)

	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("audit -w ended with %v, want exit 3 when pull never starts\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	if !strings.HasSuffix(stdout.String(), "deployment.apps/pull\n") || strings.Contains(stdout.String(), "pull-other") {
		t.Errorf("stdout %q: want web, then pull last, and never pull-other (tier=db)", stdout.String())
	}
	if !strings.Contains(stderr.String(), "1 workload matches --fail-on: never-starts 1") {
		t.Errorf("stderr %q does not say what matched", stderr.String())
	}
}

// lockedBuffer is a bytes.Buffer safe to write from exec's copying goroutine and read at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

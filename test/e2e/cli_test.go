package e2e

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kubeconfigFor writes a kubeconfig whose only cluster is server.
func kubeconfigFor(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: gone
  cluster: {server: "` + server + `", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: e2e}
contexts:
- name: gone
  context: {cluster: gone, user: u, namespace: default}
current-context: gone
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestUnreachableServerIsOneLineAndExit1(t *testing.T) {
	t.Parallel()
	// A listener that accepts and never answers: the TLS handshake hangs until the timeout.
	hang, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 16)
	t.Cleanup(func() {
		_ = hang.Close()
		for {
			select {
			case c := <-held:
				_ = c.Close()
			default:
				return
			}
		}
	})
	go func() {
		for {
			c, err := hang.Accept()
			if err != nil {
				return
			}
			select {
			case held <- c:
			default:
				_ = c.Close()
			}
		}
	}()
	// A port nothing listens on: refused at once.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	_ = closed.Close()

	tests := []struct {
		name    string
		server  string
		args    []string
		within  time.Duration
		message string
	}{
		{"connection refused", "https://" + refused, []string{"--request-timeout", "5s"}, 5 * time.Second, "connection refused"},
		{"no answer within --request-timeout", "https://" + hang.Addr().String(), []string{"--request-timeout", "2s"}, 2 * time.Second, "cannot reach the API server at " + hang.Addr().String()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"audit", "-o", "json", "--kubeconfig", kubeconfigFor(t, tt.server)}, tt.args...)
			res := diagnoseCmd(t, args...)
			if res.code != 1 {
				t.Errorf("exit %d, want 1; stderr %q", res.code, res.stderr)
			}
			lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "error: ") || !strings.Contains(lines[0], tt.message) {
				t.Errorf("stderr = %q, want one error line containing %q", res.stderr, tt.message)
			}
			if res.stdout != "" {
				t.Errorf("stdout = %q, want nothing: no partial report", res.stdout)
			}
			// The binary's start-up is included; a second of slack covers it on a busy machine.
			if res.took > tt.within+time.Second {
				t.Errorf("took %v, want within %v", res.took, tt.within)
			}
		})
	}
}

func TestBadKubeconfigIsOneLineAndExit1(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: Config\ncurrent-context: missing\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := diagnoseCmd(t, "audit", "--kubeconfig", path)
	lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
	if res.code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], "error: ") {
		t.Errorf("exit %d stderr %q; want exit 1 with one error line", res.code, res.stderr)
	}
}

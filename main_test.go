package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binary is the kubectl-diagnose under test: $KUBEDIAGNOSE_BIN (to run these tests against
// another build), else this module built once.
func binary(t testing.TB) string {
	t.Helper()
	if b := os.Getenv("KUBEDIAGNOSE_BIN"); b != "" {
		return b
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kubectl-diagnose-main-test")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "kubectl-diagnose")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// limited runs the binary under a 4 GB address-space limit (ulimit -v), so that a read that
// grows without bound is killed early instead of taking the machine's memory.
func limited(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return exec.Command("bash", "-c", "ulimit -v 4000000 && exec '"+binary(t)+"' "+strings.Join(quoted, " "))
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestUnboundedInputsEndWithOneLine feeds inputs that never end or never parse; each must end
// with exit 1 and one line on stderr, within the memory limit.
func TestUnboundedInputsEndWithOneLine(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		stdin func() io.Reader
		want  string
	}{
		{name: "/dev/zero", args: []string{"audit", "--dump", "/dev/zero"}, want: "binary data"},
		{name: "/dev/urandom", args: []string{"audit", "--dump", "/dev/urandom"}, want: "not JSON, YAML"},
		{
			name: "endless text on stdin", args: []string{"audit", "--dump", "-"}, stdin: func() io.Reader { return endless("y\n") },
			want: "object at stdin:0 is larger than 64 MiB; --max-object-size raises the limit",
		},
		{
			name: "endless JSON string on stdin", args: []string{"audit", "--dump", "-", "--max-object-size", "8"},
			stdin: func() io.Reader {
				return io.MultiReader(strings.NewReader(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"`), endless("a"))
			},
			want: "object at stdin:0 is larger than 8 MiB; --max-object-size raises the limit",
		},
		{
			name: "endless list of pods on stdin", args: []string{"audit", "--dump", "-", "--max-dump-size", "8"},
			stdin: func() io.Reader {
				return io.MultiReader(strings.NewReader(`{"apiVersion":"v1","kind":"List","items":[`), endless(podJSON+","))
			},
			want: "the dump is larger than 8 MiB (reached in stdin); --max-dump-size raises the limit",
		},
		{
			// A log block that never ends passes through its bounded tail until the budget ends the read.
			name: "endless log block on stdin", args: []string{"audit", "--dump", "-", "--max-dump-size", "64"},
			stdin: func() io.Reader {
				return io.MultiReader(strings.NewReader(podJSON+"\n==== START logs for container c of pod n/p ====\n"), endless("GET /healthz 200\n"))
			},
			want: "the dump is larger than 64 MiB (reached in stdin); --max-dump-size raises the limit",
		},
		{
			// 1 MB of YAML whose 3,000 aliases of a 1 MiB anchor expand to 3 GB of JSON.
			name: "YAML aliases on stdin", args: []string{"audit", "--dump", "-"},
			stdin: func() io.Reader {
				return strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  a: &a \"" +
					strings.Repeat("x", 1<<20) + "\"\n  list:\n" + strings.Repeat("  - *a\n", 3000))
			},
			want: `read dump from stdin: YAML document at line 1: line 71: aliases expand the document past 64 MiB`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := limited(t, tt.args...)
			if tt.stdin != nil {
				c.Stdin = tt.stdin()
			}
			var stderr bytes.Buffer
			c.Stderr = &stderr
			start := time.Now()
			err := c.Run()
			msg := stderr.String()
			t.Logf("exit %d after %s: %s", exitCode(err), time.Since(start).Round(time.Millisecond), strings.TrimSpace(msg))
			if exitCode(err) != 1 {
				t.Errorf("exit code %d, want 1", exitCode(err))
			}
			if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "error: ") || !strings.Contains(msg, tt.want) {
				t.Errorf("stderr %q, want one line with %q", msg, tt.want)
			}
		})
	}
}

const podJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n","uid":"u1","resourceVersion":"1"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`

// endless repeats s forever.
func endless(s string) io.Reader { return &repeater{unit: []byte(s)} }

type repeater struct {
	unit []byte
	off  int
}

func (r *repeater) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.unit[r.off]
		r.off = (r.off + 1) % len(r.unit)
	}
	return len(p), nil
}

// TestSignalDuringSlowStdin interrupts a read from a pipe that delivers an object now and then
// and never ends: the process must exit with 128 plus the signal's number, quickly.
func TestSignalDuringSlowStdin(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			c := exec.Command(binary(t), "audit", "--dump", "-")
			w, err := c.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			c.Stderr = &stderr
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			go func() {
				defer func() { _ = w.Close() }()
				if _, err := io.WriteString(w, `{"apiVersion":"v1","kind":"List","items":[`); err != nil {
					return
				}
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
					}
					if _, err := fmt.Fprintf(w, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p%d","namespace":"n"}},`, i); err != nil {
						return
					}
				}
			}()
			defer close(stop)
			time.Sleep(500 * time.Millisecond)
			sent := time.Now()
			if err := c.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			waited := make(chan error, 1)
			go func() { waited <- c.Wait() }()
			select {
			case err := <-waited:
				latency := time.Since(sent)
				t.Logf("exit %d %s after %s; stderr %q", exitCode(err), sig, latency.Round(time.Millisecond), stderr.String())
				if want := 128 + int(sig); exitCode(err) != want {
					t.Errorf("exit code %d, want %d", exitCode(err), want)
				}
				// 200 ms is the goal; the bound is generous for a loaded machine.
				if latency > 2*time.Second {
					t.Errorf("exited %s after the signal", latency)
				}
				if strings.Count(stderr.String(), "\n") != 1 {
					t.Errorf("stderr %q, want one line", stderr.String())
				}
			case <-time.After(10 * time.Second):
				_ = c.Process.Kill()
				t.Logf("killed: %v", <-waited)
				t.Fatalf("still running 10 s after %s", sig)
			}
		})
	}
}

// TestSignalDuringLargeAudit interrupts an audit of a 20,000-pod dump; whether the signal lands
// in the read or in the diagnosis, the process exits 130 quickly, never 0.
func TestSignalDuringLargeAudit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pods.json")
	var f strings.Builder
	f.WriteString(`{"apiVersion":"v1","kind":"List","items":[`)
	for i := 0; i < 20000; i++ {
		if i > 0 {
			f.WriteString(",")
		}
		d := i / 10
		if i%10 == 0 {
			fmt.Fprintf(&f, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d%d","namespace":"n","uid":"d%d","creationTimestamp":"2026-11-24T10:00:00Z"},"spec":{"replicas":10,"selector":{"matchLabels":{"app":"d%d"}},"template":{"metadata":{"labels":{"app":"d%d"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}},"status":{"replicas":10}},`, d, d, d, d)
		}
		fmt.Fprintf(&f, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"d%d-%d","namespace":"n","labels":{"app":"d%d"},"creationTimestamp":"2026-11-24T10:00:00Z"},"spec":{"containers":[{"name":"c","image":"busybox"}]},"status":{"phase":"Pending"}}`, d, i, d)
	}
	f.WriteString("]}\n")
	if err := os.WriteFile(path, []byte(f.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c := exec.Command(binary(t), "audit", "--dump", path, "-o", "json")
	var stderr bytes.Buffer
	c.Stderr, c.Stdout = &stderr, io.Discard
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- c.Wait() }()
	// The signal goes in as soon as the dump is open: the handler is installed before any
	// input is opened, and a fixed delay would let a fast machine finish first.
	if err := waitOpened(c.Process.Pid, path, waited); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	if err := c.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waited:
		latency := time.Since(sent)
		t.Logf("exit %d after %s; stderr %q", exitCode(err), latency.Round(time.Millisecond), stderr.String())
		if exitCode(err) != 130 {
			t.Errorf("exit code %d, want 130", exitCode(err))
		}
		if latency > 2*time.Second {
			t.Errorf("exited %s after SIGINT", latency)
		}
	case <-time.After(60 * time.Second):
		_ = c.Process.Kill()
		t.Logf("killed: %v", <-waited)
		t.Fatal("still running 60 s after SIGINT")
	}
}

// waitOpened waits until process pid has path open, as /proc lists its descriptors (after a
// fixed 700 ms where there is no /proc). It fails if the process exits first.
func waitOpened(pid int, path string, exited <-chan error) error {
	fds := fmt.Sprintf("/proc/%d/fd", pid)
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		time.Sleep(700 * time.Millisecond)
		return nil
	}
	deadline := time.After(30 * time.Second)
	for {
		entries, _ := os.ReadDir(fds)
		for _, e := range entries {
			if target, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && target == path {
				return nil
			}
		}
		select {
		case err := <-exited:
			if err == nil {
				return fmt.Errorf("exited with status 0 before it was seen reading %s", path)
			}
			return fmt.Errorf("exited before it was seen reading %s: %w", path, err)
		case <-deadline:
			return fmt.Errorf("never opened %s in 30 s", path)
		case <-time.After(time.Millisecond):
		}
	}
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

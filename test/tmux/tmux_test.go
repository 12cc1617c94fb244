package tmux

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// term is one tmux server on a private socket with one pane running the binary.
type term struct {
	t      *testing.T
	socket string
	dir    string // holds the program's stderr and the exit status its shell records
}

func (tm *term) tmux(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tm.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is the visible pane as text.
func (tm *term) screen() string { return tm.tmux("capture-pane", "-p", "-t", "diag") }

// waitFor polls the screen until it contains every text, and returns it.
func (tm *term) waitFor(texts ...string) string {
	tm.t.Helper()
	return tm.waitForWithin(20*time.Second, texts...)
}

// waitForWithin is waitFor with its own patience, for what a cluster decides the pace of.
func (tm *term) waitForWithin(d time.Duration, texts ...string) string {
	tm.t.Helper()
	deadline := time.Now().Add(d)
	var s string
	for time.Now().Before(deadline) {
		s = tm.screen()
		ok := true
		for _, x := range texts {
			ok = ok && strings.Contains(s, x)
		}
		if ok {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	tm.t.Fatalf("screen never showed %q; last screen:\n%s", texts, s)
	return ""
}

// waitMatch polls the screen until re matches it.
func (tm *term) waitMatch(re *regexp.Regexp, what string) string {
	tm.t.Helper()
	return tm.waitMatchWithin(20*time.Second, re, what)
}

// waitMatchWithin is waitMatch with its own patience.
func (tm *term) waitMatchWithin(d time.Duration, re *regexp.Regexp, what string) string {
	tm.t.Helper()
	deadline := time.Now().Add(d)
	var s string
	for time.Now().Before(deadline) {
		if s = tm.screen(); re.MatchString(s) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	tm.t.Fatalf("screen never showed %s; last screen:\n%s", what, s)
	return ""
}

// waitExit waits for the program to end and returns its exit status as the shell saw it:
// a number, 128+N for a death by signal N.
//
// The shell records it because tmux 3.3a, Debian 12's, reports a death by signal with neither
// an exit status nor a signal name.
func (tm *term) waitExit() string {
	tm.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(filepath.Join(tm.dir, "status")); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			dead := strings.TrimSpace(tm.tmux("display-message", "-p", "-t", "diag", "#{pane_dead}"))
			stderr, _ := os.ReadFile(filepath.Join(tm.dir, "stderr"))
			tm.t.Fatalf("no exit status recorded (pane dead: %s); stderr:\n%s\nscreen:\n%s", dead, stderr, tm.screen())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// quietStderr fails the test if the program wrote to stderr, which a terminal would draw over
// the console.
func (tm *term) quietStderr() {
	tm.t.Helper()
	if b, err := os.ReadFile(filepath.Join(tm.dir, "stderr")); err != nil || len(b) > 0 {
		tm.t.Errorf("the console wrote to stderr (%v):\n%s", err, b)
	}
}

func (tm *term) keys(keys ...string) {
	tm.t.Helper()
	for _, k := range keys {
		tm.tmux("send-keys", "-t", "diag", k)
		// One key at a time, as a person types: each frame is drawn before the next key.
		time.Sleep(150 * time.Millisecond)
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// build compiles the binary from the repository root, as a user would, once for all tests.
func build(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		root, err := filepath.Abs("../..")
		if err != nil {
			buildErr = err
			return
		}
		dir, err := os.MkdirTemp("", "kubectl-diagnose-tmux-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "kubectl-diagnose")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// start runs argv in a w×h tmux pane that stays after the program exits, so its exit status
// and the restored screen can be read.
func start(t *testing.T, w, h int, argv ...string) *term {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is required for the real-terminal test (apt-get install tmux; .ci/run does): %v", err)
	}
	tm := &term{t: t, socket: fmt.Sprintf("kubectl-diagnose-test-%d-%d", os.Getpid(), time.Now().UnixNano()), dir: t.TempDir()}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", tm.socket, "kill-server").Run() })
	// stderr goes to a file so a failure can show what the program said; the console draws on stdout.
	// The pane stands for a person's terminal, not the CI runner it is started from: termenv
	// takes any CI variable to mean "no terminal" and would draw the console without colour
	// and in ASCII. tmux sets TERM from its default-terminal option, so TERM is set here too.
	script := fmt.Sprintf("unset CI CLICOLOR CLICOLOR_FORCE NO_COLOR; TERM=xterm-256color; export TERM; %s 2>%s; echo $? >%s",
		strings.Join(quote(argv), " "),
		quote([]string{filepath.Join(tm.dir, "stderr")})[0], quote([]string{filepath.Join(tm.dir, "status")})[0])
	tm.tmux("new-session", "-d", "-s", "diag", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h),
		script)
	tm.tmux("set-option", "-t", "diag", "remain-on-exit", "on")
	return tm
}

func quote(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return out
}

// selectedRow returns the workload name on the row marked with the cursor.
func selectedRow(t *testing.T, s string) string {
	t.Helper()
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "›") {
			f := strings.Fields(l)
			if len(f) >= 3 {
				return workloadName(f[2])
			}
		}
	}
	t.Fatalf("no selected row on screen:\n%s", s)
	return ""
}

var copiesCell = regexp.MustCompile(`telemetry-ingester\s+5/5\s+0\s`)

func TestDemoInARealTerminal(t *testing.T) {
	bin := build(t)
	tm := start(t, 100, 30, bin, "--demo")

	s := tm.waitFor("kubectl-diagnose", "demo", "telemetry-ingester")
	for _, want := range []string{"ns telemetry", "SHAPE", "COPIES", "SERVING", "SUSPECT"} {
		if !strings.Contains(s, want) {
			t.Errorf("workloads screen lacks %q:\n%s", want, s)
		}
	}
	// The story's core: full count, zero serving.
	if !copiesCell.MatchString(s) {
		t.Errorf("ingester row does not read 5/5 copies, 0 serving:\n%s", s)
	}
	first := selectedRow(t, s)

	tm.keys("Down")
	// Under load the frame after a key can lag the key; give it time before judging.
	second := first
	for deadline := time.Now().Add(5 * time.Second); second == first && time.Now().Before(deadline); {
		s = tm.screen()
		second = selectedRow(t, s)
		if second == first {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if second == first {
		t.Fatalf("Down did not move the selection from %s:\n%s", first, s)
	}

	tm.keys("Enter")
	s = tm.waitFor("1 Diagnosis", "2 Copies", "5 Spec", second)
	if !strings.Contains(s, "copies ") || !strings.Contains(s, "serving") {
		t.Errorf("diagnosis screen lacks the copies strip:\n%s", s)
	}

	tm.keys("Tab")
	tm.waitFor("PHASE", "RESTARTS", "NODE")

	tm.keys("?")
	tm.waitFor("Move", "Workloads", "Diagnosis", "General", "quit")

	tm.keys("Escape")
	tm.waitFor("PHASE")

	tm.keys("q")
	if st := tm.waitExit(); st != "0" {
		t.Errorf("exit status %s after q, want 0", st)
	}
	tm.quietStderr()
	// The console ran in the alternate screen; leaving it restores what was there.
	if s := tm.screen(); strings.Contains(s, "SERVING") || strings.Contains(s, "1 Diagnosis") {
		t.Errorf("the terminal was not restored after q:\n%s", s)
	}
}

func TestDemoIngesterDiagnosis(t *testing.T) {
	bin := build(t)
	tm := start(t, 80, 24, bin, "--demo")
	tm.waitFor("telemetry-ingester")
	tm.keys("/", "i", "n", "g", "e", "s", "t", "e", "r", "Enter", "Enter")
	s := tm.waitFor("1 Diagnosis", "telemetry-ingester")
	for _, want := range []string{"5 of 5 copies exist", "0 serving", "INGEST_ENDPOINT"} {
		if !strings.Contains(s, want) {
			t.Errorf("ingester diagnosis lacks %q:\n%s", want, s)
		}
	}
	tm.keys("5")
	// The tab bar shows "5 Spec" on every tab, so wait for the tab's own content.
	tm.waitMatch(regexp.MustCompile(`▶\s*\d+\s+value: telemetry-intake\.internal:9443`),
		"the spec tab highlighting the INGEST_ENDPOINT value")
	tm.keys("C-c")
	if st := tm.waitExit(); st != "0" {
		t.Errorf("exit status %s after ctrl+c, want 0", st)
	}
	tm.quietStderr()
}

func TestTinyTerminal(t *testing.T) {
	bin := build(t)
	tm := start(t, 40, 12, bin, "--demo")
	s := tm.waitFor("kubectl-diagnose", "COPIES")
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if n := len([]rune(l)); n > 40 {
			t.Errorf("line wider than the terminal: %q", l)
		}
	}
	tm.keys("Enter", "Tab", "Tab", "Tab", "Tab", "?", "Escape", "Escape", "q")
	if st := tm.waitExit(); st != "0" {
		t.Errorf("exit status %s at 40x12 (a panic exits 2)", st)
	}
	tm.quietStderr()
}

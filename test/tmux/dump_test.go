package tmux

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/scalegen"
)

// heldDump writes a scale dump of n Deployments whose pods.json is a named pipe: the console
// reads the workloads' lists, the nodes and the events, then waits at the pods until feed
// writes them. What the screen shows meanwhile is what a person sees while a far larger dump's
// pods are read, with no race against the clock.
func heldDump(t *testing.T, n int) (dir string, feed func()) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "dump")
	if err := scalegen.WriteDump(dir, scalegen.Options{Deployments: n}); err != nil {
		t.Fatal(err)
	}
	pods := filepath.Join(dir, "scale", "pods.json")
	data, err := os.ReadFile(pods)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(pods); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(pods, 0o600); err != nil {
		t.Fatal(err)
	}
	fed := make(chan error, 1)
	feed = func() {
		go func() {
			f, err := os.OpenFile(pods, os.O_WRONLY, 0)
			if err != nil {
				fed <- err
				return
			}
			_, err = f.Write(data)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			fed <- err
		}()
	}
	t.Cleanup(func() {
		select {
		case err := <-fed:
			if err != nil {
				t.Errorf("feed the pods: %v", err)
			}
		default:
			// Never fed, or the console quit before reading them: a writer opened now would
			// wait for a reader forever, and nothing waits for it.
			if f, err := os.OpenFile(pods, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				_ = f.Close()
			}
		}
	})
	return dir, feed
}

var (
	readingLine = regexp.MustCompile(`reading \w+… [\d,]+ · [\d,]+ objects of \d+ kinds · \d+s`)
	unshapedRow = regexp.MustCompile(`(?m)^\S*\s+reading…\s+deploy/accounts-0010\s+10/10\s+…`)
	shapedRow   = regexp.MustCompile(`(?m)^\S*\s+(healthy|never-starts|starts-and-dies|live-but-idle|progressing|unknown)\s+deploy/`)
)

// On a dump the console lists the workloads while the pods are still to be read, with the
// read's progress in the header, takes keys meanwhile, and fills the shapes in when the rest
// is read.
func TestDumpConsoleListsTheWorkloadsBeforeThePodsAreRead(t *testing.T) {
	bin := build(t)
	dir, feed := heldDump(t, 300)
	tm := start(t, 180, 40, bin, "--dump", dir)

	s := tm.waitForWithin(60*time.Second, "300 workloads listed · shapes follow their copies")
	if !readingLine.MatchString(s) {
		t.Errorf("no progress line over the rows:\n%s", s)
	}
	if !unshapedRow.MatchString(s) || shapedRow.MatchString(s) {
		t.Errorf("the rows should be listed without their shapes:\n%s", s)
	}
	// The read goes on to the pods and waits there; the header says so.
	tm.waitFor("reading pods… 0 · ")
	// Keys while the pods are still to come: a filter, Enter on a row without a diagnosis.
	tm.keys("/", "l", "e", "d", "g", "e", "r", "-", "0", "0", "0", "5", "Enter")
	tm.waitFor("1/1")
	tm.keys("Enter")
	tm.waitFor("still reading")

	feed()
	// The filter typed while reading still holds when the shapes come.
	s = tm.waitMatchWithin(60*time.Second, regexp.MustCompile(`healthy\s+deploy/ledger-0005`), "ledger-0005 diagnosed healthy")
	if strings.Contains(s, "workloads listed") || !strings.Contains(s, "1/1") {
		t.Errorf("the filtered row alone, diagnosed, once the dump is read:\n%s", s)
	}
	tm.keys("Enter")
	tm.waitFor("1 Diagnosis", "ledger-0005")
	tm.keys("q")
	if st := tm.waitExit(); st != "0" {
		t.Errorf("exit status %s after q, want 0", st)
	}
	tm.quietStderr()
}

// q while a dump is read quits at once, with the read abandoned where it waits.
func TestDumpConsoleQuitsWhileReading(t *testing.T) {
	bin := build(t)
	dir, _ := heldDump(t, 50)
	tm := start(t, 160, 30, bin, "--dump", dir)
	tm.waitForWithin(60*time.Second, "50 workloads listed")
	tm.keys("q")
	if st := tm.waitExit(); st != "0" {
		t.Errorf("exit status %s after q, want 0", st)
	}
	tm.quietStderr()
}

// listedOnly is the totals line of rows listed before their shapes.
var listedOnly = regexp.MustCompile(`\d+ workloads? listed`)

// waitDiagnosed is waitFor for a dump's diagnosed table: the console lists a dump's workloads
// before their copies are read, and Enter on them says "still reading" until the shapes come.
func (tm *term) waitDiagnosed(texts ...string) string {
	tm.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var s string
	for time.Now().Before(deadline) {
		s = tm.screen()
		ok := !listedOnly.MatchString(s)
		for _, x := range texts {
			ok = ok && strings.Contains(s, x)
		}
		if ok {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	tm.t.Fatalf("screen never showed %q diagnosed; last screen:\n%s", texts, s)
	return ""
}

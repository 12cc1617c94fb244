package tmux

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The Timeline tab in a real terminal, on the dump of a revision that was Ready for minutes and
// failed from its first seconds: the picture's strip falls from full to nothing, the revision
// and onset marks stand before the fall, and the moments are listed in words.
func TestTimelineTabOnADump(t *testing.T) {
	bin := build(t)
	dump, err := filepath.Abs("../../testdata/fixtures/ready-then-fails/dump")
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range [][2]int{{100, 30}, {60, 20}} {
		w, h := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			tm := start(t, w, h, bin, "--dump", dump, "--at", "2026-11-30T14:06:00Z")
			tm.waitDiagnosed("telemetry-ingester")
			tm.keys("Enter")
			tm.waitFor("Diagnosis", "telemetry-ingester")
			tm.keys("6")
			// Every tab shows the tab bar, so wait for the tab's own content.
			s := tm.waitFor("11-30 13:58:20 → 11-30 14:06:00", "serve 3", "marks", "the failure began")
			for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
				if n := len([]rune(l)); n > w {
					t.Errorf("line wider than the terminal: %q", l)
				}
			}
			if !regexp.MustCompile(`(?m)^serve 3  █+·+\s*$`).MatchString(s) {
				t.Errorf("the serving strip does not fall from full to nothing:\n%s", s)
			}
			if !regexp.MustCompile(`(?m)^marks\s+R!\s+▼\s*$`).MatchString(s) {
				t.Errorf("the marks are not revision, onset, then the fall:\n%s", s)
			}
			for _, x := range []string{"revision 2 rolled out", "11-30 13:58:24 onset"} {
				if !strings.Contains(s, x) {
					t.Errorf("the Timeline tab lacks %q:\n%s", x, s)
				}
			}
			// The last moments are below the fold of a small terminal; the end of the tab has them.
			tm.keys("G")
			tm.waitFor("serving fell 3→0", "MinimumReplicasUnavailable")
			tm.keys("q")
			if st := tm.waitExit(); st != "0" {
				t.Errorf("exit status %s after q, want 0", st)
			}
			tm.quietStderr()
		})
	}
}

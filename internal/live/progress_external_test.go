package live_test

import (
	"go/build"
	"strings"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/internal/live"
	"github.com/kubediagnose/kubectl-diagnose/tui"
)

// The console shows load progress for sources that implement tui.ProgressSource. live satisfies
// it structurally, so that the data layer does not depend on the console.
var _ tui.ProgressSource = (*live.Source)(nil)

func TestLiveDoesNotImportTheConsole(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if strings.HasSuffix(imp, "/tui") || strings.Contains(imp, "/tui/") {
			t.Errorf("internal/live imports %s; the live source must not depend on the console", imp)
		}
	}
}

package cmd

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
	"github.com/kubediagnose/kubectl-diagnose/tui"
)

// The console takes a dump's early rows through the scoped source.
var _ tui.RowsSource = (*scopedSource)(nil)

// The rows a dump hands the console early are scoped as its snapshot is: -n, the selector and
// --at, so the console never lists a workload the diagnosis will not have.
func TestDumpRowsAreScopedAsTheSnapshot(t *testing.T) {
	dir := t.TempDir()
	for _, ns := range []string{"dev-mixed", "dev-search"} {
		if err := os.CopyFS(filepath.Join(dir, ns), os.DirFS(filepath.Join("..", "testdata", "scenarios", ns, "dump", ns))); err != nil {
			t.Fatal(err)
		}
	}
	sel, err := snapshot.ParseSelector("", "metadata.name=checkout")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 24, 15, 0, 0, 0, time.UTC)
	src := &scopedSource{src: dump.Source{Path: dir}, namespaces: []string{"dev-mixed"}, at: &at, selector: sel, origin: "dump " + dir}
	var rows []*snapshot.Snapshot
	var kinds []string
	snap, err := src.SnapshotWithRows(context.Background(), func(what string, _ int) {
		if !slices.Contains(kinds, what) {
			kinds = append(kinds, what)
		}
	}, func(s *snapshot.Snapshot) { rows = append(rows, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("rows handed over %d times, want once", len(rows))
	}
	names := func(s *snapshot.Snapshot) []string {
		var out []string
		for _, d := range s.Deployments {
			out = append(out, d.Namespace+"/"+d.Name)
		}
		return out
	}
	if got, want := names(rows[0]), names(snap); !slices.Equal(got, want) || !slices.Equal(want, []string{"dev-mixed/checkout"}) {
		t.Errorf("early rows list %v, the snapshot %v; want dev-mixed/checkout in both", got, want)
	}
	if !rows[0].ReferenceTime.Equal(at) || len(rows[0].Pods) > 0 {
		t.Errorf("early rows at %v with %d pods, want --at and no pods", rows[0].ReferenceTime, len(rows[0].Pods))
	}
	if !slices.Contains(kinds, "pods") || !slices.Contains(kinds, "deployments") {
		t.Errorf("progress named %v, want deployments and pods among them", kinds)
	}
}

// The console waits for a dump directory's named pipes (dump.Options.WaitForPipes): its header
// says what the read waits for and q stops it. The audit, which prints nothing until its read
// ends, skips them, also when the root command prints the audit table off a terminal.
func TestOnlyTheConsoleWaitsForADumpsPipes(t *testing.T) {
	waitsForPipes := func(t *testing.T, src snapshot.Source) bool {
		t.Helper()
		scoped, ok := src.(*scopedSource)
		if !ok {
			t.Fatalf("the source is a %T, want the scoped dump", src)
		}
		d, ok := scoped.src.(dump.Source)
		if !ok {
			t.Fatalf("the scoped source is a %T, want a dump", scoped.src)
		}
		return d.Options.WaitForPipes
	}
	path := scenarioDump("dev-web")
	var console tui.Options
	if _, _, err := run(t, nil, hooks{
		interactive: func() bool { return true },
		console:     func(_ context.Context, o tui.Options) error { console = o; return nil },
	}, "--dump", path); err != nil {
		t.Fatal(err)
	}
	if !waitsForPipes(t, console.Source) {
		t.Error("the console skips the pipes of a dump as the audit does")
	}

	var root *RootOptions
	if _, _, err := run(t, nil, hooks{
		interactive: func() bool { return false },
		runRoot:     func(o *RootOptions) error { root = o; return o.Run(context.Background()) },
	}, "--dump", path); err != nil {
		t.Fatal(err)
	}
	p, err := parseArgs("audit", "--dump", path)
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]*SourceOptions{"the audit table off a terminal": root.Source, "audit": p.audit.Source} {
		src, err := o.open()
		if err != nil {
			t.Fatal(err)
		}
		if waitsForPipes(t, src.Source) {
			t.Errorf("%s waits for the pipes of a dump", name)
		}
	}
}

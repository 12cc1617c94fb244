package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/internal/report"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
	"github.com/kubediagnose/kubectl-diagnose/tui"
)

func TestEachContextBoundsOrdersAndKeepsEveryResult(t *testing.T) {
	names := []string{"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"}
	for _, limit := range []int{1, 3, 10, 50} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			var running, peak atomic.Int32
			var finished []string
			done := make(chan string, len(names))
			out := eachContextIn(context.Background(), names, nil, limit, func(_ context.Context, name string) string {
				n := running.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				// The first names take longest, so they end last when several run at once.
				i := slices.Index(names, name)
				time.Sleep(time.Duration(len(names)-i) * 3 * time.Millisecond)
				running.Add(-1)
				done <- name
				if name == "c4" {
					return "failed " + name
				}
				return "read " + name
			})
			close(done)
			for n := range done {
				finished = append(finished, n)
			}
			if p, want := int(peak.Load()), min(limit, len(names)); p > want || (limit > 1 && p < 2) {
				t.Errorf("peak of %d reads at once, want at most %d (and more than one)", p, want)
			}
			if len(out) != len(names) {
				t.Fatalf("%d results for %d names", len(out), len(names))
			}
			for i, name := range names {
				want := "read " + name
				if name == "c4" {
					want = "failed " + name
				}
				if out[i] != want {
					t.Errorf("result %d = %q, want %q: results follow the names, a failure keeps its place", i, out[i], want)
				}
			}
			if limit >= len(names) && slices.Equal(finished, names) {
				t.Errorf("reads ended in the order named %v; the test wants them to end out of order", finished)
			}
		})
	}
}

// fleetKubeconfig writes a kubeconfig with the contexts a, b and dead; nothing is contacted, the
// tests open dumps for a and b.
func fleetKubeconfig(t *testing.T, extra ...string) string {
	t.Helper()
	var ctxs strings.Builder
	for _, n := range append([]string{"b", "a", "dead"}, extra...) {
		fmt.Fprintf(&ctxs, "- name: %q\n  context: {cluster: c, user: u, namespace: ns-%s}\n", n, strings.ReplaceAll(n, ",", "-"))
	}
	cfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:1\"}\nusers:\n- name: u\n  user: {token: not-a-secret}\ncontexts:\n" + ctxs.String() + "current-context: a\n"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFleetFlags(t *testing.T) {
	kc := fleetKubeconfig(t, "x,y")
	tests := []struct {
		name      string
		argv      []string
		contexts  []string
		parallel  int
		wantUsage string
		wantErr   string
	}{
		{name: "one context is no fleet", argv: []string{"audit", "--context", "a"}, parallel: DefaultMaxParallelContexts},
		{name: "a list", argv: []string{"audit", "--context", "b, a,b", "--max-parallel-contexts", "2"}, contexts: []string{"b", "a"}, parallel: 2},
		{name: "a list of one is a fleet", argv: []string{"audit", "--context", "a,"}, contexts: []string{"a"}, parallel: DefaultMaxParallelContexts},
		{name: "a context named with a comma", argv: []string{"audit", "--context", "x,y"}, parallel: DefaultMaxParallelContexts},
		{name: "every context, sorted", argv: []string{"audit", "--all-contexts"}, contexts: []string{"a", "b", "dead", "x,y"}, parallel: DefaultMaxParallelContexts},
		{name: "the console takes a list", argv: []string{"--context", "a,b"}, contexts: []string{"a", "b"}, parallel: DefaultMaxParallelContexts},
		{name: "--all-contexts with --context", argv: []string{"audit", "--all-contexts", "--context", "a"}, wantUsage: "--all-contexts and --context cannot be used together"},
		{name: "unknown context", argv: []string{"audit", "--context", "a,nope"}, wantErr: `context "nope" not in the kubeconfig; it holds a, b, dead, x,y`},
		{name: "no parallelism", argv: []string{"audit", "--context", "a,b", "--max-parallel-contexts", "0"}, wantUsage: "invalid --max-parallel-contexts 0: want 1 or more"},
		{name: "a fleet and a dump", argv: []string{"audit", "--context", "a,b", "--dump", "x"}, wantUsage: "several contexts are read from their clusters; --dump reads one dump"},
		{name: "a fleet as names", argv: []string{"audit", "--context", "a,b", "-o", "name"}, wantUsage: "-o name cannot say which context a workload is in; with several contexts use -o custom-columns=..., json or yaml"},
		{name: "a fleet watched", argv: []string{"audit", "--context", "a,b", "-w"}, wantUsage: "--watch follows one context; with several contexts run one watch per context"},
		{name: "explain reads one context", argv: []string{"explain", "deploy/x", "--context", "a,b"}, wantUsage: `explain reads one cluster; --context takes one name here, not "a,b"`},
		{name: "serve reads one context", argv: []string{"serve", "--context", "a,b"}, wantUsage: `serve reads one cluster; --context takes one name here, not "a,b"`},
		{name: "the demo is one cluster", argv: []string{"--demo", "--all-contexts"}, wantUsage: "--demo is one built-in cluster; it cannot be used with several contexts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := parseArgs(append(tt.argv, "--kubeconfig", kc)...)
			switch {
			case tt.wantUsage != "":
				checkUsageError(t, err, tt.wantUsage)
				return
			case tt.wantErr != "":
				var usage *UsageError
				if err == nil || errors.As(err, &usage) || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q (exit 1)", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			var src *SourceOptions
			if p.audit != nil {
				src = p.audit.Source
			} else {
				src = p.root.Source
			}
			if !slices.Equal(src.Fleet.Contexts, tt.contexts) || src.Fleet.On() != (tt.contexts != nil) || src.Fleet.MaxParallel != tt.parallel {
				t.Errorf("fleet = %+v, want contexts %q, %d at once", src.Fleet, tt.contexts, tt.parallel)
			}
		})
	}
}

// fleetAudit parses argv against fleetKubeconfig and runs the fleet with a and b read from
// scenario dumps and dead refusing connections.
func fleetAudit(t *testing.T, argv ...string) (stdout, stderr string, err error) {
	t.Helper()
	p, err := parseArgs(append(argv, "--kubeconfig", fleetKubeconfig(t))...)
	if err != nil {
		t.Fatal(err)
	}
	o := p.audit
	var out, errOut bytes.Buffer
	o.Out, o.ErrOut = &out, &errOut
	dumps := map[string]string{"a": "dev-ingester", "b": "dev-thumbs"}
	o.openContext = func(name string) (*openedSource, error) {
		id, ok := dumps[name]
		if !ok {
			return nil, errors.New("cannot reach the API server at 127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused")
		}
		s := NewSourceOptions(nil)
		s.DumpPath = scenarioDump(id)
		return s.open()
	}
	o.now = func() time.Time { return time.Date(2026, 11, 24, 14, 32, 10, 0, time.UTC) }
	err = o.runFleet(context.Background())
	return out.String(), errOut.String(), err
}

func TestFleetTable(t *testing.T) {
	out, errOut, err := fleetAudit(t, "audit", "--context", "b,dead,a")
	var unread *UnreadContextsError
	if !errors.As(err, &unread) || ExitCode(err) != ExitError || !slices.Equal(unread.Unread, []string{"dead"}) || unread.Total != 3 {
		t.Fatalf("error = %v, want exit 1 naming dead of 3 contexts", err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "CONTEXT   SHAPE ") || !strings.Contains(lines[0], "NAMESPACE") {
		t.Errorf("header %q: want CONTEXT first, and NAMESPACE as the rows span two", lines[0])
	}
	var order []string
	for _, l := range lines[1:] {
		ctx, _, _ := strings.Cut(l, " ")
		if len(order) == 0 || order[len(order)-1] != ctx {
			order = append(order, ctx)
		}
	}
	if !slices.Equal(order, []string{"b", "a"}) {
		t.Errorf("contexts in the table: %v, want b's rows then a's, as named:\n%s", order, out)
	}
	if !strings.Contains(out, "deployment/telemetry-ingester") || !strings.Contains(out, "env INGEST_ENDPOINT") {
		t.Errorf("a's suspect is named from a's own templates:\n%s", out)
	}
	want := "warning: context dead: cannot reach the API server at 127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused\n"
	if errOut != want {
		t.Errorf("stderr = %q, want the one line for dead %q", errOut, want)
	}
}

func TestFleetFailOnCoversEveryContext(t *testing.T) {
	_, _, err := fleetAudit(t, "audit", "--context", "dead,a,b", "--fail-on", "starts-and-dies", "-o", "json")
	var fo *FailOnError
	if !errors.As(err, &fo) || ExitCode(err) != ExitFailedOn || !slices.Equal(fo.Contexts, []string{"b"}) {
		t.Fatalf("error = %v, want exit 3 for b's crash loop, a match winning over the unread context", err)
	}
	_, _, err = fleetAudit(t, "audit", "--context", "a,b", "--fail-on", "broken")
	if err == nil || err.Error() != "2 workloads match --fail-on: live-but-idle 1, starts-and-dies 1 (in contexts a, b)" {
		t.Errorf("error = %v, want both contexts named", err)
	}
	_, _, err = fleetAudit(t, "audit", "--context", "a,b", "--fail-on", "never-starts")
	if err != nil {
		t.Errorf("no context has a never-starts workload: error = %v, want exit 0", err)
	}
}

func TestFleetJSONIsAReportList(t *testing.T) {
	out, _, err := fleetAudit(t, "audit", "--context", "a,dead,b", "-o", "json")
	if ExitCode(err) != ExitError {
		t.Fatalf("error = %v, want exit 1 for dead", err)
	}
	var list struct {
		APIVersion, Kind string
		Items            []struct {
			Source     struct{ Type, Context, Server string }
			Visibility []struct{ Kind, Reason string }
			Workloads  []struct{ Name, Shape string }
		}
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if list.Kind != report.KindReportList || list.APIVersion != "kubediagnose.dev/v1alpha1" || len(list.Items) != 3 {
		t.Fatalf("document %s %s with %d items, want a ReportList of 3", list.APIVersion, list.Kind, len(list.Items))
	}
	dead := list.Items[1]
	if dead.Source.Context != "dead" || len(dead.Workloads) != 0 || len(dead.Visibility) != 1 ||
		dead.Visibility[0].Kind != "" || !strings.Contains(dead.Visibility[0].Reason, "connection refused") {
		t.Errorf("dead's item = %+v, want no workload and one visibility line", dead)
	}
	if len(list.Items[0].Workloads) == 0 || len(list.Items[2].Workloads) == 0 {
		t.Errorf("a and b are read whatever dead does: %+v", list.Items)
	}
}

func TestFleetMarkdownHasASectionPerContext(t *testing.T) {
	out, _, _ := fleetAudit(t, "audit", "--context", "a,dead,b", "-o", "markdown")
	var sections []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "## Context ") {
			sections = append(sections, strings.TrimPrefix(l, "## Context "))
		}
	}
	if !slices.Equal(sections, []string{"a", "dead", "b"}) {
		t.Errorf("sections %v, want a, dead, b:\n%s", sections, out)
	}
	if !strings.Contains(out, "### deployment/telemetry-ingester in dev-ingester: live-but-idle") || !strings.Contains(out, "#### Suspects") {
		t.Errorf("a workload's heading is one level below a single audit's:\n%s", out)
	}
}

func TestFleetCustomColumnsLeadWithTheContext(t *testing.T) {
	out, _, _ := fleetAudit(t, "audit", "--context", "a,b", "-o", "custom-columns=NAME:.name,SHAPE:.shape")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) < 3 || strings.Fields(lines[0])[0] != "CONTEXT" || strings.Fields(lines[1])[0] != "a" || strings.Fields(lines[len(lines)-1])[0] != "b" {
		t.Errorf("custom columns:\n%s\nwant CONTEXT first, a's rows then b's", out)
	}
}

func TestRootOpensTheConsoleOverSeveralContexts(t *testing.T) {
	var got *tui.Options
	h := hooks{
		interactive: func() bool { return true },
		console: func(_ context.Context, o tui.Options) error {
			got = &o
			return nil
		},
	}
	if _, _, err := run(t, nil, h, "--kubeconfig", fleetKubeconfig(t), "--context", "dead,a", "--request-timeout", "2s"); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.ReadFleet == nil || got.Context != "dead,a" || got.SourceLabel != "live" {
		t.Fatalf("console options %+v, want a fleet read over dead,a", got)
	}
	// Every context of the kubeconfig points at a port nothing listens on: each read fails on
	// its own, in the order named.
	reads := got.ReadFleet(context.Background())
	if len(reads) != 2 || reads[0].Context != "dead" || reads[1].Context != "a" {
		t.Fatalf("reads %+v, want dead then a", reads)
	}
	for _, r := range reads {
		if r.Err == nil || !strings.Contains(r.Err.Error(), "127.0.0.1:1") {
			t.Errorf("context %s: error %v, want the unreachable server named", r.Context, r.Err)
		}
	}
	// Each context is also followed by a watch of its own, which says its server is unreachable.
	if len(got.WatchFleet) != 2 || got.WatchFleet[0].Context != "dead" || got.WatchFleet[1].Context != "a" {
		t.Fatalf("watches %+v, want dead then a", got.WatchFleet)
	}
	for _, w := range got.WatchFleet {
		ctx, cancel := context.WithCancel(context.Background())
		snaps, errs := w.Watch(ctx, snapshot.WatchHooks{})
		select {
		case err := <-errs:
			if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
				t.Errorf("watch of %s: %v, want the unreachable server named", w.Context, err)
			}
		case s := <-snaps:
			t.Errorf("watch of %s read a snapshot %v from a port nothing listens on", w.Context, s)
		case <-time.After(10 * time.Second):
			t.Errorf("watch of %s said nothing", w.Context)
		}
		cancel()
		for range snaps {
		}
	}
}

func TestFailedWatchSaysWhyOnceAndStaysOpen(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	snaps, errs := failedWatch(errors.New(`load kubeconfig: context "x" has no cluster`))(ctx, snapshot.WatchHooks{})
	if err := <-errs; err == nil || !strings.Contains(err.Error(), "no cluster") {
		t.Fatalf("first error %v", err)
	}
	select {
	case err, ok := <-errs:
		t.Fatalf("a second error or a closed channel (%v, %v) before the console leaves", err, ok)
	case <-snaps:
		t.Fatal("a snapshot from a source that could not be built")
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	if _, ok := <-snaps; ok {
		t.Fatal("snapshots not closed when the console leaves")
	}
}

func TestFleetProgressCountsContexts(t *testing.T) {
	p, err := parseArgs("audit", "--context", "a,b,dead", "--kubeconfig", fleetKubeconfig(t))
	if err != nil {
		t.Fatal(err)
	}
	var line bytes.Buffer
	reads := p.audit.Source.readFleet(context.Background(), func(string) (*openedSource, error) {
		return nil, errors.New("refused")
	}, time.Now, &line, nil)
	if len(reads) != 3 {
		t.Fatalf("%d reads", len(reads))
	}
	for _, want := range []string{"reading contexts… 0", "reading contexts… 3", "\r\x1b[K"} {
		if !strings.Contains(line.String(), want) {
			t.Errorf("progress %q lacks %q", line.String(), want)
		}
	}
	if !strings.HasSuffix(line.String(), "\r\x1b[K") {
		t.Errorf("progress %q is not erased at the end", line.String())
	}
}

// TestFleetConsoleBoundsFirstReads: with --max-parallel-contexts 1 a context's watch starts
// only once the one before has said something, and a failure frees the slot as a snapshot
// does; what each watch says still comes through.
func TestFleetConsoleBoundsFirstReads(t *testing.T) {
	type fake struct {
		started chan struct{}
		snaps   chan *snapshot.Snapshot
		errs    chan error
	}
	newFake := func() *fake {
		return &fake{started: make(chan struct{}), snaps: make(chan *snapshot.Snapshot), errs: make(chan error)}
	}
	watchOf := func(f *fake) tui.WatchFunc {
		return func(context.Context, snapshot.WatchHooks) (<-chan *snapshot.Snapshot, <-chan error) {
			close(f.started)
			return f.snaps, f.errs
		}
	}
	started := func(f *fake, within time.Duration) bool {
		select {
		case <-f.started:
			return true
		case <-time.After(within):
			return false
		}
	}
	slots := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, b, c := newFake(), newFake(), newFake()
	_, aErrs := boundedFirstRead(slots, watchOf(a))(ctx, snapshot.WatchHooks{})
	if !started(a, 5*time.Second) {
		t.Fatal("the first watch did not start")
	}
	bSnaps, _ := boundedFirstRead(slots, watchOf(b))(ctx, snapshot.WatchHooks{})
	if started(b, 100*time.Millisecond) {
		t.Fatal("the second watch started while the first read held the only slot")
	}
	a.errs <- errors.New("connection refused")
	if err := <-aErrs; err == nil || err.Error() != "connection refused" {
		t.Errorf("the first watch's error came through as %v", err)
	}
	if !started(b, 5*time.Second) {
		t.Fatal("an error did not free the slot")
	}
	boundedFirstRead(slots, watchOf(c))(ctx, snapshot.WatchHooks{})
	if started(c, 100*time.Millisecond) {
		t.Fatal("the third watch started while the second read held the slot")
	}
	snap := &snapshot.Snapshot{}
	b.snaps <- snap
	if got := <-bSnaps; got != snap {
		t.Errorf("the second watch's snapshot did not come through")
	}
	if !started(c, 5*time.Second) {
		t.Fatal("a snapshot did not free the slot")
	}
}

// TestFleetTakesTypeAndNameArguments: audit's TYPE/NAME arguments narrow every context; a name
// found in one context of the fleet is found, a name in none is an error after the rows.
func TestFleetTakesTypeAndNameArguments(t *testing.T) {
	out, errOut, err := fleetAudit(t, "audit", "deploy/telemetry-ingester", "--context", "a,b", "-o", "custom-columns=NAME:.name")
	if err != nil || strings.Join(strings.Fields(out), " ") != "CONTEXT NAME a telemetry-ingester" || errOut != "" {
		t.Errorf("a name in one context: %v\n%s%s", err, out, errOut)
	}
	pod := "telemetry-ingester-c575c6b7c-7g644"
	out, errOut, err = fleetAudit(t, "audit", "pod/"+pod, "deploy/nope", "--context", "a,b")
	if err == nil || err.Error() != "deployment/nope not found in any context" || ExitCode(err) != ExitError {
		t.Errorf("a name in no context: %v (exit %d)", err, ExitCode(err))
	}
	if !strings.Contains(out, "deployment/telemetry-ingester") || strings.Contains(out, "thumbnailer") ||
		errOut != "context a: pod/"+pod+" is controlled by deployment/telemetry-ingester (through replicaset/telemetry-ingester-c575c6b7c)\n" {
		t.Errorf("a pod of context a:\n%s%s", out, errOut)
	}
	out, errOut, err = fleetAudit(t, "audit", "statefulsets", "--context", "a,b")
	if err != nil || out != "" || strings.Count(errOut, ": No workloads found") != 2 {
		t.Errorf("no context has a StatefulSet: %v\n%s%s", err, out, errOut)
	}
}

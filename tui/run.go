package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Options configure the console. The command layer fills them from its flags.
type Options struct {
	In  io.Reader
	Out io.Writer
	// Source reads the snapshot; it is called on start and on every refresh.
	Source snapshot.Source
	// Watch, when set (live clusters), streams new snapshots and errors until ctx ends. The
	// console then reads the source through the watch alone: its first read is the first picture.
	Watch WatchFunc
	// At overrides the reference time of every snapshot.
	At            *time.Time
	Namespaces    []string
	AllNamespaces bool
	// SourceLabel is "live", "dump" or "demo".
	SourceLabel string
	// Context is the kube context name, shown in the header.
	Context string
	// Selector is the -l and --field-selector the workloads were picked by, as typed, shown in
	// the header so a filtered picture never passes for the whole namespace.
	Selector string
	// ShowSecrets shows credentials as they were read (--show-secrets); by default every
	// report, template, log line and message is shown through internal/redact.
	ShowSecrets bool
	// SwitchNamespace, when set (live clusters), returns a source for another namespace.
	SwitchNamespace func(ns string) snapshot.Source
	// ListNamespaces, when set (live clusters), names the cluster's namespaces for the n
	// prompt's suggestions; without it, or when it fails, the snapshot's namespaces are offered.
	ListNamespaces func(ctx context.Context) ([]string, error)
	// MetricsRefresh, when metrics are configured, is how often the live watch reads them
	// again; the footer of a live console says it.
	MetricsRefresh time.Duration
	// ReadFleet, when set, reads several contexts, each its own snapshot, on every refresh (r),
	// and on start when WatchFleet is not set; the console then shows a CONTEXT column and steps
	// through the contexts with c. Source and Watch are not used.
	ReadFleet func(ctx context.Context) []ContextSnapshot
	// WatchFleet, when set with ReadFleet (live clusters), follows each context's own watch,
	// as Watch follows one cluster: a change in any context shows without r, and a context
	// whose watch fails shows as stale and holds up none of the others. r still reads every
	// context once through ReadFleet.
	WatchFleet []ContextWatch
}

// ProgressSource is a Source that reports how far a read has got ("pods", 12400); the console
// shows it under the spinner. Sources that do not implement it get a spinner alone.
type ProgressSource interface {
	snapshot.Source
	SnapshotWithProgress(ctx context.Context, progress func(what string, n int)) (*snapshot.Snapshot, error)
}

// RowsSource is a ProgressSource that also hands rows the workloads alone as soon as it has
// read them, before pods, events and logs (a dump reads its workload lists first): the console
// lists them, without shapes, until the snapshot is read and diagnosed. rows may be called
// more than once, the latest list wins; it must not block.
type RowsSource interface {
	ProgressSource
	SnapshotWithRows(ctx context.Context, progress func(what string, n int), rows func(*snapshot.Snapshot)) (*snapshot.Snapshot, error)
}

// Watcher is a Source that can also stream updates, as WatchFunc does. A source returned by
// SwitchNamespace that implements it is watched; the first source is watched by Options.Watch.
type Watcher interface {
	WatchWith(ctx context.Context, hooks snapshot.WatchHooks) (<-chan *snapshot.Snapshot, <-chan error)
}

// frameRate is how often the renderer may draw a new frame, bubbletea's highest.
const frameRate = 120

// Run opens the console and blocks until the user quits or ctx ends. It returns the load error
// when no snapshot could ever be read, so the command can exit non-zero.
//
// With FrameTraceEnv set to a file name, the console times every key to its frame and writes
// the trace there on exit.
func Run(ctx context.Context, opts Options) error {
	return run(ctx, opts, os.Getenv(FrameTraceEnv))
}

// consoleStyles are the styles for a terminal of type term: DefaultStyles on r, with ASCII
// glyphs on the Linux console, which has colours but a font of a few hundred glyphs.
func consoleStyles(r *lipgloss.Renderer, term string) Styles {
	st := DefaultStyles(r)
	if term == "linux" {
		st.Glyphs = ASCIIGlyphs
	}
	return st
}

// run is Run with the frame trace's file named, "" for none.
func run(ctx context.Context, opts Options, tracePath string) (err error) {
	if opts.Source == nil && opts.ReadFleet == nil {
		return errors.New("console: no source")
	}
	r := lipgloss.NewRenderer(opts.Out)
	// Ask the terminal for its background now, before bubbletea owns the input: adaptive colours
	// would otherwise query it from inside View.
	r.HasDarkBackground()
	var model tea.Model = New(ctx, opts, consoleStyles(r, os.Getenv("TERM")), time.Now)
	out := opts.Out
	if tracePath != "" {
		trace := newFrameTrace(time.Now())
		model = &tracedModel{inner: model, t: trace}
		out = trace.output(out)
		defer func() {
			if werr := trace.writeTo(tracePath); werr != nil && err == nil {
				err = werr
			}
		}()
	}
	p := tea.NewProgram(model,
		tea.WithContext(ctx),
		tea.WithInput(opts.In),
		tea.WithOutput(out),
		tea.WithAltScreen(),
		tea.WithMouseCellMotion(),
		// A frame waits for the renderer's next tick: at the default 60 a key's frame can take
		// 17 ms to show before any work; at 120 it is 8 ms, within the 16 ms a key may take.
		tea.WithFPS(frameRate),
	)
	final, err := p.Run()
	if tm, ok := final.(*tracedModel); ok {
		final = tm.inner
	}
	// tea.Program restores the terminal (alt screen, mouse, cursor) on every return path,
	// including a panic in a Cmd and a cancelled context.
	if fm, ok := final.(*Model); ok {
		fm.stopWatch()
		fm.stopLoad()
		if err == nil && (fm.data == nil || fm.data.partial) && fm.loadErr != nil {
			return fmt.Errorf("load snapshot: %w", fm.loadErr)
		}
	}
	// A cancelled context or a SIGINT from outside is the user leaving, not a failure.
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil && !errors.Is(err, tea.ErrProgramPanic) {
		return nil
	}
	if errors.Is(err, tea.ErrInterrupted) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("console: %w", err)
	}
	return nil
}

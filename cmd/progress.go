package cmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/internal/report"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// progressSource is a source that reports how far a read has got; the live source is one.
type progressSource interface {
	SnapshotWithProgress(ctx context.Context, progress func(what string, n int)) (*snapshot.Snapshot, error)
}

// throttledSource counts the server's requests to come back later; the live source is one.
type throttledSource interface {
	Throttled() (n int, longest time.Duration)
}

// progressTick is how often the progress line is redrawn, so that the time it shows keeps
// moving while a slow or throttling server holds a page back.
const progressTick = time.Second

// progressTo is where a command draws its progress line: stderr when it is a terminal, else
// nowhere, so that scripts and CI logs see only the result.
func progressTo(errOut io.Writer) io.Writer {
	if isTerminal(errOut) {
		return errOut
	}
	return nil
}

// readWithProgress reads src, drawing "reading pods… 1,200 · 4s" on w (a terminal's stderr)
// while it runs and erasing it when it ends; a nil w, or a source that reports no progress,
// reads without a line.
func readWithProgress(ctx context.Context, src snapshot.Source, w io.Writer) (*snapshot.Snapshot, error) {
	ps, ok := src.(progressSource)
	if w == nil || !ok {
		return src.Snapshot(ctx)
	}
	line := &progressLine{w: w, start: time.Now(), now: time.Now}
	if ts, ok := src.(throttledSource); ok {
		line.throttled = ts.Throttled
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(progressTick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				line.draw()
			}
		}
	}()
	snap, err := ps.SnapshotWithProgress(ctx, line.report)
	close(done)
	wg.Wait()
	line.erase()
	return snap, err
}

// progressLine is the one line a read redraws in place.
type progressLine struct {
	w         io.Writer
	start     time.Time
	now       func() time.Time
	throttled func() (int, time.Duration)

	mu    sync.Mutex
	what  string
	n     int
	drawn bool
}

func (p *progressLine) report(what string, n int) {
	p.mu.Lock()
	p.what, p.n = what, n
	p.mu.Unlock()
	p.draw()
}

// text is the line: what is being read, how many so far, the time spent, and how often the
// server asked the read to wait.
func (p *progressLine) text() string {
	p.mu.Lock()
	what, n := p.what, p.n
	p.mu.Unlock()
	head := "reading…"
	if what != "" {
		head = fmt.Sprintf("reading %s… %s", what, report.Thousands(n))
	}
	parts := []string{head}
	parts = append(parts, p.now().Sub(p.start).Truncate(time.Second).String())
	if p.throttled != nil {
		if k, longest := p.throttled(); k > 0 {
			noun := "requests"
			if k == 1 {
				noun = "request"
			}
			parts = append(parts, fmt.Sprintf("the API server throttled %d %s, retrying after up to %s", k, noun, longest))
		}
	}
	return strings.Join(parts, " · ")
}

func (p *progressLine) draw() {
	text := p.text()
	p.mu.Lock()
	defer p.mu.Unlock()
	// A progress line is a courtesy: a failed write is not worth failing the read for.
	_, _ = fmt.Fprintf(p.w, "\r\x1b[K%s", text)
	p.drawn = true
}

func (p *progressLine) erase() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		_, _ = fmt.Fprint(p.w, "\r\x1b[K")
	}
}

package tui

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// FrameTraceEnv names the file the console writes its frame trace to, when set: one line per
// key, from its arrival in Update to the terminal write of the frame that shows it. It is a
// diagnostic aid for measuring key-to-frame latency in the running binary, where no benchmark
// reaches (the renderer's tick, the terminal write).
const FrameTraceEnv = "KUBECTL_DIAGNOSE_FRAME_TRACE"

// FrameTraceHeader is the trace's first line; it names the tab-separated columns. Times are
// nanoseconds since the console started, on the monotonic clock: the key's arrival in Update,
// Update's return, View's return, and the start and end of the frame's write to the terminal.
// A key whose view is the frame already on screen has "=" as its write times (the renderer
// writes nothing for it), and a key no frame ever showed has "-".
const FrameTraceHeader = "# seq\tkey\tarrived_ns\tupdated_ns\tviewed_ns\twrite_began_ns\twritten_ns"

// maxTraceBytes bounds the trace held in memory, so a console left open for days with the trace
// on cannot grow without bound; lines past it are counted, not kept.
const maxTraceBytes = 64 << 20

// frameTrace times keys to their frames. Update and View (the event loop) record a key's
// arrival and when its view was rendered; the output wrapper (the renderer's goroutine) stamps
// the first write that starts after that view. Lines are kept in memory and written to the
// file once, at exit, so the trace never waits on a disk in front of the user.
type frameTrace struct {
	start time.Time

	mu      sync.Mutex
	seq     int
	pending []keyFrame
	buf     bytes.Buffer
	dropped int
}

// keyFrame is one key waiting for its frame.
type keyFrame struct {
	seq                      int
	key                      string
	arrived, updated, viewed time.Duration
	hasView                  bool
}

func newFrameTrace(start time.Time) *frameTrace {
	t := &frameTrace{start: start}
	t.buf.WriteString(FrameTraceHeader + "\n")
	return t
}

func (t *frameTrace) since() time.Duration { return time.Since(t.start) }

// handled records a key whose Update ran from arrived to updated.
func (t *frameTrace) handled(key string, arrived, updated time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	t.pending = append(t.pending, keyFrame{seq: t.seq, key: key, arrived: arrived, updated: updated})
}

// viewed records that a view reflecting every key handled so far has been rendered; same says
// it is the view rendered before it, which the renderer does not write again.
func (t *frameTrace) viewed(at time.Duration, same bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	keep := t.pending[:0]
	for _, k := range t.pending {
		if !k.hasView {
			k.viewed, k.hasView = at, true
			if same {
				t.line(k, "=", "=")
				continue
			}
		}
		keep = append(keep, k)
	}
	t.pending = keep
}

// wrote records a terminal write that started at began and ended at ended: it is the frame of
// every key whose view was rendered before it began.
func (t *frameTrace) wrote(began, ended time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	keep := t.pending[:0]
	for _, k := range t.pending {
		if k.hasView && k.viewed <= began {
			t.line(k, strconv.FormatInt(int64(began), 10), strconv.FormatInt(int64(ended), 10))
			continue
		}
		keep = append(keep, k)
	}
	t.pending = keep
}

func (t *frameTrace) line(k keyFrame, began, written string) {
	viewed := "-"
	if k.hasView {
		viewed = strconv.FormatInt(int64(k.viewed), 10)
	}
	if t.buf.Len() > maxTraceBytes {
		t.dropped++
		return
	}
	fmt.Fprintf(&t.buf, "%d\t%s\t%d\t%d\t%s\t%s\t%s\n", k.seq, strconv.Quote(k.key), int64(k.arrived), int64(k.updated), viewed, began, written)
}

// writeTo writes the trace, keys never drawn included, to path.
func (t *frameTrace) writeTo(path string) error {
	t.mu.Lock()
	for _, k := range t.pending {
		t.line(k, "-", "-")
	}
	t.pending = nil
	if t.dropped > 0 {
		fmt.Fprintf(&t.buf, "# dropped %d keys past %d bytes\n", t.dropped, maxTraceBytes)
	}
	b := t.buf.Bytes()
	t.mu.Unlock()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write frame trace: %w", err)
	}
	return nil
}

// output wraps the console's output so each write is stamped. A terminal stays a terminal file, so
// bubbletea still sees a TTY (raw mode, window size).
func (t *frameTrace) output(w io.Writer) io.Writer {
	if f, ok := w.(terminalFile); ok {
		return tracedFile{terminalFile: f, t: t}
	}
	return tracedWriter{w: w, t: t}
}

type tracedWriter struct {
	w io.Writer
	t *frameTrace
}

func (w tracedWriter) Write(p []byte) (int, error) {
	began := w.t.since()
	n, err := w.w.Write(p)
	w.t.wrote(began, w.t.since())
	return n, err
}

// terminalFile is what bubbletea takes for a terminal (its term.File).
type terminalFile interface {
	io.ReadWriteCloser
	Fd() uintptr
}

type tracedFile struct {
	terminalFile
	t *frameTrace
}

func (f tracedFile) Write(p []byte) (int, error) {
	began := f.t.since()
	n, err := f.terminalFile.Write(p)
	f.t.wrote(began, f.t.since())
	return n, err
}

// tracedModel is the console's model with its keys and views timed for the frame trace.
type tracedModel struct {
	inner    tea.Model
	t        *frameTrace
	lastView string
	keyed    bool // a key was handled since the last View
}

func (m *tracedModel) Init() tea.Cmd { return m.inner.Init() }

func (m *tracedModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	k, isKey := msg.(tea.KeyMsg)
	var arrived time.Duration
	if isKey {
		arrived = m.t.since()
	}
	inner, cmd := m.inner.Update(msg)
	m.inner = inner
	if isKey {
		m.t.handled(k.String(), arrived, m.t.since())
		m.keyed = true
	}
	return m, cmd
}

func (m *tracedModel) View() string {
	v := m.inner.View()
	if m.keyed {
		m.t.viewed(m.t.since(), v == m.lastView)
		m.keyed = false
	}
	m.lastView = v
	return v
}

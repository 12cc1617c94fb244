package tui

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// traceLine is one parsed line of a frame trace.
type traceLine struct {
	seq                                      int
	key                                      string
	arrived, updated, viewed, began, written int64 // -1 for "-", -2 for "="
}

func parseTrace(t *testing.T, b []byte) []traceLine {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) == 0 || lines[0] != FrameTraceHeader {
		t.Fatalf("trace does not start with its header:\n%s", b)
	}
	var out []traceLine
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		if len(f) != 7 {
			t.Fatalf("trace line %q has %d fields, want 7", l, len(f))
		}
		var tl traceLine
		var err error
		if tl.seq, err = strconv.Atoi(f[0]); err != nil {
			t.Fatalf("trace line %q: seq: %v", l, err)
		}
		if tl.key, err = strconv.Unquote(f[1]); err != nil {
			t.Fatalf("trace line %q: key: %v", l, err)
		}
		for i, p := range []*int64{&tl.arrived, &tl.updated, &tl.viewed, &tl.began, &tl.written} {
			if f[2+i] == "-" {
				*p = -1
				continue
			}
			if f[2+i] == "=" {
				*p = -2
				continue
			}
			if *p, err = strconv.ParseInt(f[2+i], 10, 64); err != nil {
				t.Fatalf("trace line %q: field %d: %v", l, 2+i, err)
			}
		}
		out = append(out, tl)
	}
	return out
}

// The running console, with the trace on, writes one line per key typed, each with its frame
// written after the key arrived.
func TestRunWritesOneTraceLinePerKey(t *testing.T) {
	snap, _ := fixture()
	path := filepath.Join(t.TempDir(), "trace")
	var out bytes.Buffer
	sw := syncWriter{w: &out}
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		errc <- run(context.Background(), Options{In: pr, Out: &sw, Source: staticSource{snap: snap}, SourceLabel: "dump"}, path)
	}()
	deadline := time.Now().Add(15 * time.Second)
	for !outContains(&sw, "telemetry-worker") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	keys := []string{"j", "j", "k", "j", "k", "k", "?", "?", "q"}
	for _, k := range keys {
		if _, err := pw.Write([]byte(k)); err != nil {
			t.Fatalf("type %q: %v", k, err)
		}
		time.Sleep(40 * time.Millisecond)
	}
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after q")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := parseTrace(t, b)
	if len(lines) != len(keys) {
		t.Fatalf("trace has %d lines for %d keys:\n%s", len(lines), len(keys), b)
	}
	for i, l := range lines {
		if l.seq != i+1 || l.key != keys[i] {
			t.Errorf("line %d is key %d %q, want %d %q", i, l.seq, l.key, i+1, keys[i])
		}
		// q quits: its view is the last frame, so nothing is written for it.
		if l.key == "q" && l.written == -2 {
			continue
		}
		if l.written < 0 {
			t.Errorf("key %d %q never got a frame:\n%s", l.seq, l.key, b)
			continue
		}
		if l.arrived > l.updated || l.updated > l.viewed || l.viewed > l.began || l.began > l.written {
			t.Errorf("key %d %q: arrived %d, updated %d, viewed %d, write %d-%d are out of order", l.seq, l.key, l.arrived, l.updated, l.viewed, l.began, l.written)
		}
	}
}

// A write that began before a key's view was rendered carries the previous frame, not the
// key's; a key whose view is the one on screen is written with "=", one no frame followed
// with "-".
func TestFrameTraceStampsTheFirstWriteAfterTheView(t *testing.T) {
	tr := newFrameTrace(time.Now())
	tr.handled("j", 10, 20)
	tr.wrote(25, 26) // the previous frame, flushed before View ran
	tr.viewed(30, false)
	tr.wrote(29, 31) // began before the view: still not the key's frame
	tr.wrote(40, 45)
	tr.handled("G", 46, 47)
	tr.viewed(48, true) // the frame on screen already: nothing to write
	tr.handled("k", 50, 60)
	tr.viewed(70, false)
	path := filepath.Join(t.TempDir(), "trace")
	if err := tr.writeTo(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := parseTrace(t, b)
	want := []traceLine{
		{seq: 1, key: "j", arrived: 10, updated: 20, viewed: 30, began: 40, written: 45},
		{seq: 2, key: "G", arrived: 46, updated: 47, viewed: 48, began: -2, written: -2},
		{seq: 3, key: "k", arrived: 50, updated: 60, viewed: 70, began: -1, written: -1},
	}
	if len(got) != len(want) {
		t.Fatalf("trace lines %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

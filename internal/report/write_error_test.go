package report

import (
	"bytes"
	"errors"
	"testing"
)

var errDiskFull = errors.New("disk full")

// shortWriter takes room bytes, then fails every write, like a full disk or a closed pipe.
type shortWriter struct{ room int }

func (s *shortWriter) Write(p []byte) (int, error) {
	if len(p) <= s.room {
		s.room -= len(p)
		return len(p), nil
	}
	n := s.room
	s.room = 0
	return n, errDiskFull
}

// failAt gives the points where a write should fail: before anything, after a little, half way
// and on the last byte, so the header, the rows and the final flush each meet a failure.
func failAt(full int) []int {
	return []int{0, 10, full / 2, full - 1}
}

func TestPrintReturnsTheWriteError(t *testing.T) {
	for _, format := range Formats {
		p, err := NewPrinter(format, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var full bytes.Buffer
		if err := p.PrintReport(&full, sampleReport()); err != nil {
			t.Fatal(err)
		}
		for _, room := range failAt(full.Len()) {
			err := p.PrintReport(&shortWriter{room: room}, sampleReport())
			if !errors.Is(err, errDiskFull) {
				t.Errorf("%s with room for %d of %d bytes: err = %v, want %v", format, room, full.Len(), err, errDiskFull)
			}
		}
	}
}

func TestPrintExplainReturnsTheWriteError(t *testing.T) {
	d := ingester()
	if d.Detail == nil || len(d.Detail.Copies()) == 0 {
		t.Fatal("fixture has no copies table; the tabwriter path would go untested")
	}
	var full bytes.Buffer
	if err := PrintExplain(&full, &d); err != nil {
		t.Fatal(err)
	}
	for _, room := range failAt(full.Len()) {
		err := PrintExplain(&shortWriter{room: room}, &d)
		if !errors.Is(err, errDiskFull) {
			t.Errorf("room for %d of %d bytes: err = %v, want %v", room, full.Len(), err, errDiskFull)
		}
	}
	// The copies table comes last but for gaps and the fix: fail inside it too.
	tableAt := bytes.Index(full.Bytes(), []byte("\nCopies:\n"))
	if tableAt < 0 {
		t.Fatalf("no copies table in:\n%s", full.String())
	}
	if err := PrintExplain(&shortWriter{room: tableAt + 20}, &d); !errors.Is(err, errDiskFull) {
		t.Errorf("failure inside the copies table: err = %v, want %v", err, errDiskFull)
	}
}

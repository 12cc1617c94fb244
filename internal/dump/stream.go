package dump

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

const (
	// chunkSize is how much one read from the file asks for.
	chunkSize = 64 << 10
	// maxLogLine bounds one log line as kept, its cut mark included; kubelet itself splits what a
	// container writes into 16 KiB records, and no rule reads further into a line.
	maxLogLine = 64 << 10
	// maxStartLine bounds a line that begins like a log block's START line; a longer one is text.
	maxStartLine = 4 << 10
	// maxLogTailBytes and maxLogTailLines bound the tail of one container's log that is kept:
	// a log block is streamed through a window of its last lines, so that a dump of full logs
	// (kubelet rotates a container's log at 10 MiB) costs no more memory than this per
	// container. The engine reads every line it is given, and the logs of the test dumps (up
	// to 1,300 lines, 150 kB) are far inside it; the live source's 50 lines would change
	// diagnoses that need the earlier lines.
	maxLogTailBytes = 1 << 20
	maxLogTailLines = 10_000
)

var (
	startMarkerBytes = []byte(startMarker)
	// nlStartMarker is a START line's start after the newline that ends the line before.
	nlStartMarker = []byte("\n" + startMarker)
)

// shown is a name read from the file system or a file as an error shows it: as it is when it is
// plain text, quoted when it holds anything a terminal would act on (an escape sequence in a
// file name).
func shown(name string) string {
	if q := strconv.Quote(name); q[1:len(q)-1] != name {
		return q
	}
	return name
}

// inputError is a fault of the input itself, placed in the file; it is reported as is, never
// re-placed by the parser that met it.
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }

// budget is what the read of one file may consume. read counts the file's bytes; earlier, when
// set, counts the bytes read so far of the files before it, which are read at the same time.
// A file stops at --max-dump-size once those and its own pass it: a read of one file after the
// other would then stop there or sooner, which the merger, counting every file whole, decides.
type budget struct {
	maxObject, maxDump int64
	read               int64
	earlier            func() int64
	// published, when set, is told read after every read from the file.
	published *atomic.Int64
}

// over reports whether the bytes read have passed --max-dump-size.
func (b *budget) over() bool {
	n := b.read
	if b.earlier != nil {
		n += b.earlier()
	}
	return n > b.maxDump
}

// overDump is the error of a read that passed --max-dump-size in the file name.
func overDump(maxDump int64, name string) error {
	return &inputError{fmt.Sprintf("the dump is larger than %s (reached in %s); --max-dump-size raises the limit", mib(maxDump), shown(name))}
}

// stream reads one file as the parsers see it: log blocks are taken out (each leaves its
// newlines, so lines keep their numbers), binary data and invalid UTF-8 are rejected, and no
// object may exceed the budget's limit. It keeps in memory only the bytes from the mark (the
// start of the value being parsed) on, which is what places an error in the file.
type stream struct {
	ctx    context.Context
	src    io.Reader
	name   string // the file as errors name it
	budget *budget
	logs   []snapshot.ContainerLog
	// logsCut are the logs of logs longer than the tail kept.
	logsCut []cutLog

	raw  []byte // read, not yet processed: raw[rawR:]
	rawR int
	eof  bool
	bol  bool // raw[rawR] starts a line
	blk  *block

	out     []byte // clean bytes from outBase on; out[outR:] are not yet delivered
	outBase int64
	outR    int
	// retain keeps the bytes from mark on for the JSON parser; without it the mark follows
	// what was delivered.
	retain            bool
	mark              int64
	markLine, markCol int
	// removed maps clean offsets back to the file's: from clean offset at on, removed bytes of
	// log blocks precede.
	removed []shift
	err     error
}

type shift struct{ at, removed int64 }

func newStream(ctx context.Context, src io.Reader, name string, b *budget) *stream {
	return &stream{ctx: ctx, src: src, name: name, budget: b, bol: true, markLine: 1, markCol: 1, raw: make([]byte, 0, chunkSize)}
}

// maxReusedBuffer bounds the buffers a stream hands on to the next file's.
const maxReusedBuffer = 1 << 20

// reuse gives s the buffers of a stream whose file is done, which nothing points into any
// more (the decode pool copies items, log lines are strings): a dump of hundreds of files
// would otherwise leave two buffers of garbage per file.
func (s *stream) reuse(done *stream) {
	if done == nil {
		return
	}
	if cap(done.raw) >= chunkSize && cap(done.raw) <= maxReusedBuffer {
		s.raw = done.raw[:0]
	}
	if cap(done.out) <= maxReusedBuffer {
		s.out = done.out[:0]
	}
}

func (s *stream) tooLarge(at int64) error {
	return &inputError{fmt.Sprintf("object at %s:%d is larger than %s; --max-object-size raises the limit", shown(s.name), s.fileOffset(at), mib(s.budget.maxObject))}
}

func mib(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
}

// end is the clean offset after the last byte produced.
func (s *stream) end() int64 { return s.outBase + int64(len(s.out)) }

// delivered is the clean offset of the next byte to deliver.
func (s *stream) delivered() int64 { return s.outBase + int64(s.outR) }

// fill produces more clean bytes; it returns io.EOF when the file has none left.
func (s *stream) fill() error {
	if s.err != nil {
		return s.err
	}
	s.err = s.fillOnce()
	return s.err
}

func (s *stream) fillOnce() error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if !s.retain {
		s.setMark(s.delivered())
	}
	// Bytes before the mark are no longer needed.
	if drop := int(s.mark - s.outBase); drop > 0 && drop >= len(s.out)/2 {
		n := copy(s.out, s.out[drop:])
		s.out = s.out[:n]
		s.outBase += int64(drop)
		s.outR -= drop
	}
	if s.retain && s.end()-s.mark > s.budget.maxObject+chunkSize {
		return s.tooLarge(s.mark)
	}
	for before := len(s.out); len(s.out) == before; {
		if s.eof && s.rawR == len(s.raw) && s.blk == nil {
			return io.EOF
		}
		if !s.eof {
			if err := s.readRaw(); err != nil {
				return err
			}
		}
		if err := s.process(); err != nil {
			return err
		}
		if err := s.ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

func (s *stream) readRaw() error {
	if s.rawR > 0 {
		n := copy(s.raw, s.raw[s.rawR:])
		s.raw, s.rawR = s.raw[:n], 0
	}
	if cap(s.raw)-len(s.raw) < chunkSize {
		s.raw = append(s.raw, make([]byte, chunkSize)...)[:len(s.raw)]
	}
	// Always one chunk, whatever the buffer's size, so a file is read in the same pieces
	// whichever file's buffer it reuses: where --max-dump-size stops a read depends on nothing
	// else.
	n, err := s.src.Read(s.raw[len(s.raw) : len(s.raw)+chunkSize])
	s.raw = s.raw[:len(s.raw)+n]
	s.budget.read += int64(n)
	if s.budget.published != nil {
		s.budget.published.Store(s.budget.read)
	}
	if s.budget.over() {
		return overDump(s.budget.maxDump, s.name)
	}
	switch {
	case errors.Is(err, io.EOF):
		s.eof = true
	case err != nil:
		return err
	}
	return nil
}

// process turns what raw holds into clean bytes and log blocks, leaving in raw only what needs
// more input to be decided.
func (s *stream) process() error {
	for {
		if s.blk != nil {
			done, err := s.blockLines()
			if err != nil || !done {
				return err
			}
			continue
		}
		data := s.raw[s.rawR:]
		if len(data) == 0 {
			return nil
		}
		if s.bol && (bytes.HasPrefix(data, startMarkerBytes) || (!s.eof && bytes.HasPrefix(startMarkerBytes, data))) {
			if len(data) < len(startMarkerBytes) {
				return nil
			}
			i := bytes.IndexByte(data, '\n')
			if i < 0 && !s.eof && len(data) < maxStartLine {
				return nil
			}
			line := data
			if i >= 0 {
				line = data[:i+1]
			}
			if m := startLine.FindSubmatch(bytes.TrimRight(line, "\n")); m != nil {
				l := snapshot.ContainerLog{Container: string(m[1]), Namespace: string(m[2]), Pod: string(m[3]), Previous: len(m[4]) > 0}
				line, _ := s.position(s.end())
				s.blk = &block{log: l, end: []byte(endMarker(&l)), startLine: line, startOff: s.end(), size: int64(len(data[:min(i+1, len(data))]))}
				if i >= 0 {
					s.blk.newlines = 1
				}
				s.rawR += min(i+1, len(data))
				if i < 0 {
					s.rawR = len(s.raw)
				}
				continue
			}
			// Not a START line after all: it is text.
			if err := s.emit(line); err != nil {
				return err
			}
			s.rawR += len(line)
			s.bol = line[len(line)-1] == '\n'
			continue
		}
		if i := nextStartLine(data); i >= 0 {
			if err := s.emit(data[:i+1]); err != nil {
				return err
			}
			s.rawR += i + 1
			s.bol = true
			continue
		}
		cut := len(data)
		if !s.eof {
			// Keep back what may be the start of "\n==== START", and never split a rune.
			cut -= len(nlStartMarker) - 1
			for k := 0; k < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(data[cut]); k++ {
				cut--
			}
			if cut <= 0 {
				return nil
			}
		}
		if err := s.emit(data[:cut]); err != nil {
			return err
		}
		s.rawR += cut
		s.bol = data[cut-1] == '\n'
		if cut == len(data) || !s.eof {
			return nil
		}
	}
}

// nextStartLine returns the offset of the newline before the first "==== START" in data that
// begins a line, or -1. It looks for the marker itself: '=' is rare in JSON and YAML, where
// a newline ends every few bytes and would make most of them a candidate.
func nextStartLine(data []byte) int {
	for off := 1; off < len(data); {
		j := bytes.Index(data[off:], startMarkerBytes)
		if j < 0 {
			return -1
		}
		j += off
		if data[j-1] == '\n' {
			return j - 1
		}
		off = j + 1
	}
	return -1
}

// emit appends text to the clean bytes, rejecting binary data and invalid UTF-8.
func (s *stream) emit(seg []byte) error {
	at := s.end()
	s.out = append(s.out, seg...)
	if i := bytes.IndexByte(seg, 0); i >= 0 {
		return s.faultAt(at+int64(i), "binary data, not JSON, YAML or kubectl log output")
	}
	if utf8.Valid(seg) {
		return nil
	}
	for i := 0; i < len(seg); {
		r, n := utf8.DecodeRune(seg[i:])
		if r == utf8.RuneError && n <= 1 {
			return s.faultAt(at+int64(i), "invalid UTF-8, not JSON, YAML or kubectl log output")
		}
		i += n
	}
	return nil
}

func (s *stream) faultAt(off int64, what string) error {
	line, col := s.position(off)
	return &inputError{fmt.Sprintf("line %d, column %d (offset %d): %s", line, col, s.fileOffset(off), what)}
}

// fileOffset turns a clean offset into the file's.
func (s *stream) fileOffset(off int64) int64 {
	i := sort.Search(len(s.removed), func(i int) bool { return s.removed[i].at > off })
	if i == 0 {
		return off
	}
	return off + s.removed[i-1].removed
}

// position is the line and column of a clean offset at or after the mark.
func (s *stream) position(off int64) (line, col int) {
	off = min(max(off, s.mark), s.end())
	seg := s.out[s.mark-s.outBase : off-s.outBase]
	nl := bytes.Count(seg, []byte{'\n'})
	if nl == 0 {
		return s.markLine, s.markCol + len(seg)
	}
	return s.markLine + nl, len(seg) - bytes.LastIndexByte(seg, '\n')
}

// setMark moves the mark forward to off: bytes before it are no longer kept.
func (s *stream) setMark(off int64) {
	if off <= s.mark {
		return
	}
	s.markLine, s.markCol = s.position(off)
	s.mark = min(off, s.end())
}

// Read delivers clean bytes, for the JSON decoder.
func (s *stream) Read(p []byte) (int, error) {
	for s.outR == len(s.out) {
		if err := s.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, s.out[s.outR:])
	s.outR += n
	return n, nil
}

// readLine delivers the next line, its newline included, for the YAML reader; the slice is
// valid until the next call. It returns io.EOF after the last line.
func (s *stream) readLine() ([]byte, error) {
	for searched := 0; ; {
		rest := s.out[s.outR:]
		if i := bytes.IndexByte(rest[searched:], '\n'); i >= 0 {
			line := rest[:searched+i+1]
			s.outR += len(line)
			return line, nil
		}
		searched = len(rest)
		if int64(len(rest)) > s.budget.maxObject {
			return nil, s.tooLarge(s.delivered())
		}
		if err := s.fill(); err != nil {
			if errors.Is(err, io.EOF) && len(rest) > 0 {
				s.outR = len(s.out)
				return s.out[len(s.out)-len(rest):], nil
			}
			return nil, err
		}
	}
}

// firstByte is the first byte that is not white space, or 0 for a blank file.
func (s *stream) firstByte() (byte, error) {
	for i := s.outR; ; i++ {
		for i == len(s.out) {
			if err := s.fill(); err != nil {
				if errors.Is(err, io.EOF) {
					return 0, nil
				}
				return 0, err
			}
			i = max(i, s.outR)
		}
		switch c := s.out[i]; c {
		case ' ', '\t', '\r', '\n':
		default:
			return c, nil
		}
	}
}

// skip returns the offset of the first byte at or after off that is not white space (nor a
// separator, with seps); off must have been delivered.
func (s *stream) skip(off int64, seps bool) int64 {
	for i := off - s.outBase; i < int64(len(s.out)); i++ {
		switch s.out[i] {
		case ' ', '\t', '\r', '\n':
		case ',', ':':
			if !seps {
				return s.outBase + i
			}
		default:
			return s.outBase + i
		}
	}
	return s.end()
}

// slice is the clean bytes from a to b, both at or after the mark.
func (s *stream) slice(a, b int64) []byte {
	return s.out[a-s.outBase : b-s.outBase]
}

// locate places a clean offset at or after the mark.
func (s *stream) locate(off int64) location {
	line, col := s.position(off)
	return location{line: line, col: col, offset: s.fileOffset(off)}
}

func isBlank(b []byte) bool { return len(strings.TrimSpace(string(b))) == 0 }

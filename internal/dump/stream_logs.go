package dump

import (
	"bytes"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// cutLog is a log, by its index in stream.logs, of which lines were not kept.
type cutLog struct{ log, lines int }

// block is a log block being read.
type block struct {
	log snapshot.ContainerLog
	// first is the first line of log.Lines still in the tail; kept is the bytes from it on.
	first, kept int
	// dropped counts the lines before the tail.
	dropped   int
	end       []byte
	startLine int
	startOff  int64 // clean offset where it began
	line      []byte
	cut       int64  // bytes of the current line not kept
	tail      []byte // the current line's last bytes, once it is cut, to find END on it
	newlines  int
	size      int64
}

// blockLines reads the lines of the current log block; it reports whether the block ended.
func (s *stream) blockLines() (bool, error) {
	b := s.blk
	for {
		data := s.raw[s.rawR:]
		i := bytes.IndexByte(data, '\n')
		piece := data
		if i >= 0 {
			piece = data[:i]
		}
		b.add(piece)
		s.rawR += len(piece)
		b.size += int64(len(piece))
		if i < 0 && !s.eof {
			return false, nil
		}
		if i >= 0 {
			s.rawR++
			b.size++
			b.newlines++
		}
		if b.finishLine() {
			s.endBlock()
			return true, nil
		}
		if i < 0 {
			return false, &inputError{fmt.Sprintf("line %d: log block of container %s of pod %s/%s has no END line; the file is truncated",
				b.startLine, shown(b.log.Container), shown(b.log.Namespace), shown(b.log.Pod))}
		}
	}
}

// add appends part of the current line, keeping at most maxLogLine bytes of it.
func (b *block) add(p []byte) {
	keep := maxLogLine - 80 // room for the cut mark
	if b.cut == 0 && len(b.line)+len(p) <= keep {
		b.line = append(b.line, p...)
		return
	}
	if b.cut == 0 {
		// tail holds the line's last bytes from here on, to find the END marker on it.
		b.tail = append(b.tail[:0], b.line[max(0, len(b.line)-len(b.end)-16):]...)
	}
	if room := keep - len(b.line); room > 0 {
		// Cut on a rune boundary so the line stays valid text.
		n := min(room, len(p))
		for n > 0 && n < len(p) && !utf8.RuneStart(p[n]) {
			n--
		}
		b.line = append(b.line, p[:n]...)
		p = p[n:]
	}
	b.cut += int64(len(p))
	b.tail = append(b.tail, p...)
	if over := len(b.tail) - (len(b.end) + 16); over > 0 {
		b.tail = b.tail[over:]
	}
}

// finishLine ends the current line; it reports whether the line was the END line, which may
// follow the last log line without a newline.
func (b *block) finishLine() bool {
	full := b.line
	if b.cut > 0 {
		full = b.tail
	}
	trimmed := bytes.TrimRight(full, "\r")
	if !bytes.HasSuffix(trimmed, b.end) {
		b.keepLine()
		return false
	}
	drop := int64(len(full) - len(trimmed) + len(b.end))
	if drop <= b.cut {
		b.cut -= drop
	} else {
		b.line = b.line[:len(b.line)-int(drop-b.cut)]
		b.cut = 0
	}
	if len(b.line) > 0 || b.cut > 0 {
		b.keepLine()
	}
	return true
}

func (b *block) keepLine() {
	line := string(b.line)
	if b.cut > 0 {
		line += fmt.Sprintf(" [kubectl-diagnose cut %d more bytes of this line]", b.cut)
	}
	b.log.Lines = append(b.log.Lines, line)
	b.kept += len(line)
	for len(b.log.Lines)-b.first > maxLogTailLines || b.kept > maxLogTailBytes {
		b.kept -= len(b.log.Lines[b.first])
		b.log.Lines[b.first] = ""
		b.first++
		b.dropped++
	}
	if b.first >= 1024 && b.first >= len(b.log.Lines)/2 {
		n := copy(b.log.Lines, b.log.Lines[b.first:])
		clear(b.log.Lines[n:])
		b.log.Lines, b.first = b.log.Lines[:n], 0
	}
	b.line, b.tail, b.cut = b.line[:0], b.tail[:0], 0
}

// endBlock replaces the block by its newlines and files its log.
func (s *stream) endBlock() {
	b := s.blk
	s.blk = nil
	if b.first > 0 {
		b.log.Lines = slices.Clone(b.log.Lines[b.first:])
	}
	if b.dropped > 0 {
		s.logsCut = append(s.logsCut, cutLog{log: len(s.logs), lines: b.dropped})
	}
	s.logs = append(s.logs, b.log)
	s.out = append(s.out, bytes.Repeat([]byte{'\n'}, b.newlines)...)
	prev := int64(0)
	if n := len(s.removed); n > 0 {
		prev = s.removed[n-1].removed
	}
	s.removed = append(s.removed, shift{at: s.end(), removed: prev + b.size - int64(b.newlines)})
	s.bol = true
}

package report

import (
	"encoding/json"
	"io"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonStream writes a document as writeJSON does (encoding/json, then indentJSON, then
// escapeJSON) but in one pass and in pieces: a 20,000-pod cluster's report is 70 MB, and the
// three whole-document copies cost a second of CPU and a third of the audit's peak memory.
// The report types' writers (stream_types.go) drive it member by member;
// TestStreamWritesEveryField holds the two to the same bytes on every field of every type.
//
// A value encoding/json refuses (a NaN, a year past 9999) must fail the document before any
// of it is written, as writeJSON does: so a document is first walked with check set, which
// writes nothing and only validates, then written.
type jsonStream struct {
	w   io.Writer
	buf []byte
	// depth is the nesting of the container being written; first is true until it has a member.
	depth int
	first bool
	check bool
	// scratch is where check formats times, to see whether they can be.
	scratch []byte
	err     error
}

// streamFlush is how much output the stream holds before handing it to the writer.
const streamFlush = 64 << 10

// streamJSON writes v through write, validated first.
func streamJSON[T any](w io.Writer, v T, write func(*jsonStream, T)) error {
	if err := checkJSON(v, write); err != nil {
		return err
	}
	e := &jsonStream{w: w}
	e.buf = make([]byte, 0, streamFlush+streamFlush/4)
	write(e, v)
	if e.err != nil {
		return e.err
	}
	e.buf = append(e.buf, '\n')
	e.flush()
	return e.err
}

// checkJSON returns the error encoding/json would give for v, written by write, without
// writing it.
func checkJSON[T any](v T, write func(*jsonStream, T)) error {
	e := &jsonStream{check: true}
	write(e, v)
	return e.err
}

// flush hands the held output to the writer; after a failed write it drops it, so the rest
// of a document does not pile up behind the error.
func (e *jsonStream) flush() {
	if e.err == nil && len(e.buf) > 0 {
		_, e.err = e.w.Write(e.buf)
	}
	e.buf = e.buf[:0]
}

// member starts the next member of the innermost container: separator, line break, indent.
func (e *jsonStream) member() {
	if e.check {
		return
	}
	if len(e.buf) >= streamFlush {
		e.flush()
	}
	if !e.first {
		e.buf = append(e.buf, ',')
	}
	e.first = false
	e.newline()
}

const indentSpaces = "                                                                "

func (e *jsonStream) newline() {
	e.buf = append(e.buf, '\n')
	for n := 2 * e.depth; n > 0; n -= len(indentSpaces) {
		e.buf = append(e.buf, indentSpaces[:min(n, len(indentSpaces))]...)
	}
}

// open starts an object or array; close ends it, on one line when it is empty, as json.Indent does.
func (e *jsonStream) open(c byte) {
	if e.check {
		return
	}
	e.buf = append(e.buf, c)
	e.depth++
	e.first = true
}

func (e *jsonStream) close(c byte) {
	if e.check {
		return
	}
	e.depth--
	if !e.first {
		e.newline()
	}
	e.buf = append(e.buf, c)
	e.first = false
}

// key starts an object member named k, a struct tag's name: no character in it needs escaping.
func (e *jsonStream) key(k string) {
	if e.check {
		return
	}
	e.member()
	e.buf = append(e.buf, '"')
	e.buf = append(e.buf, k...)
	e.buf = append(e.buf, '"', ':', ' ')
}

// mapKey starts an object member named by a map key, which may need escaping.
func (e *jsonStream) mapKey(k string) {
	if e.check {
		return
	}
	e.member()
	e.str(k)
	e.buf = append(e.buf, ':', ' ')
}

func (e *jsonStream) null() {
	if !e.check {
		e.buf = append(e.buf, "null"...)
	}
}

func (e *jsonStream) bool(b bool) {
	if !e.check {
		e.buf = strconv.AppendBool(e.buf, b)
	}
}

func (e *jsonStream) int(i int64) {
	if !e.check {
		e.buf = strconv.AppendInt(e.buf, i, 10)
	}
}

// float writes f as encoding/json writes a float64: ES6 number formatting, exponents unpadded.
func (e *jsonStream) float(f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		e.fail(f)
		return
	}
	if e.check {
		return
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	e.buf = strconv.AppendFloat(e.buf, f, format, -1, 64)
	if format == 'e' {
		if n := len(e.buf); n >= 4 && e.buf[n-4] == 'e' && e.buf[n-3] == '-' && e.buf[n-2] == '0' {
			e.buf[n-2] = e.buf[n-1]
			e.buf = e.buf[:n-1]
		}
	}
}

// time writes t as time.Time's MarshalJSON does.
func (e *jsonStream) time(t time.Time) { e.timeVia(t, false) }

// timeVia writes t; viaPointer says it was reached through a *time.Time, which encoding/json's
// error names as the type.
func (e *jsonStream) timeVia(t time.Time, viaPointer bool) {
	if e.check {
		var err error
		if e.scratch, err = t.AppendText(e.scratch[:0]); err != nil {
			e.failTime(t, viaPointer)
		}
		return
	}
	n := len(e.buf)
	b, err := t.AppendText(append(e.buf, '"'))
	if err != nil {
		e.buf = e.buf[:n]
		e.failTime(t, viaPointer)
		return
	}
	e.buf = append(b, '"')
}

// failTime records the error encoding/json gives for t; a separate function so that only a
// failing time is moved to the heap.
func (e *jsonStream) failTime(t time.Time, viaPointer bool) {
	if viaPointer {
		e.fail(&t)
	} else {
		e.fail(t)
	}
}

// fail records the error encoding/json gives for v, word for word.
func (e *jsonStream) fail(v any) {
	if e.err == nil {
		_, e.err = json.Marshal(v)
	}
}

// jsonSafe marks the ASCII bytes written as themselves: those encoding/json with HTML escaping
// writes as themselves, but DEL, which escapeJSON escapes after it.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' && c != 0x7f
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// str writes s as a JSON string the way encoding/json escapes it (controls, quotes, <, >, &,
// U+2028, U+2029, bytes that are not UTF-8 as \ufffd) with the invisible characters
// escapeJSON escapes after it (C1 controls, format characters, noncharacters).
func (e *jsonStream) str(s string) {
	if e.check {
		return
	}
	b := append(e.buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029' || invisible(r):
			b = append(b, s[start:i]...)
			if r > 0xffff {
				hi, lo := utf16.EncodeRune(r)
				b = appendU(appendU(b, hi), lo)
			} else {
				b = appendU(b, r)
			}
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	e.buf = append(b, '"')
}

// appendU appends the \u escape of a UTF-16 code unit.
func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// streamSlice writes s as an array of write's elements; a nil slice is null, as encoding/json
// writes it.
func streamSlice[T any](e *jsonStream, s []T, write func(*jsonStream, *T)) {
	if s == nil {
		e.null()
		return
	}
	e.open('[')
	for i := range s {
		if e.err != nil {
			return // the writer failed: the document is lost
		}
		e.member()
		write(e, &s[i])
	}
	e.close(']')
}

// streamCounts writes a map of counts with its keys sorted, as encoding/json does.
func streamCounts[K ~string](e *jsonStream, m map[K]int) {
	if e.check {
		return
	}
	if m == nil {
		e.null()
		return
	}
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.open('{')
	for _, k := range keys {
		e.mapKey(string(k))
		e.int(int64(m[k]))
	}
	e.close('}')
}

func (e *jsonStream) strings(s []string) {
	streamSlice(e, s, func(e *jsonStream, s *string) { e.str(*s) })
}

func (e *jsonStream) timePtr(t *time.Time) {
	if t == nil {
		e.null()
		return
	}
	e.timeVia(*t, true)
}

func (e *jsonStream) floatPtr(f *float64) {
	if f == nil {
		e.null()
		return
	}
	e.float(*f)
}

func (e *jsonStream) int64Ptr(i *int64) {
	if i == nil {
		e.null()
		return
	}
	e.int(*i)
}

// streamPtr writes *p through write, or null.
func streamPtr[T any](e *jsonStream, p *T, write func(*jsonStream, *T)) {
	if p == nil {
		e.null()
		return
	}
	write(e, p)
}

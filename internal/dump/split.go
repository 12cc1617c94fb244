package dump

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// jsonDecoder is the JSON decoder of a stream, placed in it: base is the clean offset of the
// decoder's first byte. The items of a list are split by splitItems, which reads the stream
// itself; the decoder is then replaced by one that starts where the split stopped, fed a short
// prefix that puts it in the state the first one would have reached.
type jsonDecoder struct {
	*json.Decoder
	base int64
	// scanBase is what the offset of a syntax error met in a value counts from: the decoder
	// counts only the bytes of values it scanned, the prefix's included.
	scanBase int64
}

func newJSONDecoder(s *stream) *jsonDecoder {
	return &jsonDecoder{Decoder: json.NewDecoder(s)}
}

// InputOffset is the clean offset of the decoder's position.
func (d *jsonDecoder) InputOffset() int64 { return d.base + d.Decoder.InputOffset() }

// restart makes the decoder read the stream from off on, after it has read prefix, which
// stands for the bytes before off; scanned of them are inside values.
func (d *jsonDecoder) restart(s *stream, off int64, prefix string, scanned int) {
	// off is never before the mark, which the stream keeps the bytes from.
	s.outR = int(max(off, s.outBase) - s.outBase)
	d.Decoder = json.NewDecoder(io.MultiReader(strings.NewReader(prefix), s))
	d.base = off - int64(len(prefix))
	d.scanBase = off - int64(scanned)
}

func (d *jsonDecoder) fail(s *stream, err error) error {
	return jsonError(s, err, d.InputOffset(), d.scanBase)
}

func (d *jsonDecoder) failToken(s *stream, err error) error {
	return tokenError(s, err, d.InputOffset(), d.base)
}

// maxNesting is encoding/json's limit; deeper input is left to it, to fail as it fails.
const maxNesting = 10000

// splitItems reads the items of a list, whose '[' dec has just returned, straight from the
// stream: each item is checked to be valid JSON by a scan of its bytes and handed to item with
// its clean offset, without the decoder's two passes over it. It reports whether it read the
// whole array; when it meets anything it does not take plainly (a syntax error, the end of the
// file), it leaves dec to read the array on from the first item not read, so that errors are
// the decoder's own.
func splitItems(s *stream, dec *jsonDecoder, item func(raw []byte, off int64, head *headScan) error) (bool, error) {
	var head headScan
	pos := dec.InputOffset()
	first := true
	// at and prefix say where the decoder takes over, should the split stop short: at pos,
	// before a separator or the first item, or at an item whose separator was read.
	at, prefix := pos, "["
	for {
		i, ok := s.skipSpaceAt(pos)
		if !ok {
			break
		}
		c := s.out[i-s.outBase]
		if c == ']' {
			// The rest of the object is the decoder's again, as after "items": [...].
			dec.restart(s, i+1, `{"items":0`, len(`"items"0`))
			for range 2 {
				if _, err := dec.Token(); err != nil {
					return false, dec.failToken(s, err)
				}
			}
			var zero int
			if err := dec.Decode(&zero); err != nil {
				return false, dec.fail(s, err)
			}
			return true, nil
		}
		if !first {
			if c != ',' {
				break
			}
			if i, ok = s.skipSpaceAt(i + 1); !ok {
				break
			}
		}
		// The mark is where the decoder would put it: at the item, past its separator.
		s.setMark(i)
		at, prefix = i, "["
		if !first {
			prefix = "[0,"
		}
		end, ok := s.scanValue(i, &head)
		if !ok {
			break
		}
		if err := item(s.slice(i, end), i, &head); err != nil {
			return false, err
		}
		pos, first = end, false
		at, prefix = pos, "[0"
	}
	dec.restart(s, at, prefix, len(strings.Trim(prefix, "[,")))
	if _, err := dec.Token(); err != nil {
		return false, dec.failToken(s, err)
	}
	if prefix != "[" {
		var zero int
		if err := dec.Decode(&zero); err != nil {
			return false, dec.fail(s, err)
		}
	}
	return false, nil
}

// skipSpaceAt returns the clean offset of the first byte at or after off that is not white
// space, reading on as needed; false at the end of the file or on a read error, which the
// decoder then meets again.
func (s *stream) skipSpaceAt(off int64) (int64, bool) {
	for {
		for i := off - s.outBase; i < int64(len(s.out)); i++ {
			switch s.out[i] {
			case ' ', '\t', '\r', '\n':
			default:
				return s.outBase + i, true
			}
		}
		off = s.end()
		if s.more(off) != nil {
			return 0, false
		}
	}
}

// more reads on until the stream holds bytes past off.
func (s *stream) more(off int64) error {
	for s.end() <= off {
		s.outR = len(s.out)
		if err := s.fill(); err != nil {
			return err
		}
	}
	s.outR = len(s.out)
	return nil
}

// scanValue checks the JSON value at the clean offset off (the mark) and returns the offset
// after it; false when it is not valid JSON or the file ends inside it. Short of bytes, it
// reads until the stream holds twice as many as it did, then scans again, so a large value
// costs a bounded number of scans.
func (s *stream) scanValue(off int64, head *headScan) (int64, bool) {
	for {
		n, res := validValue(s.out[off-s.outBase:], head)
		switch res {
		case scanOK:
			return off + int64(n), true
		case scanBad:
			return 0, false
		}
		want := off + 2*max(s.end()-off, 4<<10)
		for s.end() < want {
			s.outR = len(s.out)
			if err := s.fill(); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return 0, false
			}
		}
		if s.eof && s.rawR == len(s.raw) && s.blk == nil && s.end() < want {
			// At the end of the file: one last scan says whether the value is whole.
			n, res := validValue(s.out[off-s.outBase:], head)
			if res == scanOK {
				return off + int64(n), true
			}
			return 0, false
		}
	}
}

const (
	scanOK = iota
	scanBad
	scanShort // the bytes end inside the value
)

// validValue checks the JSON value at the start of b as encoding/json's scanner does and
// returns its length. A number at the very end of b is short, since more digits may follow.
//
// When head is not nil, it is given the value's apiVersion and kind as json.Unmarshal into
// typeMeta reads them, with ok false where the scan cannot tell (escapes, keys that match only
// without case, values that are not plain strings), so the object is scanned once.
func validValue(b []byte, head *headScan) (int, int) {
	var stack []byte // '{' or '[' of each open container
	var buf [64]byte
	stack = buf[:0]
	i := 0
	if head != nil {
		*head = headScan{ok: len(b) > 0 && b[0] == '{'}
	}
	for {
		// A value.
		if i >= len(b) {
			return 0, scanShort
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if len(stack) >= maxNesting {
				return 0, scanBad
			}
			stack = append(stack, c)
			i++
			j, ok := skipWS(b, i)
			if !ok {
				return 0, scanShort
			}
			i = j
			if (c == '{' && b[i] == '}') || (c == '[' && b[i] == ']') {
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if c == '{' {
				var res int
				if i, res = objectKey(b, i, head, len(stack) == 1); res != scanOK {
					return 0, res
				}
			}
			continue
		case c == '"':
			j, res := stringEnd(b, i)
			if res != scanOK {
				return 0, res
			}
			i = j
		case c == '-' || (c >= '0' && c <= '9'):
			j, res := numberEnd(b, i)
			if res != scanOK {
				return 0, res
			}
			i = j
		case c == 't':
			if res := literal(b, i, "true"); res != scanOK {
				return 0, res
			}
			i += 4
		case c == 'f':
			if res := literal(b, i, "false"); res != scanOK {
				return 0, res
			}
			i += 5
		case c == 'n':
			if res := literal(b, i, "null"); res != scanOK {
				return 0, res
			}
			i += 4
		default:
			return 0, scanBad
		}
		// After a value: close containers, or go on to the next element.
		for {
			if len(stack) == 0 {
				return i, scanOK
			}
			j, ok := skipWS(b, i)
			if !ok {
				return 0, scanShort
			}
			i = j
			top := stack[len(stack)-1]
			if b[i] == ',' {
				i++
				if j, ok = skipWS(b, i); !ok {
					return 0, scanShort
				}
				i = j
				if top == '{' {
					var res int
					if i, res = objectKey(b, i, head, len(stack) == 1); res != scanOK {
						return 0, res
					}
				}
				break
			}
			if (top == '{' && b[i] == '}') || (top == '[' && b[i] == ']') {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			return 0, scanBad
		}
	}
}

func skipWS(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] > ' ' {
		return i, true // the common case: no white space at all
	}
	for ; i < len(b); i++ {
		// Indented JSON has long runs of spaces: pass them eight at a time.
		for i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:]) == eightSpaces {
			i += 8
		}
		if i == len(b) {
			break
		}
		switch b[i] {
		case ' ', '\t', '\r', '\n':
		default:
			return i, true
		}
	}
	return i, false
}

const eightSpaces = 0x2020202020202020

// plainByte is true of the bytes a JSON string holds as they are: not '"', '\\' or a control
// character.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// headScan is the apiVersion and kind validValue found; ok says they are what json.Unmarshal
// would read.
type headScan struct {
	tm typeMeta
	ok bool
}

// objectKey reads `"key" :` and the white space after it, up to the value; top says the key
// is the scanned value's own, to note in head.
func objectKey(b []byte, i int, head *headScan, top bool) (int, int) {
	if b[i] != '"' {
		return 0, scanBad
	}
	start := i
	i, res := stringEnd(b, i)
	if res != scanOK {
		return 0, res
	}
	key := b[start+1 : i-1]
	i, ok := skipWS(b, i)
	if !ok {
		return 0, scanShort
	}
	if b[i] != ':' {
		return 0, scanBad
	}
	if i, ok = skipWS(b, i+1); !ok {
		return 0, scanShort
	}
	if top && head != nil && head.ok {
		head.note(key, b, i)
	}
	return i, scanOK
}

func (h *headScan) note(key, b []byte, value int) {
	var field *string
	switch {
	case len(key) != 4 && len(key) != 10:
		if bytes.IndexByte(key, '\\') >= 0 {
			h.ok = false // an escape may spell either name
		}
		return
	case string(key) == "apiVersion":
		field = &h.tm.APIVersion
	case string(key) == "kind":
		field = &h.tm.Kind
	case bytes.EqualFold(key, []byte("apiVersion")) || bytes.EqualFold(key, []byte("kind")) || bytes.IndexByte(key, '\\') >= 0:
		h.ok = false // json.Unmarshal matches keys without case
		return
	default:
		return
	}
	v, _, ok := plainString(b, value)
	if !ok {
		h.ok = false
		return
	}
	*field = v
}

// stringEnd returns the offset after the string starting at b[i].
func stringEnd(b []byte, i int) (int, int) {
	for i++; i < len(b); {
		for i < len(b) && plainByte[b[i]] {
			i++
		}
		if i == len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, scanOK
		case c == '\\':
			if i+1 >= len(b) {
				return 0, scanShort
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := 2; k < 6; k++ {
					if i+k >= len(b) {
						return 0, scanShort
					}
					if !isHex(b[i+k]) {
						return 0, scanBad
					}
				}
				i += 6
			default:
				return 0, scanBad
			}
		case c < 0x20:
			return 0, scanBad
		default:
			i++
		}
	}
	return 0, scanShort
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// numberEnd returns the offset after the number starting at b[i]; a number that reaches the
// end of b is short.
func numberEnd(b []byte, i int) (int, int) {
	digits := func() bool {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > start
	}
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return 0, scanShort
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		digits()
	default:
		return 0, scanBad
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			if i >= len(b) {
				return 0, scanShort
			}
			return 0, scanBad
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			if i >= len(b) {
				return 0, scanShort
			}
			return 0, scanBad
		}
	}
	if i >= len(b) {
		return 0, scanShort
	}
	return i, scanOK
}

func literal(b []byte, i int, lit string) int {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(b) {
			return scanShort
		}
		if b[i+k] != lit[k] {
			return scanBad
		}
	}
	return scanOK
}

// splitListItems reads a list's items with splitItems and, where it stops short, with the
// decoder, as jsonObject always did.
func (p *parser) splitListItems(s *stream, dec *jsonDecoder, n *int, def schema.GroupVersionKind, known bool, pending *[]pendingItem) error {
	one := func(raw []byte, off int64, head *headScan) error {
		it := s.locate(off)
		it.text, it.item = raw, itemName(*n)
		*n++
		if !known {
			p.deferred = pending
		}
		if head != nil && head.ok {
			p.head = &head.tm
		}
		err := p.value(raw, it, def, 1)
		p.deferred, p.head = nil, nil
		return err
	}
	done, err := splitItems(s, dec, one)
	if err != nil || done {
		return err
	}
	var raw json.RawMessage
	for dec.More() {
		// The decoder may stand on the separator its prefix stands for, before the mark.
		off := s.skip(max(dec.InputOffset(), s.mark), true)
		s.setMark(off)
		if err := dec.Decode(&raw); err != nil {
			return dec.fail(s, err)
		}
		if err := one(raw, off, nil); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return dec.fail(s, err)
	}
	return nil
}

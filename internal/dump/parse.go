package dump

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubediagnose/kubectl-diagnose/internal/boundedyaml"
)

// location says where a value sits in a file, for error messages. A JSON value is placed by
// line and column; text is the value itself and rel the place inside it, so that a part of the
// value is placed without the file at hand. A value converted from YAML is placed by the line its
// document (or its list item) starts on.
type location struct {
	line, col int
	offset    int64
	text      []byte
	rel       int
	yaml      bool
	docLine   int
	itemLine  int
	item      string
}

func (l location) String() string {
	var s string
	if !l.yaml {
		line, col := l.line, l.col
		if l.rel > 0 {
			seg := l.text[:min(l.rel, len(l.text))]
			if nl := bytes.Count(seg, []byte{'\n'}); nl > 0 {
				line, col = line+nl, len(seg)-bytes.LastIndexByte(seg, '\n')
			} else {
				col += len(seg)
			}
		}
		s = fmt.Sprintf("line %d, column %d", line, col)
	} else {
		s = fmt.Sprintf("YAML document at line %d", l.docLine)
	}
	if l.item != "" {
		s += ", " + l.item
	}
	if l.itemLine > 0 {
		s += fmt.Sprintf(" (line %d)", l.itemLine)
	}
	return s
}

// child places the i-th item of a list found at offset off of the value l places.
func (l location) child(i, off int) location {
	c := l
	if l.item != "" {
		c.item = fmt.Sprintf("%s.items[%d]", l.item, i)
	} else {
		c.item = itemName(i)
	}
	c.rel = l.rel + off
	return c
}

// itemName is how a location names the i-th item of a list, as fmt's "items[%d]" would: it
// is made for every item read, and fmt was a per cent of the parser's time.
func itemName(i int) string {
	return "items[" + strconv.Itoa(i) + "]"
}

func (l location) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{l}, args...)...)
}

func skipSpace(text []byte, i int) int {
	for i < len(text) {
		switch text[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// skipSeparator skips what lies between two values of a JSON array or two keys of an object.
func skipSeparator(text []byte, i int) int {
	for i < len(text) {
		switch text[i] {
		case ' ', '\t', '\r', '\n', ',', ':':
			i++
		default:
			return i
		}
	}
	return i
}

// pendingItem is a list item without apiVersion or kind met before the list's own kind, read
// once the list ends.
type pendingItem struct {
	raw []byte
	at  location
}

// listKind checks the apiVersion and kind of a list read around its items and returns the
// kind its items default to (none for a plain List). A PodList, even an empty one, tells that
// the dump holds the pods it was asked for (listedOf).
func (p *parser) listKind(at location, apiVersion, kind string) (schema.GroupVersionKind, error) {
	if apiVersion == "" || kind == "" {
		return emptyGVK, at.errorf("not a Kubernetes object: it has no apiVersion and kind")
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return emptyGVK, at.errorf("%w", err)
	}
	if !strings.HasSuffix(kind, "List") {
		return emptyGVK, at.errorf("%s %s has an items list, which only a List has", apiVersion, kind)
	}
	if kind == "List" {
		return emptyGVK, nil
	}
	def := gv.WithKind(strings.TrimSuffix(kind, "List"))
	p.out.listed |= listedOf(def)
	return def, nil
}

// items reads pending items once the list's kind is known.
func (p *parser) pendingItems(pending []pendingItem, def schema.GroupVersionKind) error {
	for _, it := range pending {
		if err := p.value(it.raw, it.at, def, 1); err != nil {
			return err
		}
	}
	return nil
}

// jsonStream reads a stream of JSON values: what kubectl get -o json writes, and what
// kubectl cluster-info dump writes to stdout. The items of a list are decoded one at a time, so
// memory holds the objects kept and one item's text, never the file.
func (p *parser) jsonStream(s *stream) error {
	s.retain = true
	dec := newJSONDecoder(s)
	for {
		prev := dec.InputOffset()
		s.setMark(prev)
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return dec.failToken(s, err)
		}
		start := s.skip(prev, false)
		at := s.locate(start)
		switch tok {
		case json.Delim('{'):
			err = p.jsonObject(s, dec, start, at)
		case json.Delim('['):
			err = p.jsonArray(s, dec)
		default:
			err = at.errorf("expected a Kubernetes object, found %s", describeToken(tok))
		}
		if err != nil {
			return err
		}
	}
}

func describeToken(t json.Token) string {
	switch t.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	case float64, json.Number:
		return "a number"
	default:
		return fmt.Sprintf("%v", t)
	}
}

// jsonArray reads the values of a top-level array, one at a time.
func (p *parser) jsonArray(s *stream, dec *jsonDecoder) error {
	var raw json.RawMessage
	for i := 0; dec.More(); i++ {
		off := s.skip(dec.InputOffset(), true)
		s.setMark(off)
		if err := dec.Decode(&raw); err != nil {
			return dec.fail(s, err)
		}
		at := s.locate(off)
		at.text, at.item = raw, itemName(i)
		if err := p.value(raw, at, emptyGVK, 1); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return dec.fail(s, err)
	}
	return nil
}

// jsonObject reads a top-level object whose '{' dec has just returned. A list's items are read
// as they come; any other object is read whole.
func (p *parser) jsonObject(s *stream, dec *jsonDecoder, start int64, at location) error {
	var apiVersion, kind string
	var isList bool
	var pending []pendingItem
	var raw json.RawMessage
	n := 0
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return dec.failToken(s, err)
		}
		switch key, _ := t.(string); key {
		case "apiVersion", "kind":
			var v string
			if err := dec.Decode(&v); err != nil {
				var te *json.UnmarshalTypeError
				if errors.As(err, &te) {
					return at.errorf("read apiVersion and kind: %w", err)
				}
				return dec.fail(s, err)
			}
			if key == "kind" {
				kind = v
			} else {
				apiVersion = v
			}
		case "items":
			isList = true
			t, err := dec.Token()
			if err != nil {
				return dec.fail(s, err)
			}
			if t == nil {
				continue
			}
			if t != json.Delim('[') {
				if kind != "" {
					return at.errorf("%s: items is not a list", kind)
				}
				return at.errorf("items is not a list")
			}
			// With the list's kind already read, its typed items are read at once.
			def, known := emptyGVK, false
			if apiVersion != "" && kind != "" {
				if d, err := p.listKind(at, apiVersion, kind); err == nil {
					def, known = d, true
				}
			}
			if err := p.splitListItems(s, dec, &n, def, known, &pending); err != nil {
				return err
			}
		default:
			if err := dec.Decode(&raw); err != nil {
				return dec.fail(s, err)
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return dec.fail(s, err)
	}
	if !isList {
		obj := s.slice(start, dec.InputOffset())
		at.text = obj
		return p.value(obj, at, emptyGVK, 0)
	}
	def, err := p.listKind(at, apiVersion, kind)
	if err != nil {
		return err
	}
	return p.pendingItems(pending, def)
}

// tokenError is jsonError for an error of Decoder.Token, whose syntax errors give the offset of
// the offending byte itself.
func tokenError(s *stream, err error, off, base int64) error {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		syntax.Offset++
	}
	return jsonError(s, err, off, base)
}

// jsonError places a JSON decoding error in the file; a fault of the input met below the
// parser is already placed. base is the clean offset where the decoder began.
func jsonError(s *stream, err error, off, base int64) error {
	var in *inputError
	if errors.As(err, &in) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var syntax *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		off = s.end()
		err = fmt.Errorf("unexpected end of JSON input, the file is truncated: %w", err)
	case errors.As(err, &syntax):
		// Offset counts the bytes read, the offending one included.
		off = max(base+syntax.Offset-1, 0)
	}
	line, col := s.position(off)
	return fmt.Errorf("line %d, column %d (offset %d): %w", line, col, s.fileOffset(off), err)
}

// yamlWhole is how large a YAML document may grow before its list items are read one at a time
// rather than the document converted whole; below it, a document reads exactly as the YAML
// library reads it, anchors shared between items included.
const yamlWhole = 4 << 20

// yamlStream splits a YAML stream on "---" lines itself, so that each document keeps the line
// it starts on, and converts each to JSON. A large list is read an item at a time: kubectl
// writes its items as a block sequence under a top-level "items:" key.
func (p *parser) yamlStream(s *stream) error {
	d := yamlDoc{p: p, s: s}
	d.reset(1, 0)
	line, off := 0, int64(0)
	for {
		text, err := s.readLine()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		line++
		if isSeparator(text) {
			if err := d.finish(); err != nil {
				return err
			}
			d.reset(line+1, off+int64(len(text)))
		} else if err := d.feed(text, line, off); err != nil {
			return err
		}
		off += int64(len(text))
	}
	return d.finish()
}

const (
	yamlTop      = iota // outside items
	yamlItems           // inside the items sequence
	yamlVerbatim        // items in a form other than a block sequence: read whole
)

// yamlDoc is one YAML document being read.
type yamlDoc struct {
	p         *parser
	s         *stream
	line      int
	off       int64
	whole     []byte // the document, until it is too large to keep whole
	streaming bool
	head      []byte // the document without its items
	state     int
	hasItems  bool
	indent    int
	item      []byte
	itemLine  int
	itemOff   int64
	n         int
	queue     []yamlItem // items complete, while the document is still kept whole
	pending   []pendingItem
}

type yamlItem struct {
	text      []byte
	line, idx int
}

func (d *yamlDoc) reset(line int, off int64) {
	*d = yamlDoc{p: d.p, s: d.s, line: line, off: off, whole: d.whole[:0], head: d.head[:0], item: d.item[:0]}
}

func (d *yamlDoc) at() location { return location{yaml: true, docLine: d.line} }

func (d *yamlDoc) tooLarge(off int64) error { return d.s.tooLarge(off) }

func leadingSpaces(b []byte) int {
	n := 0
	for n < len(b) && b[n] == ' ' {
		n++
	}
	return n
}

func isDash(rest []byte) bool {
	return len(rest) > 0 && rest[0] == '-' && (len(rest) == 1 || rest[1] == ' ' || rest[1] == '\n' || rest[1] == '\r')
}

func (d *yamlDoc) feed(text []byte, line int, off int64) error {
	if !d.streaming {
		d.whole = append(d.whole, text...)
		splittable := d.hasItems && d.state != yamlVerbatim
		if !splittable && int64(len(d.whole)) > d.p.budget.maxObject {
			return d.tooLarge(d.off)
		}
		if splittable && (len(d.whole) > yamlWhole || int64(len(d.whole)) > d.p.budget.maxObject) {
			d.streaming, d.whole = true, d.whole[:0]
			for _, it := range d.queue {
				if err := d.convertItem(it); err != nil {
					return err
				}
			}
			d.queue = nil
		}
	}
	switch d.state {
	case yamlItems:
		ind := leadingSpaces(text)
		rest := text[ind:]
		switch {
		case isBlank(rest) || rest[0] == '#':
			if d.indent >= 0 && d.itemLine != 0 {
				if ind >= d.indent+2 {
					d.item = append(d.item, text[d.indent+2:]...)
				} else {
					d.item = append(d.item, '\n')
				}
			}
			return nil
		case d.indent < 0 && isDash(rest):
			d.indent = ind
		case d.indent < 0:
			// items: with something other than a block sequence under it.
			d.state = yamlVerbatim
			if d.streaming {
				return d.tooLarge(d.off)
			}
			return nil
		}
		switch {
		case ind == d.indent && isDash(rest):
			if err := d.endItem(); err != nil {
				return err
			}
			d.itemLine, d.itemOff = line, off
			if len(rest) > 2 {
				d.item = append(d.item, rest[2:]...)
			} else {
				d.item = append(d.item, '\n')
			}
		case ind >= d.indent+2:
			d.item = append(d.item, text[d.indent+2:]...)
		case ind == 0:
			if err := d.endItem(); err != nil {
				return err
			}
			d.state = yamlTop
			d.head = append(d.head, text...)
		default:
			d.state = yamlVerbatim
			if d.streaming {
				return d.at().errorf("line %d: list item indented %d spaces, want %d", line, ind, d.indent)
			}
			return nil
		}
		if int64(len(d.item)) > d.p.budget.maxObject {
			return d.tooLarge(d.itemOff)
		}
	case yamlTop:
		if !d.hasItems && bytes.Equal(bytes.TrimRight(text, " \r\n"), []byte("items:")) {
			// Until now the head was the whole document, which is kept anyway.
			d.head = append(d.head[:0], d.whole[:len(d.whole)-len(text)]...)
			d.state, d.hasItems, d.indent = yamlItems, true, -1
			return nil
		}
		if !d.hasItems {
			return nil
		}
		d.head = append(d.head, text...)
		if int64(len(d.head)) > d.p.budget.maxObject {
			return d.tooLarge(d.off)
		}
	}
	return nil
}

// endItem closes the current item: it is queued while the document is kept whole, and read
// at once when not.
func (d *yamlDoc) endItem() error {
	if d.itemLine == 0 {
		return nil
	}
	it := yamlItem{text: d.item, line: d.itemLine, idx: d.n}
	d.n++
	d.itemLine = 0
	if !d.streaming {
		d.queue = append(d.queue, yamlItem{text: bytes.Clone(it.text), line: it.line, idx: it.idx})
		d.item = d.item[:0]
		return nil
	}
	err := d.convertItem(it)
	d.item = d.item[:0]
	return err
}

func (d *yamlDoc) convertItem(it yamlItem) error {
	at := location{yaml: true, docLine: d.line, itemLine: it.line, item: fmt.Sprintf("items[%d]", it.idx)}
	data, err := d.toJSON(it.text, it.line, at)
	if err != nil {
		return err
	}
	d.p.deferred = &d.pending
	err = d.p.value(bytes.TrimSpace(data), at, emptyGVK, 1)
	d.p.deferred = nil
	return err
}

func (d *yamlDoc) finish() error {
	if !d.streaming {
		if isBlank(d.whole) {
			return nil
		}
		data, err := d.toJSON(d.whole, d.line, d.at())
		if err != nil {
			return err
		}
		data = bytes.TrimSpace(data)
		if bytes.Equal(data, []byte("null")) {
			return nil // only comments
		}
		return d.p.value(data, d.at(), emptyGVK, 0)
	}
	if d.state == yamlItems {
		if err := d.endItem(); err != nil {
			return err
		}
	}
	data, err := d.toJSON(d.head, d.line, d.at())
	if err != nil {
		return err
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return d.at().errorf("read apiVersion and kind: %w", err)
	}
	def, err := d.p.listKind(d.at(), head.APIVersion, head.Kind)
	if err != nil {
		return err
	}
	return d.p.pendingItems(d.pending, def)
}

// toJSON converts text, which begins on line first of the file, to JSON; aliases may not expand
// it past --max-object-size, which bounds what one object costs whatever its text.
func (d *yamlDoc) toJSON(text []byte, first int, at location) ([]byte, error) {
	data, err := boundedyaml.ToJSON(text, d.p.budget.maxObject)
	var tl *boundedyaml.TooLargeError
	if errors.As(err, &tl) {
		return nil, &inputError{fmt.Sprintf("%s: line %d: aliases expand the document past %s (each repeats its anchor's whole value); --max-object-size raises the limit",
			at, first+tl.Line-1, mib(tl.Limit))}
	}
	if err != nil {
		return nil, at.errorf("%w", err)
	}
	return data, nil
}

func isSeparator(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("---"))
	if !ok {
		return false
	}
	rest = bytes.TrimSpace(rest)
	return len(rest) == 0 || rest[0] == '#'
}

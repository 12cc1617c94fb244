package dump

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	sigsyaml "sigs.k8s.io/yaml"
)

// document is one top-level JSON value found in a file.
type document struct {
	data []byte
	at   location
}

// location says where a value sits in a file, for error messages. Offsets are only known for
// JSON; a value converted from YAML is placed by the line its document starts on.
type location struct {
	text    []byte // the file, nil for YAML
	offset  int
	docLine int
	item    string
}

func (l location) String() string {
	var s string
	if l.text != nil {
		line, col := lineCol(l.text, l.offset)
		s = fmt.Sprintf("line %d, column %d", line, col)
	} else {
		s = fmt.Sprintf("YAML document at line %d", l.docLine)
	}
	if l.item != "" {
		s += ", " + l.item
	}
	return s
}

// child places the i-th item of a list found at offset off of the value l places.
func (l location) child(i, off int) location {
	c := l
	if l.item != "" {
		c.item = fmt.Sprintf("%s.items[%d]", l.item, i)
	} else {
		c.item = fmt.Sprintf("items[%d]", i)
	}
	c.offset = l.offset + off
	return c
}

func (l location) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{l}, args...)...)
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(text []byte, off int) (line, col int) {
	off = min(max(off, 0), len(text))
	line = 1 + bytes.Count(text[:off], []byte("\n"))
	col = off - bytes.LastIndexByte(text[:off], '\n')
	return line, col
}

// splitDocuments finds the JSON or YAML documents of a file whose log blocks are already blanked.
// A file whose first character is '{' or '[' is a stream of JSON values, which is what kubectl
// cluster-info dump writes to stdout; anything else is YAML, one or more documents.
func splitDocuments(text []byte) ([]document, error) {
	if err := checkText(text); err != nil {
		return nil, err
	}
	start := skipSpace(text, 0)
	if start == len(text) {
		return nil, nil
	}
	if text[start] == '{' || text[start] == '[' {
		return jsonDocuments(text)
	}
	return yamlDocuments(text)
}

// checkText rejects binary input before a parser reports something less helpful about it.
func checkText(text []byte) error {
	if i := bytes.IndexByte(text, 0); i >= 0 {
		line, col := lineCol(text, i)
		return fmt.Errorf("line %d, column %d (offset %d): binary data, not JSON, YAML or kubectl log output", line, col, i)
	}
	if utf8.Valid(text) {
		return nil
	}
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRune(text[i:])
		if r == utf8.RuneError && n <= 1 {
			line, col := lineCol(text, i)
			return fmt.Errorf("line %d, column %d (offset %d): invalid UTF-8, not JSON, YAML or kubectl log output", line, col, i)
		}
		i += n
	}
	return nil
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

func jsonDocuments(text []byte) ([]document, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	var docs []document
	for {
		start := skipSpace(text, int(dec.InputOffset()))
		if start >= len(text) {
			return docs, nil
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, jsonError(text, err, int(dec.InputOffset()))
		}
		docs = append(docs, document{data: raw, at: location{text: text, offset: start}})
	}
}

// jsonError places a JSON decoding error in the file.
func jsonError(text []byte, err error, off int) error {
	var syntax *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		off = len(text)
		err = fmt.Errorf("unexpected end of JSON input, the file is truncated: %w", err)
	case errors.As(err, &syntax):
		// Offset counts the bytes read, the offending one included.
		off = max(int(syntax.Offset)-1, 0)
	}
	line, col := lineCol(text, off)
	return fmt.Errorf("line %d, column %d (offset %d): %w", line, col, off, err)
}

// yamlDocuments splits a YAML stream on "---" lines itself so that each document keeps the line
// it starts on, and converts each to JSON.
func yamlDocuments(text []byte) ([]document, error) {
	var docs []document
	add := func(chunk []byte, line int) error {
		if len(bytes.TrimSpace(chunk)) == 0 {
			return nil
		}
		at := location{docLine: line}
		data, err := sigsyaml.YAMLToJSON(chunk)
		if err != nil {
			return at.errorf("%w", err)
		}
		data = bytes.TrimSpace(data)
		if bytes.Equal(data, []byte("null")) {
			return nil // only comments
		}
		docs = append(docs, document{data: data, at: at})
		return nil
	}
	docStart, docLine, line := 0, 1, 1
	for pos := 0; pos < len(text); line++ {
		next := len(text)
		if i := bytes.IndexByte(text[pos:], '\n'); i >= 0 {
			next = pos + i + 1
		}
		if isSeparator(text[pos:next]) {
			if err := add(text[docStart:pos], docLine); err != nil {
				return nil, err
			}
			docStart, docLine = next, line+1
		}
		pos = next
	}
	if err := add(text[docStart:], docLine); err != nil {
		return nil, err
	}
	return docs, nil
}

func isSeparator(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("---"))
	if !ok {
		return false
	}
	rest = bytes.TrimSpace(rest)
	return len(rest) == 0 || rest[0] == '#'
}

package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// The json and yaml printers write a report, and the json printer a fleet's report list, a
// workload at a time: a 20,000-pod cluster's report is megabytes of JSON (13 MB for the stress
// dump of hack/bench-dump.sh), and encoding/json's indenting held the document three times
// over (its compact form, the indented copy, escapeJSON's), 50-90 MB more peak memory for that
// audit (+14-24%), and sigs.k8s.io/yaml held it as generic values, about ten times over.
//
// Contract: the bytes, and the error when a value cannot be written, are writeJSON's (and
// writeYAML's) of the whole document. Each workload is marshalled by encoding/json, compact;
// all of them first, so that a value encoding/json refuses (a NaN, a year past 9999) fails the
// document before any of it is written, as writeJSON fails. A report's "workloads" is its last
// key, so the report without its workloads ends in `"workloads":[]}`, and each workload goes
// where the empty list was: for json indented by indentJSON at its depth and escaped by
// escapeJSON, for yaml converted as a list of one (the encoder sorts keys, "workloads" sorts
// last, and it writes a list under a key at the columns of a list alone). A document whose
// head does not end so (a key added after the list) is written whole.
//
// Equivalence tests: TestPrintersWriteEveryField, TestPrintersFailAsWriteJSON,
// TestPrintersOnRandomReports, FuzzPrintJSON and TestYAMLPrinterIsWriteYAML
// (json_test.go) hold the printers to writeJSON and writeYAML; TestIndentJSONIsJSONIndent
// holds indentJSON to json.Indent.

// piece is a JSON value in encoding/json's compact form, written a part at a time: with items
// nil it is head; otherwise head is the value with its last key's list emptied (ending in
// "[]}") and items are that list's elements.
type piece struct {
	head  []byte
	items []piece
}

// printBuffer is how much output the printers hold before handing it to the writer.
const printBuffer = 64 << 10

// listTail is how a piece's head ends when its items go in its place.
var listTail = []byte("[]}")

// splitPiece makes the piece of a value whose last key holds n elements: head is the value
// with that list emptied, item(i) each element's piece. A head that does not end in the empty
// list is the whole value, marshalled again.
func splitPiece(whole, head any, n int, item func(i int) (piece, error)) (piece, error) {
	h, err := json.Marshal(head)
	if err != nil || n == 0 {
		if err == nil && n == 0 {
			// The list was nil or empty in the value itself: head is the value.
			h, err = json.Marshal(whole)
		}
		return piece{head: h}, err
	}
	if !bytes.HasSuffix(h, listTail) {
		h, err = json.Marshal(whole)
		return piece{head: h}, err
	}
	p := piece{head: h, items: make([]piece, n)}
	for i := range n {
		if p.items[i], err = item(i); err != nil {
			return piece{}, err
		}
	}
	return p, nil
}

func reportPiece(r *diagnose.Report) (piece, error) {
	if r == nil {
		return piece{head: []byte("null")}, nil
	}
	head := *r
	head.Workloads = []diagnose.Diagnosis{}
	return splitPiece(r, &head, len(r.Workloads), func(i int) (piece, error) {
		b, err := json.Marshal(&r.Workloads[i])
		return piece{head: b}, err
	})
}

func reportListPiece(l *ReportList) (piece, error) {
	head := *l
	head.Items = []*diagnose.Report{}
	return splitPiece(l, &head, len(l.Items), func(i int) (piece, error) { return reportPiece(l.Items[i]) })
}

// jsonWriter writes pieces indented and escaped.
type jsonWriter struct {
	w   *bufio.Writer
	buf []byte
}

const indentSpaces = "                                                                "

func (jw *jsonWriter) newline(depth int) {
	_ = jw.w.WriteByte('\n')
	for n := 2 * depth; n > 0; n -= len(indentSpaces) {
		_, _ = jw.w.WriteString(indentSpaces[:min(n, len(indentSpaces))])
	}
}

// text writes compact JSON indented as if it began depth levels in.
func (jw *jsonWriter) text(b []byte, depth int) {
	jw.buf = indentJSON(jw.buf[:0], b, depth)
	_, _ = jw.w.Write(escapeJSON(jw.buf))
}

// piece writes p at depth; the bufio.Writer keeps the first error and writes nothing after it.
func (jw *jsonWriter) piece(p piece, depth int) {
	if p.items == nil {
		jw.text(p.head, depth)
		return
	}
	jw.text(p.head[:len(p.head)-len(listTail)], depth)
	_ = jw.w.WriteByte('[')
	for i := range p.items {
		if i > 0 {
			_ = jw.w.WriteByte(',')
		}
		jw.newline(depth + 2)
		jw.piece(p.items[i], depth+2)
	}
	jw.newline(depth + 1)
	_ = jw.w.WriteByte(']')
	jw.newline(depth)
	_ = jw.w.WriteByte('}')
}

// writeJSONPiece writes p as writeJSON writes the value it was made of.
func writeJSONPiece(w io.Writer, p piece, err error) error {
	if err != nil {
		return err
	}
	jw := &jsonWriter{w: bufio.NewWriterSize(w, printBuffer)}
	jw.piece(p, 0)
	_ = jw.w.WriteByte('\n')
	return jw.w.Flush()
}

// writeReportJSON writes r as writeJSON does.
func writeReportJSON(w io.Writer, r *diagnose.Report) error {
	p, err := reportPiece(r)
	return writeJSONPiece(w, p, err)
}

// writeReportListJSON writes l as writeJSON does.
func writeReportListJSON(w io.Writer, l *ReportList) error {
	p, err := reportListPiece(l)
	return writeJSONPiece(w, p, err)
}

// yamlEmptyList is how the encoder ends a report whose workloads are an empty list.
const yamlEmptyList = "workloads: []\n"

// writeReportYAML writes r as writeYAML does.
func writeReportYAML(w io.Writer, r *diagnose.Report) error {
	p, err := reportPiece(r)
	if err != nil {
		return err
	}
	if p.items == nil {
		return writeYAML(w, r)
	}
	// The head with its empty list put back: what yaml makes of the report without workloads.
	b, err := yamlOfJSON(p.head)
	if err != nil {
		return err
	}
	if !bytes.HasSuffix(b, []byte(yamlEmptyList)) {
		// The encoder ending it otherwise (never seen) would leave no place to put them.
		return writeYAML(w, r)
	}
	bw := bufio.NewWriterSize(w, printBuffer)
	if _, err := bw.Write(append(b[:len(b)-len(yamlEmptyList)], "workloads:\n"...)); err != nil {
		return err
	}
	var list []byte
	for _, it := range p.items {
		list = append(append(append(list[:0], '['), it.head...), ']')
		b, err := yamlOfJSON(list)
		if err != nil {
			return err
		}
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// indentJSON appends compact JSON to dst indented as json.Indent(dst, src, prefix, "  ") does
// with a prefix of depth times two spaces: as if src began depth levels into a document.
// encoding/json's own indenting re-reads the document through its validating scanner, which
// cost four times the marshalling itself on a fleet's report list. src here is what
// encoding/json has just marshalled, valid by construction, so only strings need tracking;
// TestIndentJSONIsJSONIndent holds the two to the same bytes.
func indentJSON(dst, src []byte, depth int) []byte {
	newline := func() {
		dst = append(dst, '\n')
		for range depth {
			dst = append(dst, ' ', ' ')
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '"':
			// Copy the string whole: up to its closing quote, past escaped characters.
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j, len(src)-1)
			dst = append(dst, src[i:j+1]...)
			i = j
		case '{', '[':
			dst = append(dst, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				// json.Indent writes an empty object or array on one line.
				dst = append(dst, src[i+1])
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// Command schemadoc writes docs/schema.md: the prose of schema.md.tmpl, with each table of keys
// made from the report types themselves (their JSON names, types and omitempty rules) and the
// meaning the template gives each key. A key the types have and the template does not describe,
// a description of a key the types lack, or a type reachable from the report without a table
// fails the generation; its test fails when the checked-in file differs. Run `make docs`.
package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
)

//go:embed schema.md.tmpl
var schemaTemplate string

func main() {
	out := "docs/schema.md"
	if len(os.Args) > 1 {
		out = os.Args[1]
	}
	b, err := generate()
	if err == nil {
		err = os.WriteFile(out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

// docNames are the names the schema gives types whose Go name is not the reader's: the table's
// heading and the links to it.
var docNames = map[string]string{
	"Diagnosis":  "Workload",
	"SourceInfo": "Source",
}

// vocabularies are the string types documented as closed vocabularies: a key of one of them
// links to its table instead of saying "string".
var vocabularies = map[reflect.Type]string{
	reflect.TypeFor[diagnose.Shape](): "shape",
	reflect.TypeFor[diagnose.Cause](): "cause",
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
)

// schema is the documents' types, by the name the schema gives them.
type schema struct {
	types map[string]reflect.Type
	// tabled are the types a table has been written for.
	tabled map[string]bool
}

// newSchema collects every struct type a report or a report list holds.
func newSchema() *schema {
	s := &schema{types: map[string]reflect.Type{}, tabled: map[string]bool{}}
	s.collect(reflect.TypeFor[report.ReportList]())
	return s
}

func (s *schema) collect(t reflect.Type) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == timeType {
		return
	}
	name := docName(t)
	if _, ok := s.types[name]; ok {
		return
	}
	s.types[name] = t
	for _, f := range jsonFields(t) {
		if f.typ != nil {
			s.collect(f.typ)
		}
	}
}

func docName(t reflect.Type) string {
	if n, ok := docNames[t.Name()]; ok {
		return n
	}
	return t.Name()
}

// anchor is the heading's anchor as GitHub makes it.
func anchor(name string) string { return "#" + strings.ToLower(name) }

// field is one key of a type's JSON form.
type field struct {
	key       string
	typ       reflect.Type
	omitEmpty bool
	// written is the JSON value kind of a key of a type that marshals itself.
	written string
}

// jsonFields are t's keys as encoding/json writes them, in order. A type with its own
// MarshalJSON is asked: its zero value's keys, typed by their values.
func jsonFields(t reflect.Type) []field {
	if t.Implements(marshalerType) {
		return marshaledFields(t)
	}
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			panic(fmt.Sprintf("%s embeds %s: the schema has no words for it yet", t, f.Type))
		}
		tag, ok := f.Tag.Lookup("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !ok || name == "" {
			name = f.Name
		}
		out = append(out, field{key: name, typ: f.Type, omitEmpty: slices.Contains(strings.Split(opts, ","), "omitempty")})
	}
	return out
}

func marshaledFields(t reflect.Type) []field {
	b, err := json.Marshal(reflect.Zero(t).Interface())
	if err != nil {
		panic(fmt.Sprintf("marshal a zero %s: %v", t, err))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		panic(fmt.Sprintf("a zero %s is not written as an object: %s", t, b))
	}
	var out []field
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			panic(err)
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			panic(err)
		}
		written := "object"
		switch v.(type) {
		case string:
			written = "string"
		case float64:
			written = "number"
		case bool:
			written = "boolean"
		case []any:
			written = "list"
		}
		out = append(out, field{key: k.(string), written: written})
	}
	return out
}

// typeText says what a key holds, linking to the table of a type or vocabulary.
func (s *schema) typeText(t reflect.Type) string {
	if v, ok := vocabularies[t]; ok {
		return "[" + v + "](" + anchor(v) + ")"
	}
	switch {
	case t == timeType:
		return "time"
	case t.Kind() == reflect.Pointer:
		return s.typeText(t.Elem()) + " or `null`"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Pointer:
		// The printers write no null in a list (a fleet's reports are each a report).
		return "list of " + s.typeText(t.Elem().Elem())
	case t.Kind() == reflect.Slice:
		return "list of " + s.typeText(t.Elem())
	case t.Kind() == reflect.Map:
		return "map " + s.typeText(t.Key()) + " → " + s.typeText(t.Elem())
	case t.Kind() == reflect.Struct:
		n := docName(t)
		return "[" + n + "](" + anchor(n) + ")"
	case t.Kind() == reflect.String:
		return "string"
	case t.Kind() == reflect.Bool:
		return "boolean"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "number"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "integer"
	}
	panic(fmt.Sprintf("no schema word for %s", t))
}

// descriptions parses the template's "key: meaning" lines.
func descriptions(text string) ([]string, map[string]string, error) {
	var keys []string
	meaning := map[string]string{}
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, m, ok := strings.Cut(line, ": ")
		if !ok || strings.ContainsAny(k, " `") {
			return nil, nil, fmt.Errorf("description %q is not key: meaning", line)
		}
		if _, dup := meaning[k]; dup {
			return nil, nil, fmt.Errorf("key %s described twice", k)
		}
		keys = append(keys, k)
		meaning[k] = strings.TrimSpace(m)
	}
	return keys, meaning, nil
}

// table writes the keys of the type the schema calls name, with their meanings from text.
func (s *schema) table(name, text string) (string, error) {
	t, ok := s.types[name]
	if !ok {
		return "", fmt.Errorf("a table of %s, which no report holds", name)
	}
	if s.tabled[name] {
		return "", fmt.Errorf("two tables of %s", name)
	}
	s.tabled[name] = true
	_, meaning, err := descriptions(text)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	var b strings.Builder
	b.WriteString("| key | type | meaning |\n|---|---|---|\n")
	seen := map[string]bool{}
	for _, f := range jsonFields(t) {
		m, ok := meaning[f.key]
		if !ok || m == "" {
			return "", fmt.Errorf("%s.%s has no meaning in schema.md.tmpl", name, f.key)
		}
		seen[f.key] = true
		typ := f.written
		if f.typ != nil {
			typ = s.typeText(f.typ)
		}
		switch {
		case f.omitEmpty && f.typ != nil && f.typ.Kind() == reflect.Pointer:
			typ = s.typeText(f.typ.Elem()) + ", omitted when absent"
		case f.omitEmpty:
			typ += ", omitted when empty"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.key, typ, m)
	}
	for k := range meaning {
		if !seen[k] {
			return "", fmt.Errorf("schema.md.tmpl describes %s.%s, which the type does not have", name, k)
		}
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// shapes writes the shape vocabulary in the order of diagnose.Shapes, worst first.
func shapes(text string) (string, error) {
	keys, meaning, err := descriptions(text)
	if err != nil {
		return "", fmt.Errorf("shape: %w", err)
	}
	var want []string
	for _, s := range diagnose.Shapes {
		want = append(want, string(s))
	}
	if !slices.Equal(keys, want) {
		return "", fmt.Errorf("schema.md.tmpl describes the shapes %v, the engine has %v (worst first)", keys, want)
	}
	var b strings.Builder
	b.WriteString("| value | meaning |\n|---|---|\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "| `%s` | %s |\n", k, meaning[k])
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// generate fills the template: {{apiVersion}} anywhere, and the blocks from a line
// "{{table NAME}}" or "{{shapes}}" to a line "{{end}}", whose lines are "key: meaning".
func generate() ([]byte, error) {
	s := newSchema()
	var b strings.Builder
	b.WriteString("<!-- Generated from hack/schemadoc/schema.md.tmpl and the report types by `make docs`; do not edit. -->\n\n")
	var block, body []string
	for line := range strings.Lines(schemaTemplate) {
		trimmed := strings.TrimSuffix(line, "\n")
		switch {
		case block == nil && strings.HasPrefix(trimmed, "{{table ") && strings.HasSuffix(trimmed, "}}"):
			block = strings.Fields(strings.TrimSuffix(strings.TrimPrefix(trimmed, "{{"), "}}"))
		case block == nil && trimmed == "{{shapes}}":
			block = []string{"shapes"}
		case block != nil && trimmed == "{{end}}":
			var out string
			var err error
			text := strings.Join(body, "\n")
			if block[0] == "shapes" {
				out, err = shapes(text)
			} else if len(block) != 2 {
				err = fmt.Errorf("{{%s}} names no one type", strings.Join(block, " "))
			} else {
				out, err = s.table(block[1], text)
			}
			if err != nil {
				return nil, err
			}
			b.WriteString(out + "\n")
			block, body = nil, nil
		case block != nil:
			body = append(body, trimmed)
		default:
			b.WriteString(strings.ReplaceAll(line, "{{apiVersion}}", diagnose.APIVersion))
		}
	}
	if block != nil {
		return nil, fmt.Errorf("{{%s}} has no {{end}}", strings.Join(block, " "))
	}
	for name := range s.types {
		if !s.tabled[name] {
			return nil, fmt.Errorf("%s is in the report and has no table in schema.md.tmpl", name)
		}
	}
	return []byte(b.String()), nil
}

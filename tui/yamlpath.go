package tui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// pathYAML renders v (a Kubernetes object or part of one) as YAML and records, for every field,
// the line it starts on, keyed by its field.Path string under root (e.g. "spec.template"). The
// console uses the index to highlight a suspect's line and scroll it into view.
func pathYAML(root string, v any) (lines []string, index map[string]int, err error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("encode %s: %w", root, err)
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, nil, fmt.Errorf("decode %s: %w", root, err)
	}
	e := &yamlEmitter{index: map[string]int{}}
	e.value(root, tree, 0, "")
	return e.lines, e.index, nil
}

type yamlEmitter struct {
	lines []string
	index map[string]int
}

// value writes v at indent; head is what precedes it on its first line ("key:" or "- ").
func (e *yamlEmitter) value(path string, v any, indent int, head string) {
	pad := strings.Repeat(" ", indent)
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k, x := range t {
			if x == nil || isEmpty(x) {
				continue
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) == 0 {
			e.emit(path, pad+joinHead(head, "{}"))
			return
		}
		childIndent := indent
		if head != "" {
			if strings.HasSuffix(head, "- ") {
				// The first key of a list item shares the dash's line.
				for i, k := range keys {
					child := path + "." + k
					if i == 0 {
						e.field(child, t[k], indent+len(head), pad+head, k)
						e.index[path] = e.index[child]
						continue
					}
					e.field(child, t[k], indent+len(head), strings.Repeat(" ", indent+len(head)), k)
				}
				return
			}
			e.emit(path, pad+head)
			childIndent = indent + 2
		}
		for _, k := range keys {
			e.field(path+"."+k, t[k], childIndent, strings.Repeat(" ", childIndent), k)
		}
	case []any:
		if len(t) == 0 {
			e.emit(path, pad+joinHead(head, "[]"))
			return
		}
		if head != "" {
			e.emit(path, pad+head)
		}
		for i, x := range t {
			e.value(fmt.Sprintf("%s[%d]", path, i), x, indent, "- ")
		}
	default:
		e.emit(path, pad+joinHead(head, scalar(t)))
	}
}

// field writes key: value, where prefix is the text (indent or "- ") before the key.
func (e *yamlEmitter) field(path string, v any, indent int, prefix, k string) {
	switch v.(type) {
	case map[string]any, []any:
		if isEmpty(v) {
			e.emit(path, prefix+yamlKey(k)+": "+emptyOf(v))
			return
		}
		e.emit(path, prefix+yamlKey(k)+":")
		if _, ok := v.([]any); ok {
			// Lists sit at the key's indent, as kubectl writes them.
			e.value(path, v, indent, "")
			return
		}
		e.value(path, v, indent+2, "")
	default:
		e.emit(path, prefix+yamlKey(k)+": "+scalar(v))
	}
}

func (e *yamlEmitter) emit(path, line string) {
	if _, ok := e.index[path]; !ok {
		e.index[path] = len(e.lines)
	}
	e.lines = append(e.lines, Sanitize(line))
}

func isEmpty(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

func emptyOf(v any) string {
	if _, ok := v.([]any); ok {
		return "[]"
	}
	return "{}"
}

func yamlKey(k string) string { return strings.TrimSpace(scalar(k)) }

// scalar quotes a scalar exactly as sigs.k8s.io/yaml would.
func scalar(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := strings.TrimSuffix(string(b), "\n")
	if strings.Contains(s, "\n") {
		// A multi-line string: keep it on one line, quoted, so line indexes stay one per field.
		q, _ := json.Marshal(v)
		return string(q)
	}
	return s
}

// joinHead puts a value after its head: "key: v", "- v", or v alone.
func joinHead(head, v string) string {
	if strings.HasSuffix(head, ":") {
		return head + " " + v
	}
	return head + v
}

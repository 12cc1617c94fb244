package boundedyaml

import (
	"bytes"
	"fmt"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// TooLargeError says a document's aliases expand it past the bound.
type TooLargeError struct {
	// Line is the line of the document, counted from 1, where the expansion passed Limit.
	Line  int
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("line %d: aliases expand the document past %s (each repeats its anchor's whole value)", e.Line, mib(e.Limit))
}

func mib(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
}

// ToJSON converts one YAML document (or a stream, as sigs.k8s.io/yaml reads the first) to JSON,
// as yaml.YAMLToJSON does, unless its aliases expand it past limit bytes of JSON: then it
// returns a *TooLargeError. A document without an anchor cannot expand and is not counted.
func ToJSON(y []byte, limit int64) ([]byte, error) {
	if bytes.IndexByte(y, '&') >= 0 && bytes.IndexByte(y, '*') >= 0 {
		if err := check(y, limit); err != nil {
			return nil, err
		}
	}
	return yaml.YAMLToJSON(y)
}

// check counts the expanded size of y's first document. A document the parser refuses is left
// to the conversion, whose error says why.
func check(y []byte, limit int64) error {
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(y, &doc); err != nil {
		return nil
	}
	c := counter{limit: limit, memo: map[*yamlv3.Node]int64{}}
	if c.size(&doc) > limit {
		return &TooLargeError{Line: c.line, Limit: limit}
	}
	return nil
}

// counter sizes nodes as their JSON would be, about: a scalar its text and quotes, a
// collection its items and separators. It stops at the first node past the limit.
type counter struct {
	limit int64
	memo  map[*yamlv3.Node]int64
	// line is where the size passed the limit: the innermost node whose part did.
	line int
}

func (c *counter) size(n *yamlv3.Node) int64 {
	if n == nil {
		return 0
	}
	if s, ok := c.memo[n]; ok {
		return s
	}
	// An alias to a node being sized is a cycle; the parser refuses one, this guards the count.
	c.memo[n] = 0
	var s int64
	switch n.Kind {
	case yamlv3.AliasNode:
		s = c.size(n.Alias)
	case yamlv3.ScalarNode:
		s = int64(len(n.Value)) + 2
	default:
		s = 2
		for _, child := range n.Content {
			s += c.size(child) + 1
			if s > c.limit {
				if c.line == 0 {
					c.line = child.Line
				}
				s = c.limit + 1
				break
			}
		}
	}
	if s > c.limit && c.line == 0 {
		c.line = n.Line
	}
	c.memo[n] = s
	return s
}

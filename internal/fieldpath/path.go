package fieldpath

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Segment is one step of a path in field.Path notation: a field's name and the subscript that
// follows it, a list index ([2]) or a map key ([kubernetes.io/arch]). A subscript straight
// after another subscript has an empty name.
type Segment struct {
	Name string
	Sub  string
}

// Index is the segment's subscript as a list index, when it is one.
func (s Segment) Index() (int, bool) {
	if s.Sub == "" {
		return 0, false
	}
	i, err := strconv.Atoi(s.Sub)
	return i, err == nil && i >= 0
}

// Of splits a path into its segments; nil for no path.
func Of(p *field.Path) []Segment {
	if p == nil {
		return nil
	}
	return Parse(p.String())
}

// Parse splits a path written in field.Path notation. Keys may contain dots
// (nodeSelector[topology.kubernetes.io/zone]), so a subscript is read to its bracket before
// any dot.
func Parse(p string) []Segment {
	var out []Segment
	var cur Segment
	var have bool
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '.':
			if have {
				out = append(out, cur)
			}
			cur, have = Segment{}, false
		case '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				end = len(p) - i
			}
			if have && cur.Sub != "" {
				out = append(out, cur)
				cur = Segment{}
			}
			cur.Sub = p[i+1 : i+end]
			have = true
			i += end
		default:
			if have && cur.Sub != "" {
				out = append(out, cur)
				cur = Segment{}
			}
			start := i
			for i+1 < len(p) && p[i+1] != '.' && p[i+1] != '[' {
				i++
			}
			cur.Name += p[start : i+1]
			have = true
		}
	}
	if have {
		out = append(out, cur)
	}
	return out
}

// Format writes segments in field.Path notation: Format(Parse(p)) is p.
func Format(segs []Segment) string {
	var b strings.Builder
	for i, s := range segs {
		if s.Name != "" {
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Name)
		}
		if s.Sub != "" {
			b.WriteByte('[')
			b.WriteString(s.Sub)
			b.WriteByte(']')
		}
	}
	return b.String()
}

// Parent drops the last step of a path: a.b[2].c → a.b[2] → a.b → a → "".
func Parent(p string) string {
	segs := Parse(p)
	if len(segs) == 0 {
		return ""
	}
	last := &segs[len(segs)-1]
	if last.Sub != "" && last.Name != "" {
		last.Sub = ""
	} else {
		segs = segs[:len(segs)-1]
	}
	return Format(segs)
}

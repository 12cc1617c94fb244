package fieldpath

import (
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Leaf is one scalar value of an API object with its field path.
type Leaf struct {
	Path *field.Path
	// PathString is Path.String(), written by the walk.
	PathString string
	Value      string
	// Text is true for values written as strings (string fields, IntOrString, Quantity); only
	// those are matched against what failures name.
	Text bool
}

var (
	walkIntOrStringType  = reflect.TypeFor[intstr.IntOrString]()
	walkQuantityType     = reflect.TypeFor[resource.Quantity]()
	walkTimeType         = reflect.TypeFor[metav1.Time]()
	walkResourceNameType = reflect.TypeFor[corev1.ResourceName]()
)

// ResourcePath is the path of one resource in a ResourceList. Kubernetes writes the standard
// ones as fields (resources.limits.memory); an extended name with dots or slashes
// (nvidia.com/gpu) as a key.
func ResourcePath(list *field.Path, name string) *field.Path {
	if strings.ContainsAny(name, "./") {
		return list.Key(name)
	}
	return list.Child(name)
}

// Field is an exported field of a struct type that JSON encodes, with its JSON name.
type Field struct {
	Index  int
	Name   string
	Inline bool
}

// jsonFields holds jsonFieldsOf each struct type once read: the walks read the tags of the
// same few API types for every workload, and reading a tag parses it. The types are the
// program's, so the cache is bounded by them.
var jsonFields sync.Map // reflect.Type -> []Field

// JSONFieldsOf lists struct type t's exported fields in order, each with its JSON name, without
// those JSON skips ("-"): the walk and the revision diff name fields alike.
func JSONFieldsOf(t reflect.Type) []Field {
	if fs, ok := jsonFields.Load(t); ok {
		return fs.([]Field)
	}
	var fs []Field
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		n, inline := jsonName(f)
		if n == "-" {
			continue
		}
		fs = append(fs, Field{Index: i, Name: n, Inline: inline})
	}
	jsonFields.Store(t, fs)
	return fs
}

// jsonName is a field's name as encoding/json reads its tag: a named field is that name
// whatever its options (there is no ",inline" option in encoding/json; apimachinery's
// `json:",inline"` on an embedded struct is inlined because it is embedded and unnamed).
func jsonName(f reflect.StructField) (name string, inline bool) {
	tag := f.Tag.Get("json")
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" && (strings.Contains(opts, "inline") || f.Anonymous) {
		return "", true
	}
	if name == "" {
		name = f.Name
	}
	return name, false
}

// Scalar renders a scalar node; ok is false for structs, slices and maps.
func Scalar(v reflect.Value) (s string, text, ok bool) {
	switch v.Kind() {
	case reflect.String:
		return v.String(), true, true
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), false, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), false, true
	case reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10), false, true
	case reflect.Struct:
		switch v.Type() {
		case walkIntOrStringType:
			is := v.Interface().(intstr.IntOrString)
			return is.String(), true, true
		case walkQuantityType:
			q := v.Interface().(resource.Quantity)
			return q.String(), true, true
		}
	}
	return "", false, false
}

// Leaves lists the scalar values of obj (a pointer to or value of a typed API object part)
// that are set, with their paths under root: the nodes the reference walk (walkObject, in
// diagnose/match_walk_test.go) visits, in its order, with
// a path built only for a leaf kept (TestLeavesAsWalk holds the two to the same list).
func Leaves(root *field.Path, obj any) []Leaf {
	if obj == nil {
		return nil
	}
	var out []Leaf
	ps := PathStack{{p: root, built: true, textBuilt: true}}
	if root != nil {
		ps[0].text = root.String()
	}
	leavesOf(reflect.ValueOf(obj), &ps, &out)
	return out
}

func leavesOf(v reflect.Value, ps *PathStack, out *[]Leaf) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return
		}
		leavesOf(v.Elem(), ps, out)
		return
	}
	if s, text, ok := Scalar(v); ok {
		if s != "" {
			*out = append(*out, Leaf{Path: ps.Path(), PathString: ps.Text(), Value: s, Text: text})
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		switch v.Type() {
		case walkIntOrStringType, walkQuantityType, walkTimeType:
			return
		}
		for _, f := range JSONFieldsOf(v.Type()) {
			if f.Inline {
				leavesOf(v.Field(f.Index), ps, out)
				continue
			}
			ps.Push(Seg{kind: segChild, name: f.Name})
			leavesOf(v.Field(f.Index), ps, out)
			ps.Pop()
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			ps.Push(Seg{kind: segIndex, index: i})
			leavesOf(v.Index(i), ps, out)
			ps.Pop()
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		resources := v.Type().Key() == walkResourceNameType
		for _, k := range keys {
			seg := Seg{kind: segKey, name: k.String()}
			if resources && !strings.ContainsAny(seg.name, "./") {
				seg.kind = segChild // as resourcePath writes it
			}
			ps.Push(seg)
			leavesOf(v.MapIndex(k), ps, out)
			ps.Pop()
		}
	}
}

// ValueAt renders the value at path (under root) in obj: a scalar as written, a string map as
// k=v pairs, anything else as compact JSON. ok is false when the field is unset.
func ValueAt(root *field.Path, obj any, path *field.Path) (string, bool) {
	if obj == nil || path == nil {
		return "", false
	}
	return ValueAtText(root, obj, path.String())
}

// ValueAtText is ValueAt with the path as field.Path.String writes it.
func ValueAtText(root *field.Path, obj any, want string) (string, bool) {
	if obj == nil {
		return "", false
	}
	rest := "." + want
	if root != nil {
		prefix := root.String()
		if !HasPrefix(want, prefix) {
			return "", false
		}
		rest = want[len(prefix):]
	}
	found, ok := descend(reflect.ValueOf(obj), rest)
	if !ok {
		return "", false
	}
	return Render(found)
}

// descend follows rest (".name", "[index]" or "[key]" steps, as field.Path writes them) from v
// to the node it names, with the same field names, inlining and ResourceList keys as
// walkObject. It reads only the fields on the way: the rules look fields up for every
// suspect, and walking whole templates for that showed in profiles.
func descend(v reflect.Value, rest string) (reflect.Value, bool) {
	for {
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		if rest == "" {
			return v, true
		}
		var step string
		step, rest = nextStep(rest)
		if step[0] == '[' && (len(step) < 2 || step[len(step)-1] != ']') {
			return reflect.Value{}, false // an index or key without its ']'
		}
		switch v.Kind() {
		case reflect.Struct:
			switch v.Type() {
			case walkIntOrStringType, walkQuantityType, walkTimeType:
				return reflect.Value{}, false
			}
			if step[0] != '.' {
				return reflect.Value{}, false
			}
			f, ok := structField(v, step[1:])
			if !ok {
				return reflect.Value{}, false
			}
			v = f
		case reflect.Slice, reflect.Array:
			if v.Type().Elem().Kind() == reflect.Uint8 || step[0] != '[' {
				return reflect.Value{}, false
			}
			i, err := strconv.Atoi(step[1 : len(step)-1])
			if err != nil || i < 0 || i >= v.Len() || strconv.Itoa(i) != step[1:len(step)-1] {
				return reflect.Value{}, false
			}
			v = v.Index(i)
		case reflect.Map:
			if v.Type().Key().Kind() != reflect.String {
				return reflect.Value{}, false
			}
			key := step[1:]
			if step[0] == '[' {
				key = step[1 : len(step)-1]
			}
			// walkObject writes a ResourceList key as a field unless it has dots or slashes.
			if v.Type().Key() == walkResourceNameType {
				if (step[0] == '.') == strings.ContainsAny(key, "./") {
					return reflect.Value{}, false
				}
			} else if step[0] != '[' {
				return reflect.Value{}, false
			}
			e := v.MapIndex(reflect.ValueOf(key).Convert(v.Type().Key()))
			if !e.IsValid() {
				return reflect.Value{}, false
			}
			v = e
		default:
			return reflect.Value{}, false
		}
	}
}

// nextStep splits the first step off a path suffix: ".name" up to the next '.' or '[', or
// "[...]" up to its ']' (a key is written unescaped, so the first ']' ends it).
func nextStep(rest string) (step, after string) {
	if rest[0] == '[' {
		if i := strings.IndexByte(rest, ']'); i >= 0 {
			return rest[:i+1], rest[i+1:]
		}
		return rest, ""
	}
	if i := strings.IndexAny(rest[1:], ".["); i >= 0 {
		return rest[:i+1], rest[i+1:]
	}
	return rest, ""
}

// structField finds the field of struct v whose JSON name is name, looking into inlined
// structs in field order as walkObject does.
func structField(v reflect.Value, name string) (reflect.Value, bool) {
	for _, f := range JSONFieldsOf(v.Type()) {
		i, n := f.Index, f.Name
		switch {
		case f.Inline:
			fv := v.Field(i)
			for fv.Kind() == reflect.Pointer || fv.Kind() == reflect.Interface {
				if fv.IsNil() {
					break
				}
				fv = fv.Elem()
			}
			if fv.Kind() == reflect.Struct {
				if got, ok := structField(fv, name); ok {
					return got, true
				}
			}
		case n == name:
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// Render writes a node as a person reads it; ok is false for zero values.
func Render(v reflect.Value) (string, bool) {
	if s, _, ok := Scalar(v); ok {
		return s, !v.IsZero()
	}
	if v.IsZero() {
		return "", false
	}
	if (v.Kind() == reflect.Slice || v.Kind() == reflect.Map) && v.Len() == 0 {
		return "", false
	}
	if m, ok := v.Interface().(map[string]string); ok {
		return labels.Set(m).String(), true
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return "", false
	}
	return string(b), true
}

// HasPrefix reports whether p equals prefix or lies beneath it.
func HasPrefix(p, prefix string) bool {
	if !strings.HasPrefix(p, prefix) {
		return false
	}
	rest := p[len(prefix):]
	return rest == "" || rest[0] == '.' || rest[0] == '['
}

// PathStack is the path to a walk's node as a stack of segments, and a segment's *field.Path
// is built only when asked for at or below it: a template has hundreds of fields, nearly all
// equal or unset, so building each one's path was most of a walk's allocations. A built
// parent is shared by the paths under it, as Child shares it.
type PathStack []Seg

// Seg is a path segment: a field name, a list index or a map key; p is its path once
// built (a walk's root may be the nil path).
type Seg struct {
	kind      pathSegKind
	built     bool
	textBuilt bool
	name      string
	index     int
	p         *field.Path
	text      string // p.String(), once textBuilt
}

type pathSegKind uint8

const (
	segChild pathSegKind = iota
	segIndex
	segKey
)

// NewStack is a stack at root (which may be the nil path).
func NewStack(root *field.Path) PathStack { return PathStack{{p: root, built: true}} }

// ChildSeg is the segment of a field.
func ChildSeg(name string) Seg { return Seg{kind: segChild, name: name} }

// IndexSeg is the segment of list element i.
func IndexSeg(i int) Seg { return Seg{kind: segIndex, index: i} }

// KeySeg is the segment of map key k.
func KeySeg(k string) Seg { return Seg{kind: segKey, name: k} }

// Push enters a segment; Pop leaves it.
func (ps *PathStack) Push(s Seg) { *ps = append(*ps, s) }

// Pop leaves the deepest segment.
func (ps *PathStack) Pop() { *ps = (*ps)[:len(*ps)-1] }

// Path builds the current node's path from the deepest segment already built.
func (ps PathStack) Path() *field.Path {
	i := len(ps) - 1
	for !ps[i].built {
		i--
	}
	for i++; i < len(ps); i++ {
		parent, s := ps[i-1].p, &ps[i]
		switch s.kind {
		case segChild:
			s.p = parent.Child(s.name)
		case segIndex:
			s.p = parent.Index(s.index)
		default:
			s.p = parent.Key(s.name)
		}
		s.built = true
	}
	return ps[len(ps)-1].p
}

// Text writes the current node's path as field.Path.String does, from the deepest segment
// already written: a name after a dot (none at a nil root), an index or key in brackets.
func (ps PathStack) Text() string {
	i := len(ps) - 1
	for !ps[i].textBuilt {
		i--
	}
	for i++; i < len(ps); i++ {
		parent, s := &ps[i-1], &ps[i]
		switch {
		case s.kind == segChild && s.name != "":
			if i == 1 && ps[0].p == nil {
				s.text = s.name
			} else {
				s.text = parent.text + "." + s.name
			}
		case s.kind == segIndex:
			s.text = parent.text + "[" + strconv.Itoa(s.index) + "]"
		default:
			s.text = parent.text + "[" + s.name + "]"
		}
		s.textBuilt = true
	}
	return ps[len(ps)-1].text
}

package diagnose

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

// leaf is one scalar value of an API object with its field path.
type leaf struct {
	Path *field.Path
	// path is Path.String(), written by the walk.
	path  string
	Value string
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

// resourcePath is the path of one resource in a ResourceList. Kubernetes writes the standard
// ones as fields (resources.limits.memory); an extended name with dots or slashes
// (nvidia.com/gpu) as a key.
func resourcePath(list *field.Path, name string) *field.Path {
	if strings.ContainsAny(name, "./") {
		return list.Key(name)
	}
	return list.Child(name)
}

// jsonField is an exported field of a struct type that JSON encodes, with its JSON name.
type jsonField struct {
	index  int
	name   string
	inline bool
}

// jsonFields holds jsonFieldsOf each struct type once read: the walks read the tags of the
// same few API types for every workload, and reading a tag parses it. The types are the
// program's, so the cache is bounded by them.
var jsonFields sync.Map // reflect.Type -> []jsonField

// jsonFieldsOf lists struct type t's exported fields in order, without those JSON skips ("-").
func jsonFieldsOf(t reflect.Type) []jsonField { return fieldsOf(&jsonFields, t, jsonName) }

// fieldsOf lists struct type t's exported fields in order, each named by name, without those
// it names "-", once per type in cache.
func fieldsOf(cache *sync.Map, t reflect.Type, name func(reflect.StructField) (string, bool)) []jsonField {
	if fs, ok := cache.Load(t); ok {
		return fs.([]jsonField)
	}
	var fs []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		n, inline := name(f)
		if n == "-" {
			continue
		}
		fs = append(fs, jsonField{index: i, name: n, inline: inline})
	}
	cache.Store(t, fs)
	return fs
}

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

// scalar renders a scalar node; ok is false for structs, slices and maps.
func scalar(v reflect.Value) (s string, text, ok bool) {
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

// leaves lists the scalar values of obj (a pointer to or value of a typed API object part)
// that are set, with their paths under root: the nodes the reference walk (walkObject, in
// match_walk_test.go) visits, in its order, with
// a path built only for a leaf kept (TestLeavesAsWalk holds the two to the same list).
func leaves(root *field.Path, obj any) []leaf {
	if obj == nil {
		return nil
	}
	var out []leaf
	ps := pathStack{{p: root, built: true, textBuilt: true}}
	if root != nil {
		ps[0].text = root.String()
	}
	leavesOf(reflect.ValueOf(obj), &ps, &out)
	return out
}

func leavesOf(v reflect.Value, ps *pathStack, out *[]leaf) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return
		}
		leavesOf(v.Elem(), ps, out)
		return
	}
	if s, text, ok := scalar(v); ok {
		if s != "" {
			*out = append(*out, leaf{Path: ps.path(), path: ps.text(), Value: s, Text: text})
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		switch v.Type() {
		case walkIntOrStringType, walkQuantityType, walkTimeType:
			return
		}
		for _, f := range jsonFieldsOf(v.Type()) {
			if f.inline {
				leavesOf(v.Field(f.index), ps, out)
				continue
			}
			ps.push(pathSeg{kind: segChild, name: f.name})
			leavesOf(v.Field(f.index), ps, out)
			ps.pop()
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			ps.push(pathSeg{kind: segIndex, index: i})
			leavesOf(v.Index(i), ps, out)
			ps.pop()
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		resources := v.Type().Key() == walkResourceNameType
		for _, k := range keys {
			seg := pathSeg{kind: segKey, name: k.String()}
			if resources && !strings.ContainsAny(seg.name, "./") {
				seg.kind = segChild // as resourcePath writes it
			}
			ps.push(seg)
			leavesOf(v.MapIndex(k), ps, out)
			ps.pop()
		}
	}
}

// valueAt renders the value at path (under root) in obj: a scalar as written, a string map as
// k=v pairs, anything else as compact JSON. ok is false when the field is unset.
func valueAt(root *field.Path, obj any, path *field.Path) (string, bool) {
	if obj == nil || path == nil {
		return "", false
	}
	return valueAtText(root, obj, path.String())
}

// valueAtText is valueAt with the path as field.Path.String writes it.
func valueAtText(root *field.Path, obj any, want string) (string, bool) {
	if obj == nil {
		return "", false
	}
	rest := "." + want
	if root != nil {
		prefix := root.String()
		if !pathHasPrefix(want, prefix) {
			return "", false
		}
		rest = want[len(prefix):]
	}
	found, ok := descend(reflect.ValueOf(obj), rest)
	if !ok {
		return "", false
	}
	return render(found)
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
	for _, f := range jsonFieldsOf(v.Type()) {
		i, n := f.index, f.name
		switch {
		case f.inline:
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

// render writes a node as a person reads it; ok is false for zero values.
func render(v reflect.Value) (string, bool) {
	if s, _, ok := scalar(v); ok {
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

// pathHasPrefix reports whether p equals prefix or lies beneath it.
func pathHasPrefix(p, prefix string) bool {
	if !strings.HasPrefix(p, prefix) {
		return false
	}
	rest := p[len(prefix):]
	return rest == "" || rest[0] == '.' || rest[0] == '['
}

package diagnose

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
)

// diffTemplates lists the fields that differ between two pod templates, as paths under root.
// The walk is structural and generic: struct fields by their JSON names, map entries as [key],
// list elements as [i] by position. A field set on one side only is one change at that field,
// not one per leaf below it. Types with their own JSON form (Quantity, IntOrString, Time) are
// compared and shown as that form.
func diffTemplates(root *field.Path, prev, cur *corev1.PodTemplateSpec) []Change {
	var out []Change
	d := diffWalk{segs: fieldpath.NewStack(root), out: &out}
	d.value(reflect.ValueOf(prev).Elem(), reflect.ValueOf(cur).Elem())
	return out
}

var (
	jsonMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	quantityType  = reflect.TypeOf(resource.Quantity{})
)

// diffWalk is one diff's walk; segs is the path to the node it is at.
type diffWalk struct {
	segs fieldpath.PathStack
	out  *[]Change
}

func (d *diffWalk) change(a, b reflect.Value) {
	*d.out = append(*d.out, Change{Path: d.segs.Path(), Previous: diffRender(a), Current: diffRender(b)})
}

func (d *diffWalk) value(a, b reflect.Value) {
	az, bz := isEmpty(a), isEmpty(b)
	switch {
	case az && bz:
		return
	case az || bz:
		d.change(a, b)
		return
	}
	t := a.Type()
	if t == quantityType {
		// 64Mi and 65536Ki are the same limit.
		if qa, qb := a.Interface().(resource.Quantity), b.Interface().(resource.Quantity); qa.Cmp(qb) != 0 {
			d.change(a, b)
		}
		return
	}
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) && t.Kind() == reflect.Struct {
		if ra, rb := diffRender(a), diffRender(b); ra != rb {
			*d.out = append(*d.out, Change{Path: d.segs.Path(), Previous: ra, Current: rb})
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		d.value(a.Elem(), b.Elem())
	case reflect.Struct:
		for _, f := range fieldpath.JSONFieldsOf(t) {
			if f.Inline {
				d.value(a.Field(f.Index), b.Field(f.Index))
				continue
			}
			d.segs.Push(fieldpath.ChildSeg(f.Name))
			d.value(a.Field(f.Index), b.Field(f.Index))
			d.segs.Pop()
		}
	case reflect.Map:
		keys := map[string]reflect.Value{}
		for _, k := range a.MapKeys() {
			keys[fmt.Sprint(k.Interface())] = k
		}
		for _, k := range b.MapKeys() {
			keys[fmt.Sprint(k.Interface())] = k
		}
		names := make([]string, 0, len(keys))
		for n := range keys {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			k := keys[n]
			d.segs.Push(fieldpath.KeySeg(n))
			d.value(mapIndex(a, k), mapIndex(b, k))
			d.segs.Pop()
		}
	case reflect.Slice, reflect.Array:
		n := max(a.Len(), b.Len())
		for i := 0; i < n; i++ {
			d.segs.Push(fieldpath.IndexSeg(i))
			d.value(index(a, i), index(b, i))
			d.segs.Pop()
		}
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			d.change(a, b)
		}
	}
}

func mapIndex(m, k reflect.Value) reflect.Value {
	v := m.MapIndex(k)
	if !v.IsValid() {
		return reflect.Zero(m.Type().Elem())
	}
	return v
}

func index(s reflect.Value, i int) reflect.Value {
	if i < s.Len() {
		return s.Index(i)
	}
	return reflect.Zero(s.Type().Elem())
}

// isEmpty is "unset" in the JSON sense: what omitempty would drop, and zero structs.
func isEmpty(v reflect.Value) bool {
	if !v.IsValid() {
		return true
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	case reflect.Map, reflect.Slice:
		return v.Len() == 0
	default:
		return v.IsZero()
	}
}

// render shows a value as a person reads it in a manifest: strings bare, everything else as
// compact JSON; unset is "".
func diffRender(v reflect.Value) string {
	if isEmpty(v) {
		return ""
	}
	if v.Kind() == reflect.String {
		return v.String()
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return fmt.Sprint(v.Interface())
	}
	s := string(b)
	if unq, err := unquote(s); err == nil {
		return unq
	}
	return s
}

func unquote(s string) (string, error) {
	var out string
	if !strings.HasPrefix(s, `"`) {
		return "", fmt.Errorf("not a string")
	}
	err := json.Unmarshal([]byte(s), &out)
	return out, err
}

// changedPaths renders the changes' paths.
func changedPaths(cs []Change) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Path.String())
	}
	return out
}

// pathsRelated reports whether one path is the other or lies under it, so a suspect at
// envFrom[0].configMapRef.name is implicated by a change at envFrom, and a suspect at
// resources by a change at resources.limits[memory].
func pathsRelated(a, b string) bool {
	a, b = keysAsFields(a), keysAsFields(b)
	if a == b {
		return true
	}
	under := func(x, parent string) bool {
		return strings.HasPrefix(x, parent) && len(x) > len(parent) && (x[len(parent)] == '.' || x[len(parent)] == '[')
	}
	return under(a, b) || under(b, a)
}

// mapKey matches a [key] that is not a list index.
var mapKey = regexp.MustCompile(`\[([^\]0-9][^\]]*)\]`)

// keysAsFields writes map keys as fields (limits[memory] as limits.memory), so paths written
// either way compare equal.
func keysAsFields(p string) string { return mapKey.ReplaceAllString(p, ".$1") }

package dump

import (
	"bytes"
	"encoding/binary"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// appendCompact appends raw, valid JSON, to dst without the line breaks and the indentation
// after them: in the layout kubectl and the dump writer use (four spaces a level) they are more
// than half the bytes, and the typed decode otherwise passes over every one of them a byte at
// a time. A line break is never inside a string of valid JSON (it would be escaped), and the
// white space after one runs up to the next token, so only white space between tokens is
// dropped and the value is the same.
func appendCompact(dst, raw []byte) []byte {
	for {
		i := bytes.IndexByte(raw, '\n')
		if i < 0 {
			return append(dst, raw...)
		}
		dst = append(dst, raw[:i]...)
		j := i + 1
		for j+8 <= len(raw) && binary.LittleEndian.Uint64(raw[j:]) == eightSpaces {
			j += 8
		}
		for j < len(raw) {
			switch raw[j] {
			case ' ', '\t', '\r', '\n':
				j++
				continue
			}
			break
		}
		raw = raw[j:]
	}
}

// compactKinds says which kinds decode the same from text without its white space: those
// whose types hold no value that keeps its text (RawExtension, FieldsV1, json.RawMessage) or
// is read by an unmarshaler not known to ignore white space; managedFields count only for the
// kinds that keep them (snapshot.TrimManagedFields). A kind not found is not compacted.
var compactKinds = func() map[schema.GroupVersionKind]bool {
	out := map[schema.GroupVersionKind]bool{}
	gvks := []schema.GroupVersionKind{eventsGVK}
	for i := range snapshot.Kinds {
		gvks = append(gvks, snapshot.Kinds[i].GVK)
	}
	for _, gvk := range gvks {
		obj := newObject(gvk)
		if obj == nil {
			continue
		}
		_, keep := obj.(*corev1.Service)
		out[gvk] = textFree(reflect.TypeOf(obj).Elem(), !keep, map[reflect.Type]bool{})
	}
	return out
}()

var (
	// Unmarshalers that read a value's tokens, not its text: the leaf decoders of
	// decode_fast.go and IntOrString (a string or a number).
	tokenUnmarshalers = map[reflect.Type]bool{
		reflect.TypeFor[metav1.Time]():        true,
		reflect.TypeFor[metav1.MicroTime]():   true,
		reflect.TypeFor[resource.Quantity]():  true,
		reflect.TypeFor[intstr.IntOrString](): true,
	}
	managedFieldsType = reflect.TypeFor[[]metav1.ManagedFieldsEntry]()
)

// textFree reports whether no value of t keeps or reads its text beyond its tokens.
func textFree(t reflect.Type, skipManaged bool, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return true
	}
	seen[t] = true
	if tokenUnmarshalers[t] {
		return true
	}
	if t.Kind() == reflect.Pointer {
		return textFree(t.Elem(), skipManaged, seen)
	}
	pt := reflect.PointerTo(t)
	for _, u := range []reflect.Type{t, pt} {
		if u.Implements(jsonUnmarshaler) || u.Implements(textUnmarshaler) {
			return false
		}
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return textFree(t.Elem(), skipManaged, seen)
	case reflect.Map:
		return textFree(t.Key(), skipManaged, seen) && textFree(t.Elem(), skipManaged, seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if skipManaged && t == objectMetaType && f.Type == managedFieldsType {
				continue
			}
			if !textFree(f.Type, skipManaged, seen) {
				return false
			}
		}
		return true
	case reflect.Interface:
		return false
	}
	return true
}

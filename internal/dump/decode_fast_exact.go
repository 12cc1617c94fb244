package dump

// The slice and map decoders of the fork in decode_fast.go, under its contract and its
// equivalence tests.

import (
	"reflect"
	"sync"
	"unsafe"

	jsoniter "github.com/json-iterator/go"
	"github.com/modern-go/reflect2"
)

// fewerAllocs decodes slices and maps with string keys as json-iterator does, with fewer
// allocations:
//
//   - A slice is decoded into a scratch buffer of its decoder and then copied into one
//     allocation of its exact length, where json-iterator grows it one doubling at a time from
//     one element (a pod's conditions: arrays of 1, 2, 4 and 8, three of them garbage; its
//     containers, volumes, mounts, env, statuses likewise). Those growths were a tenth of the
//     bytes a read allocated, and the slack they leave is kept with the objects. Elements are
//     decoded into zeroed memory, as json-iterator's are, so the values are the same; only the
//     capacities differ, which no comparison of values sees. A slice that already holds an
//     array (a key met twice) is decoded into as json-iterator decodes into it.
//   - A map with string keys (labels, annotations and selectors, map[string]string; resource
//     lists, map[ResourceName]Quantity: a few in every object) is filled without the two
//     allocations json-iterator makes for each entry, a new key and a new value that the map
//     then copies: the value is decoded into a zeroed scratch value, as json-iterator decodes
//     it into a new one, and the key is read as its ReadMapCB reads it, which is the value
//     json-iterator's key decoder (blockString) gives it. map[string]string, the most
//     common, is a map of Go's own, filled without reflection.
//
// The element decoders are the API's own, asked for when a value is first decoded (asking
// while the API builds a decoder would recurse on a type that holds itself). Types with their
// own unmarshalers and []byte (base64) stay json-iterator's.
type fewerAllocs struct {
	jsoniter.DummyExtension
	api jsoniter.API
}

var stringMapType = reflect.TypeFor[map[string]string]()

func (x *fewerAllocs) CreateDecoder(typ reflect2.Type) jsoniter.ValDecoder {
	t := typ.Type1()
	switch {
	case t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8 && !ownDecoding(t):
		st := typ.(*reflect2.UnsafeSliceType)
		d := &exactSlice{sliceType: st, elemType: st.Elem(), elem: &lazyDecoder{api: x.api, typ: st.Elem()}}
		d.zero = d.elemType.UnsafeNew()
		d.scratch.New = func() any { return d.sliceType.UnsafeMakeSlice(0, 8) }
		return d
	case t == stringMapType:
		return stringMapDecoder{}
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && !ownDecoding(t) && !ownDecoding(t.Key()):
		mt := typ.(*reflect2.UnsafeMapType)
		d := &stringKeyMapDecoder{mapType: mt, elemType: mt.Elem(), elem: &lazyDecoder{api: x.api, typ: mt.Elem()}}
		d.zero = d.elemType.UnsafeNew()
		d.scratch.New = func() any { return d.elemType.UnsafeNew() }
		return d
	}
	return nil
}

// ownDecoding reports whether json-iterator decodes t with an unmarshaler of its own.
func ownDecoding(t reflect.Type) bool {
	for _, u := range []reflect.Type{t, reflect.PointerTo(t)} {
		if u.Implements(jsonUnmarshaler) || u.Implements(textUnmarshaler) {
			return true
		}
	}
	return false
}

// lazyDecoder is the API's decoder of typ, made on first use.
type lazyDecoder struct {
	api  jsoniter.API
	typ  reflect2.Type
	once sync.Once
	dec  jsoniter.ValDecoder
}

func (l *lazyDecoder) get() jsoniter.ValDecoder {
	l.once.Do(func() { l.dec = l.api.DecoderOf(reflect2.PtrTo(l.typ)) })
	return l.dec
}

type exactSlice struct {
	sliceType *reflect2.UnsafeSliceType
	elemType  reflect2.Type
	elem      *lazyDecoder
	// zero is a zero element, never written, that scratch elements are cleared from.
	zero unsafe.Pointer
	// scratch holds slice headers (unsafe.Pointer) whose elements are all zero, one for each
	// decode of this type under way (a slice of a type may hold slices of the same type).
	scratch sync.Pool
}

// sliceHeader is the layout of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

func (d *exactSlice) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	switch iter.WhatIsNext() {
	case jsoniter.NilValue:
		iter.ReadNil()
		d.sliceType.UnsafeSetNil(ptr)
		return
	case jsoniter.ArrayValue:
	default:
		iter.ReportError("decode slice", "expect [ or n")
		return
	}
	elem := d.elem.get()
	if (*sliceHeader)(ptr).cap > 0 {
		// As json-iterator: into the array there, grown as needed.
		n := 0
		iter.ReadArrayCB(func(iter *jsoniter.Iterator) bool {
			d.sliceType.UnsafeGrow(ptr, n+1)
			elem.Decode(d.sliceType.UnsafeGetIndex(ptr, n), iter)
			n++
			return iter.Error == nil
		})
		if n == 0 {
			d.sliceType.UnsafeSet(ptr, d.sliceType.UnsafeMakeSlice(0, 0))
		}
		return
	}
	s := d.scratch.Get().(unsafe.Pointer)
	n := 0
	iter.ReadArrayCB(func(iter *jsoniter.Iterator) bool {
		d.sliceType.UnsafeGrow(s, n+1)
		elem.Decode(d.sliceType.UnsafeGetIndex(s, n), iter)
		n++
		return iter.Error == nil
	})
	if iter.Error == nil {
		// As json-iterator: [] is an empty slice, not nil.
		out := d.sliceType.UnsafeMakeSlice(n, n)
		for i := range n {
			d.sliceType.UnsafeSetIndex(out, i, d.sliceType.UnsafeGetIndex(s, i))
		}
		d.sliceType.UnsafeSet(ptr, out)
	}
	for i := range n {
		d.elemType.UnsafeSet(d.sliceType.UnsafeGetIndex(s, i), d.zero)
	}
	(*sliceHeader)(s).len = 0
	d.scratch.Put(s)
}

type stringMapDecoder struct{}

func (stringMapDecoder) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	m := (*map[string]string)(ptr)
	switch iter.WhatIsNext() {
	case jsoniter.NilValue:
		iter.ReadNil()
		*m = nil
		return
	case jsoniter.ObjectValue:
	default:
		iter.ReportError("decode map", "expect { or n")
		return
	}
	if *m == nil {
		*m = map[string]string{}
	}
	iter.ReadMapCB(func(iter *jsoniter.Iterator, key string) bool {
		var v string
		blockString{}.Decode(unsafe.Pointer(&v), iter)
		(*m)[key] = v
		return iter.Error == nil
	})
}

type stringKeyMapDecoder struct {
	mapType  *reflect2.UnsafeMapType
	elemType reflect2.Type
	elem     *lazyDecoder
	zero     unsafe.Pointer
	// scratch holds zeroed values, one for each decode of this type under way.
	scratch sync.Pool
}

func (d *stringKeyMapDecoder) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	switch iter.WhatIsNext() {
	case jsoniter.NilValue:
		iter.ReadNil()
		*(*unsafe.Pointer)(ptr) = nil
		return
	case jsoniter.ObjectValue:
	default:
		iter.ReportError("decode map", "expect { or n")
		return
	}
	if d.mapType.UnsafeIsNil(ptr) {
		d.mapType.UnsafeSet(ptr, d.mapType.UnsafeMakeMap(0))
	}
	dec := d.elem.get()
	elem := d.scratch.Get().(unsafe.Pointer)
	key := new(string)
	iter.ReadMapCB(func(iter *jsoniter.Iterator, k string) bool {
		*key = k
		dec.Decode(elem, iter)
		d.mapType.UnsafeSetIndex(ptr, unsafe.Pointer(key), elem)
		d.elemType.UnsafeSet(elem, d.zero)
		return iter.Error == nil
	})
	d.scratch.Put(elem)
}

package dump

// This file is the dump reader's one fork of a library codec (with its slice and map decoders
// in decode_fast_exact.go): decodeFast decodes an object of a kind the reader keeps with
// json-iterator, configured and extended to decode as the deserializer's decoder
// (sigs.k8s.io/json's UnmarshalCaseSensitivePreserveInts, which decodeObject falls back on)
// does. It earns its place on `audit --dump` of a 20,000-pod dump: with the library decoder the
// read took 1.4 times the CPU and its peak 1.17 times the memory, and without the slice and map
// decoders the peak was 5-11% higher (issue 36; the table is in the commit that confined it).
//
// The contract: for any object text the reader hands it (valid JSON of one object, UTF-8),
// decodeFast either returns an error, and decodeObject decodes the text again with the
// deserializer's decoder, whose value and error are the ones kept, or it decodes the same Go
// value the deserializer's decoder does, except that managedFields are checked and skipped
// where the reader drops them and slices hold no room past their length. A value it does not
// take plainly (an escape in a timestamp, a number where a string was, null for a quantity) is
// an error here, never a guess. What it returns never points into raw, which the reader reuses.
// Held by TestDecodeObjectAgreesWithDeserializer (every object of every dump in testdata, both
// ways) and FuzzDecodeObject (odd and hostile input: escapes, keys met twice, null, bad
// layouts, numbers out of range, indented text), which compare the two decoders value for
// value and error for error; TestFewerAllocationsDecoders checks json-iterator still takes
// this file's decoders.

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	jsoniter "github.com/json-iterator/go"
	"github.com/modern-go/reflect2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// fastJSON decodes as the deserializer's decoder does on the input the reader hands it (valid
// JSON of one object), keys matched with their case; the Kubernetes API machinery used this
// configuration before sigs.k8s.io/json.
// typeDecoders take over the leaf types of timestamps and quantities. fastJSON skips
// managedFields, which the reader drops; fastJSONKeep, for the kinds that keep them (Services,
// see snapshot.TrimManagedFields), decodes them.
//
// The plain variants read the keys of structs of more than ten fields (ObjectMeta, PodSpec,
// Container, the statuses: most keys of a pod) in place instead of as a new string each,
// which then only serves a map look-up and is garbage; they do not unescape keys, so they
// take only text without a backslash, where a key is its bytes either way.
var (
	fastJSON          = newFastJSON(true, false)
	fastJSONKeep      = newFastJSON(false, false)
	fastJSONPlain     = newFastJSON(true, true)
	fastJSONKeepPlain = newFastJSON(false, true)
)

func newFastJSON(skipManaged, plainKeys bool) jsoniter.API {
	api := jsoniter.Config{CaseSensitive: true, ObjectFieldMustBeSimpleString: plainKeys}.Froze()
	api.RegisterExtension(&typeDecoders{})
	if skipManaged {
		api.RegisterExtension(&skipManagedFields{})
	}
	// Every variant decodes strings and optional numbers so (null as the deserializer takes
	// it); only the plain ones attach the blocks (unmarshal).
	api.RegisterExtension(&plainStrings{})
	api.RegisterExtension(&fewerAllocs{api: api})
	return api
}

// decodeFast decodes raw into obj, which is new; keep says whether managedFields are kept
// (Services, see snapshot.TrimManagedFields) or checked and skipped. An error means only that
// the deserializer's decoder must decide: obj is then in no state to use.
func decodeFast(raw []byte, obj any, keep bool) error {
	plain := bytes.IndexByte(raw, '\\') < 0
	var api jsoniter.API
	switch {
	case keep && plain:
		api = fastJSONKeepPlain
	case keep:
		api = fastJSONKeep
	case plain:
		api = fastJSONPlain
	default:
		api = fastJSON
	}
	return unmarshal(api, raw, obj, plain)
}

// unmarshal is api.Unmarshal, with the strings of plain text put in shared blocks.
func unmarshal(api jsoniter.API, raw []byte, obj any, plain bool) error {
	if !plain {
		return api.Unmarshal(raw, obj)
	}
	iter := api.BorrowIterator(raw)
	defer api.ReturnIterator(iter)
	sb := blockPool.Get().(*stringBlocks)
	defer blockPool.Put(sb)
	iter.Attachment = sb
	iter.ReadVal(obj)
	// What Unmarshal does after ReadVal.
	if iter.WhatIsNext() == jsoniter.InvalidValue && errors.Is(iter.Error, io.EOF) {
		return nil
	}
	if iter.Error != nil {
		return iter.Error
	}
	iter.ReportError("Unmarshal", "there are bytes left after unmarshal")
	return iter.Error
}

// typeDecoders decode the leaf types every object holds many of (timestamps, quantities) as
// their UnmarshalJSON does, without it: json-iterator hands an unmarshaler a copy of the value's
// bytes, and Time's then runs encoding/json on them to read one string, which was a tenth of
// the decode and most of its garbage. They take only the plain case (a string without
// escapes, or null); anything else is reported as an error, which sends the whole object to
// the deserializer's decoder, so that what they accept decodes as UnmarshalJSON decodes it and
// every error stays the deserializer's.
type typeDecoders struct{ jsoniter.DummyExtension }

// skipManagedFields has ObjectMeta.managedFields checked and skipped instead of decoded: every
// source drops them on arrival except from Services (snapshot.TrimManagedFields), and in a
// dump of kubectl cluster-info dump, which keeps them, they are often half of each object.
// What is skipped is checked to be what the deserializer takes without error, so that errors
// stay its own.
type skipManagedFields struct{ jsoniter.DummyExtension }

var objectMetaType = reflect.TypeFor[metav1.ObjectMeta]()

func (*skipManagedFields) UpdateStructDescriptor(d *jsoniter.StructDescriptor) {
	if d.Type.Type1() != objectMetaType {
		return
	}
	if b := d.GetField("ManagedFields"); b != nil {
		b.Decoder = managedFieldsChecker{}
	}
}

// managedFieldsChecker passes over a managedFields value the deserializer decodes without
// error into []ManagedFieldsEntry: an array of objects whose string fields are strings and
// whose time is null or a timestamp; fieldsV1 takes any value and other keys are ignored.
// Anything else is reported, for the deserializer to decide.
type managedFieldsChecker struct{}

func (managedFieldsChecker) Decode(_ unsafe.Pointer, iter *jsoniter.Iterator) {
	if iter.WhatIsNext() != jsoniter.ArrayValue {
		iter.ReportError("decode managedFields", "value left to the deserializer")
		return
	}
	iter.ReadArrayCB(func(iter *jsoniter.Iterator) bool {
		if iter.WhatIsNext() != jsoniter.ObjectValue {
			iter.ReportError("decode managedFields", "entry left to the deserializer")
			return false
		}
		return iter.ReadObjectCB(func(iter *jsoniter.Iterator, key string) bool {
			switch key {
			case "manager", "operation", "apiVersion", "fieldsType", "subresource":
				if iter.WhatIsNext() != jsoniter.StringValue {
					iter.ReportError("decode managedFields", "field left to the deserializer")
					return false
				}
				iter.Skip()
			case "time":
				s, ok := plainStringValue(iter)
				if !ok {
					return false
				}
				if s != nil {
					if _, err := time.Parse(time.RFC3339, string(s)); err != nil {
						iter.ReportError("decode managedFields", err.Error())
						return false
					}
				}
			default:
				iter.Skip()
			}
			return iter.Error == nil
		})
	})
}

var (
	timeType        = reflect.TypeFor[metav1.Time]()
	microTimeType   = reflect.TypeFor[metav1.MicroTime]()
	quantityType    = reflect.TypeFor[resource.Quantity]()
	intOrStringType = reflect.TypeFor[intstr.IntOrString]()
)

func (*typeDecoders) CreateDecoder(typ reflect2.Type) jsoniter.ValDecoder {
	switch typ.Type1() {
	case timeType:
		return timeDecoder(time.RFC3339)
	case microTimeType:
		return timeDecoder(metav1.RFC3339Micro)
	case quantityType:
		return quantityDecoder{}
	case intOrStringType:
		return intOrStringDecoder{}
	}
	return nil
}

// plainStringValue reads a string without escapes, or null (ok with s nil); the slice is
// valid until the iterator reads on. Anything else is reported on the iterator.
func plainStringValue(iter *jsoniter.Iterator) (s []byte, ok bool) {
	switch iter.WhatIsNext() {
	case jsoniter.NilValue:
		iter.ReadNil()
		return nil, true
	case jsoniter.StringValue:
		s = iter.ReadStringAsSlice()
		if iter.Error != nil {
			return nil, false
		}
		if bytes.IndexByte(s, '\\') >= 0 {
			iter.ReportError("decode", "escaped string left to the deserializer")
			return nil, false
		}
		return s, true
	default:
		iter.ReportError("decode", "value left to the deserializer")
		return nil, false
	}
}

// timeDecoder decodes metav1.Time or metav1.MicroTime (each a time.Time and nothing else) in
// the given layout, as their UnmarshalJSON does.
type timeDecoder string

func (layout timeDecoder) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	s, ok := plainStringValue(iter)
	if !ok {
		return
	}
	t := (*time.Time)(ptr)
	if s == nil {
		*t = time.Time{}
		return
	}
	pt, err := time.Parse(string(layout), string(s))
	if err != nil {
		iter.ReportError("decode time", err.Error())
		return
	}
	*t = pt.Local()
}

// quantityDecoder decodes a resource.Quantity written as a string, as its UnmarshalJSON does.
type quantityDecoder struct{}

func (quantityDecoder) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	s, ok := plainStringValue(iter)
	if !ok {
		return
	}
	if s == nil {
		// UnmarshalJSON keeps the format of a value decoded before; leave it to it.
		iter.ReportError("decode quantity", "null left to the deserializer")
		return
	}
	q := (*resource.Quantity)(ptr)
	parsed, err := resource.ParseQuantity(strings.TrimSpace(string(s)))
	if err != nil {
		iter.ReportError("decode quantity", err.Error())
		return
	}
	*q = parsed
}

// intOrStringDecoder decodes an intstr.IntOrString (ports of probes and services, a
// deployment's surge) as its UnmarshalJSON does, without the copy of the value's bytes
// json-iterator hands an unmarshaler and the two runs of encoding/json it makes on them: a
// plain string sets Type String and StrVal, an integer of int32 Type Int and IntVal, null Type
// Int alone; the other field is left as it was. Anything else (an escape, a number
// encoding/json would not take as an int32) is reported, for the deserializer to decide.
type intOrStringDecoder struct{}

func (intOrStringDecoder) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	v := (*intstr.IntOrString)(ptr)
	switch iter.WhatIsNext() {
	case jsoniter.StringValue:
		s, ok := plainStringValue(iter)
		if !ok {
			return
		}
		v.Type = intstr.String
		if sb, _ := iter.Attachment.(*stringBlocks); sb != nil {
			v.StrVal = sb.string(s)
		} else {
			v.StrVal = string(s)
		}
	case jsoniter.NumberValue:
		n, ok := plainInt32(iter)
		if !ok {
			return
		}
		v.Type, v.IntVal = intstr.Int, n
	case jsoniter.NilValue:
		iter.ReadNil()
		v.Type = intstr.Int
	default:
		iter.ReportError("decode IntOrString", "value left to the deserializer")
	}
}

// plainInt32 reads a number as encoding/json reads it into an int32: an integer in range,
// without fraction or exponent. Anything else is reported on the iterator.
func plainInt32(iter *jsoniter.Iterator) (int32, bool) {
	num := iter.ReadNumber()
	if iter.Error != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(num), 10, 32)
	if err != nil {
		iter.ReportError("decode int32", "number left to the deserializer")
		return 0, false
	}
	return int32(n), true
}

// plainStrings decodes the strings of text without a backslash (see fastJSONPlain, whose
// iterator carries the blocks; other text is read as ReadString reads it) into blocks shared
// by the objects one decode reads after another, instead of one allocation each: a pod holds a few hundred strings, most a few bytes long, so they were most of the
// decode's allocations and of the collector's work. A string of such text is its bytes, as
// ReadString makes it. The blocks are kept as long as any string in them is: the strings of
// objects the reader keeps, which live as long as each other.
type plainStrings struct{ jsoniter.DummyExtension }

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonNumberType  = reflect.TypeFor[json.Number]()
	iterNumberType  = reflect.TypeFor[jsoniter.Number]()
)

func (*plainStrings) CreateDecoder(typ reflect2.Type) jsoniter.ValDecoder {
	t := typ.Type1()
	switch t {
	case int32PtrType:
		return blockInt32Ptr{}
	case int64PtrType:
		return blockInt64Ptr{}
	case boolPtrType:
		return blockBoolPtr{}
	}
	if t.Kind() != reflect.String || t == jsonNumberType || t == iterNumberType {
		return nil
	}
	for _, u := range []reflect.Type{t, reflect.PointerTo(t)} {
		if u.Implements(jsonUnmarshaler) || u.Implements(textUnmarshaler) {
			return nil // its own decoder, as json-iterator picks it
		}
	}
	return blockString{}
}

// blockString decodes a string as ReadString does, into the iterator's stringBlocks when it
// has them (an iterator json-iterator makes on its own, for a ",string" field, does not).
type blockString struct{}

func (blockString) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	sb, _ := iter.Attachment.(*stringBlocks)
	next := iter.WhatIsNext()
	if next == jsoniter.NilValue {
		// As encoding/json and the deserializer: null leaves a string as it was (a key met
		// twice), where json-iterator's ReadString makes it empty.
		iter.ReadNil()
		return
	}
	if sb == nil || next != jsoniter.StringValue {
		*(*string)(ptr) = iter.ReadString()
		return
	}
	b := iter.ReadStringAsSlice()
	if iter.Error != nil {
		return
	}
	*(*string)(ptr) = sb.string(b)
}

var (
	int32PtrType = reflect.TypeFor[*int32]()
	int64PtrType = reflect.TypeFor[*int64]()
	boolPtrType  = reflect.TypeFor[*bool]()
)

// blockInt32Ptr, blockInt64Ptr and blockBoolPtr decode the optional numbers and flags of the
// API types (a pod has a dozen: priority, grace periods, started, controller, ...) as
// json-iterator's OptionalDecoder does with its integer or bool decoder: null sets nil, a
// value is read into the one already there or, when there is none, into a new one, taken from
// the decode's blocks instead of an allocation of its own.
type (
	blockInt32Ptr struct{}
	blockInt64Ptr struct{}
	blockBoolPtr  struct{}
)

func (blockInt32Ptr) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	pp := (**int32)(ptr)
	if iter.ReadNil() {
		*pp = nil
		return
	}
	v := iter.ReadInt32()
	if *pp == nil {
		if sb, _ := iter.Attachment.(*stringBlocks); sb != nil {
			*pp = nextIn(&sb.int32s)
		} else {
			*pp = new(int32)
		}
	}
	**pp = v
}

func (blockInt64Ptr) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	pp := (**int64)(ptr)
	if iter.ReadNil() {
		*pp = nil
		return
	}
	v := iter.ReadInt64()
	if *pp == nil {
		if sb, _ := iter.Attachment.(*stringBlocks); sb != nil {
			*pp = nextIn(&sb.int64s)
		} else {
			*pp = new(int64)
		}
	}
	**pp = v
}

func (blockBoolPtr) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	pp := (**bool)(ptr)
	if iter.ReadNil() {
		*pp = nil
		return
	}
	v := iter.ReadBool()
	if *pp == nil {
		if sb, _ := iter.Attachment.(*stringBlocks); sb != nil {
			*pp = nextIn(&sb.bools)
		} else {
			*pp = new(bool)
		}
	}
	**pp = v
}

// valueBlock is how many values one block of int32s, int64s or bools holds.
const valueBlock = 256

// nextIn hands out the next zero element of a block, starting a new block when it is full.
func nextIn[T any](block *[]T) *T {
	if len(*block) == cap(*block) {
		*block = make([]T, 0, valueBlock)
	}
	*block = (*block)[:len(*block)+1]
	return &(*block)[len(*block)-1]
}

// stringBlocks hands out strings copied into shared blocks; a block is never written again
// where a string was handed out, only appended to. int32s, int64s and bools are blocks of the
// values optional fields point to, handed out one element at a time.
type stringBlocks struct {
	buf    []byte
	int32s []int32
	int64s []int64
	bools  []bool
}

const (
	stringBlockSize = 16 << 10
	// maxBlockString: a longer string (an annotation, a command line) gets its own
	// allocation, so a block's unused tail stays small.
	maxBlockString = 512
)

func (sb *stringBlocks) string(b []byte) string {
	switch {
	case len(b) == 0:
		return ""
	case len(b) > maxBlockString:
		return string(b)
	}
	if cap(sb.buf)-len(sb.buf) < len(b) {
		sb.buf = make([]byte, 0, stringBlockSize)
	}
	n := len(sb.buf)
	sb.buf = append(sb.buf, b...)
	return unsafe.String(&sb.buf[n], len(b))
}

// blockPool holds each decode worker's stringBlocks between objects.
var blockPool = sync.Pool{New: func() any { return new(stringBlocks) }}

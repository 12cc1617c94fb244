package dump

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"runtime"
	"sync"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// typeMeta is what a value says of its own kind; the head of every object is read into it.
type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// readHead reads an object's apiVersion and kind as json.Unmarshal into typeMeta does, with a
// scan of its top-level keys instead of a decode of the whole object. raw is valid JSON (the
// JSON decoder or the YAML converter produced it); anything the scan does not handle plainly
// (escapes, keys that match only without case, values that are not plain strings) is left to
// json.Unmarshal, so the result and the errors are always json.Unmarshal's.
func readHead(raw []byte) (typeMeta, error) {
	if h, ok := scanHead(raw); ok {
		return h, nil
	}
	var h typeMeta
	err := json.Unmarshal(raw, &h)
	return h, err
}

func scanHead(raw []byte) (typeMeta, bool) {
	var h typeMeta
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return h, false
	}
	i++
	for {
		i = skipSpace(raw, i)
		if i >= len(raw) {
			return h, false
		}
		switch raw[i] {
		case '}':
			return h, skipSpace(raw, i+1) == len(raw)
		case ',':
			i++
			continue
		case '"':
		default:
			return h, false
		}
		key, next, ok := plainString(raw, i)
		if !ok {
			return h, false
		}
		i = skipSpace(raw, next)
		if i >= len(raw) || raw[i] != ':' {
			return h, false
		}
		i = skipSpace(raw, i+1)
		var field *string
		switch {
		case key == "apiVersion":
			field = &h.APIVersion
		case key == "kind":
			field = &h.Kind
		case bytes.EqualFold([]byte(key), []byte("apiVersion")) || bytes.EqualFold([]byte(key), []byte("kind")):
			return h, false // json.Unmarshal matches keys without case; let it decide
		}
		if field != nil {
			v, next, ok := plainString(raw, i)
			if !ok {
				return h, false
			}
			*field, i = v, next
			continue
		}
		if i = skipValue(raw, i); i < 0 {
			return h, false
		}
	}
}

// plainString reads the string at raw[i] when it is printable ASCII without escapes.
func plainString(raw []byte, i int) (string, int, bool) {
	if i >= len(raw) || raw[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(raw); j++ {
		switch c := raw[j]; {
		case c == '"':
			return string(raw[i+1 : j]), j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", 0, false
		}
	}
	return "", 0, false
}

// skipValue returns the offset after the value at raw[i] of valid JSON, or -1.
func skipValue(raw []byte, i int) int {
	depth := 0
	for i < len(raw) {
		switch raw[i] {
		case '"':
			j := i + 1
			for {
				k := bytes.IndexAny(raw[j:], `"\`)
				if k < 0 {
					return -1
				}
				j += k
				if raw[j] == '\\' {
					j += 2
					continue
				}
				break
			}
			i = j + 1
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			i++
		case ',', ':', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return i
			}
			i++
		default:
			i++
			continue
		}
		if depth == 0 {
			return i
		}
	}
	if depth == 0 {
		return i
	}
	return -1
}

// newObject returns an empty object of a kind the reader keeps, as the scheme would create it.
func newObject(gvk schema.GroupVersionKind) k8sruntime.Object {
	if gvk == eventsGVK {
		return &eventsv1.Event{}
	}
	if k := snapshot.KindFor(gvk); k != nil {
		return k.New()
	}
	return nil
}

// decodeObject decodes one object of a kind the reader keeps straight into its type, as the
// scheme's universal deserializer does for JSON without defaulting or conversion: keys
// matched with their case, the types' own unmarshalers (Quantity, Time, IntOrString,
// RawExtension), without the deserializer's two extra passes over the text to recognize it and
// find its kind. It decodes with decodeFast (decode_fast.go, whose doc states the contract);
// input it refuses is decoded again by the deserializer's own decoder (sigs.k8s.io/json),
// whose error is the one reported.
func decodeObject(raw []byte, gvk schema.GroupVersionKind) (k8sruntime.Object, error) {
	obj := newObject(gvk)
	if obj == nil {
		// Not a kind this package models; the deserializer says why.
		o, _, err := decoder.Decode(raw, &gvk, nil)
		return o, err
	}
	_, keep := obj.(*corev1.Service)
	if decodeFast(raw, obj, keep) == nil {
		return obj, nil
	}
	obj = newObject(gvk)
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// decodeJob is one step of a file's read: an object, decoded by the pool (pooled; done is
// done once it is) or at once, or the metrics document (metrics, raw kept), which the merger
// reads in its place among the objects. done is a WaitGroup in the job, not a channel of its
// own: one allocation less for every object.
type decodeJob struct {
	raw     []byte
	gvk     schema.GroupVersionKind
	at      location
	pooled  bool
	done    sync.WaitGroup
	obj     k8sruntime.Object
	sum     uint64
	err     error
	metrics bool
	// read is how many bytes of its file had been read when the parser met it: the merger
	// files it only if a read of one file after the other would have got that far within
	// --max-dump-size.
	read int64
}

func (j *decodeJob) run() {
	j.obj, j.err = decodeObject(j.raw, j.gvk)
	j.sum = maphash.Bytes(textSeed, j.raw)
	putItemBuf(j.raw)
	j.raw = nil
	j.done.Done()
}

// maxPooledItem bounds the item buffers kept for reuse; a larger item (rare: a pod is about
// 10 kB) gets a buffer of its own.
const maxPooledItem = 256 << 10

// itemBufs recycles the copies of item text the pool decodes from: without them every item's
// bytes are garbage once decoded, as much garbage as the dump is large, which the collector
// must then run for and which raises the read's peak memory above what it keeps. Reuse is
// safe because the decoders copy what they keep (strings, RawExtension, FieldsV1);
// TestDecodeObjectAgreesWithDeserializer and FuzzDecodeObject decode from a buffer
// they overwrite afterwards.
var itemBufs sync.Pool

func getItemBuf(raw []byte, compact bool) []byte {
	var buf []byte
	if len(raw) <= maxPooledItem {
		if p, ok := itemBufs.Get().(*[]byte); ok {
			buf = (*p)[:0]
		}
	}
	if compact {
		return appendCompact(buf, raw)
	}
	return append(buf, raw...)
}

func putItemBuf(b []byte) {
	if cap(b) <= maxPooledItem {
		itemBufs.Put(&b)
	}
}

// decodePool decodes the objects of every file being read on every processor; the merger
// files them in the order read, so a read is the same whatever the number of processors.
type decodePool struct {
	jobs    chan *decodeJob
	workers sync.WaitGroup
}

// newDecodePool returns nil on one processor, where the parser decodes as it reads.
func newDecodePool() *decodePool {
	n := runtime.GOMAXPROCS(0)
	if n < 2 {
		return nil
	}
	p := &decodePool{jobs: make(chan *decodeJob, 64*n)}
	for range n {
		p.workers.Go(func() {
			for j := range p.jobs {
				j.run()
			}
		})
	}
	return p
}

func (p *decodePool) close() {
	if p != nil {
		close(p.jobs)
	}
}

// decode hands one object to the pool, or decodes it at once without one, and passes it on
// to the merger. raw is reused by the stream once this returns, so the pool keeps a copy.
func (p *parser) decode(raw []byte, gvk schema.GroupVersionKind, at location) error {
	j := &decodeJob{gvk: gvk, at: at.fixed()}
	if p.pool == nil {
		j.obj, j.err = decodeObject(raw, gvk)
		j.sum = maphash.Bytes(textSeed, raw)
		return p.push(j)
	}
	j.raw, j.pooled, j.read = getItemBuf(raw, compactKinds[gvk]), true, p.budget.read
	j.done.Add(1)
	// Sent before it is passed on, so the merger never waits for a job no worker has.
	select {
	case p.pool.jobs <- j:
	case <-p.ctx.Done():
		putItemBuf(j.raw)
		return p.ctx.Err()
	}
	return p.out.push(p.ctx, j)
}

// fileJob files one step of a file's read, once the pool has decoded it.
func (r *reader) fileJob(j *decodeJob) error {
	if j.pooled {
		j.done.Wait()
	}
	if j.metrics {
		return r.metrics(j.raw, j.at)
	}
	if j.err != nil {
		return j.at.errorf("%s %s: %w", j.gvk.GroupVersion(), j.gvk.Kind, j.err)
	}
	return r.add(j.obj, j.gvk, j.at, j.sum)
}

// fixed places a JSON location without the text it points into, which the stream reuses.
func (l location) fixed() location {
	if l.yaml || l.text == nil {
		return l
	}
	if l.rel > 0 {
		seg := l.text[:min(l.rel, len(l.text))]
		if nl := bytes.Count(seg, []byte{'\n'}); nl > 0 {
			l.line, l.col = l.line+nl, len(seg)-bytes.LastIndexByte(seg, '\n')
		} else {
			l.col += len(seg)
		}
	}
	l.text, l.rel = nil, 0
	return l
}

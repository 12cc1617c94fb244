package dump

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// maxDepth bounds lists inside lists; kubectl never nests them, so deeper input is not a dump.
const maxDepth = 4

var (
	emptyGVK     schema.GroupVersionKind
	coreEventGVK = corev1.SchemeGroupVersion.WithKind("Event")
	// eventsGVK is read and converted to a core/v1 Event; every kind snapshot.Kinds does not
	// list is skipped and counted.
	eventsGVK = eventsv1.SchemeGroupVersion.WithKind("Event")
	// decoder decodes without defaulting or conversion, so objects stay as the API server wrote them.
	decoder = newDecoder()
)

// newDecoder builds a scheme of the six API groups a snapshot holds, rather than client-go's
// scheme of every group, whose other kinds would be skipped anyway.
func newDecoder() runtime.Decoder {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{appsv1.AddToScheme, batchv1.AddToScheme, corev1.AddToScheme, discoveryv1.AddToScheme, eventsv1.AddToScheme, policyv1.AddToScheme} {
		utilruntime.Must(add(s)) // registering built-in types fails only on a programming error
	}
	return serializer.NewCodecFactory(s).UniversalDeserializer()
}

// value reads one JSON value: an object, a list of objects, or an array of objects. def supplies
// the apiVersion and kind of items of a typed list, which the API server writes without them.
func (p *parser) value(raw []byte, at location, def schema.GroupVersionKind, depth int) error {
	if depth > maxDepth {
		return at.errorf("lists nested more than %d deep", maxDepth)
	}
	switch first := firstByte(raw); first {
	case '{':
	case '[':
		items, err := arrayItems(raw)
		if err != nil {
			return at.errorf("%w", err)
		}
		for i, it := range items {
			if err := p.value(it.data, at.child(i, it.offset), schema.GroupVersionKind{}, depth+1); err != nil {
				return err
			}
		}
		return nil
	default:
		return at.errorf("expected a Kubernetes object, found %s", describe(raw))
	}
	var head typeMeta
	if p.head != nil {
		// The scan that split the item read them.
		head, p.head = *p.head, nil
	} else {
		var err error
		if head, err = readHead(raw); err != nil {
			return at.errorf("read apiVersion and kind: %w", err)
		}
	}
	gvk := def
	if head.APIVersion != "" {
		gv, err := schema.ParseGroupVersion(head.APIVersion)
		if err != nil {
			return at.errorf("%w", err)
		}
		gvk.Group, gvk.Version = gv.Group, gv.Version
	}
	if head.Kind != "" {
		gvk.Kind = head.Kind
	}
	if gvk.Kind == "" || gvk.Version == "" {
		if depth == 1 && p.deferred != nil {
			raw = bytes.Clone(raw)
			if at.text != nil {
				at.text = raw
			}
			*p.deferred = append(*p.deferred, pendingItem{raw: raw, at: at})
			return nil
		}
		return at.errorf("not a Kubernetes object: it has no apiVersion and kind")
	}
	if strings.HasSuffix(gvk.Kind, "List") {
		p.out.listed |= listedOf(gvk.GroupVersion().WithKind(strings.TrimSuffix(gvk.Kind, "List")))
		items, err := listItems(raw)
		if err != nil {
			return at.errorf("%s: %w", gvk.Kind, err)
		}
		var itemGVK schema.GroupVersionKind
		if gvk.Kind != "List" {
			itemGVK = gvk.GroupVersion().WithKind(strings.TrimSuffix(gvk.Kind, "List"))
		}
		for i, it := range items {
			if err := p.value(it.data, at.child(i, it.offset), itemGVK, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if gvk == metricsGVK {
		// Read by the merger in its place among the objects; the stream reuses raw's bytes.
		return p.push(&decodeJob{raw: bytes.Clone(raw), gvk: gvk, at: at.fixed(), metrics: true})
	}
	if gvk != eventsGVK && snapshot.KindFor(gvk) == nil {
		p.out.skipped[gvk.Kind]++
		return nil
	}
	return p.decode(raw, gvk, at)
}

// maxMessage bounds an event's message as kept, its cut mark included. The API server takes
// messages of up to 1 KiB from the kubelet's recorder; only a hand-made event is longer.
const maxMessage = 16 << 10

// seenObject is an object filed in the snapshot: where it is in its kind's list, and where it
// was read.
type seenObject struct {
	obj  runtime.Object
	idx  int
	file string
	sum  uint64 // of the text it was decoded from
}

// textSeed hashes objects' text, to tell a repeated object from an edited one cheaply.
var textSeed = maphash.MakeSeed()

// add files a decoded object into the snapshot. An object read twice with the same content is
// read once; read twice with different content (dumps of two moments in one directory), the
// newer copy is kept and the duplicate is noted.
func (r *reader) add(obj runtime.Object, gvk schema.GroupVersionKind, at location, sum uint64) error {
	if ev, ok := obj.(*eventsv1.Event); ok {
		obj, gvk = coreEvent(ev), coreEventGVK
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return at.errorf("%s: %w", gvk.Kind, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	snapshot.TrimManagedFields(obj)
	if m.GetName() == "" {
		return at.errorf("%s has no metadata.name", gvk.Kind)
	}
	ns := m.GetNamespace()
	if gvk.Kind == "Node" {
		ns = ""
		m.SetNamespace("")
	} else if ns == "" {
		// kubectl places an object without a namespace in -n, else in "default".
		ns = r.opts.Namespace
		m.SetNamespace(ns)
	}
	if problem := nameProblem(gvk.Kind, ns, m.GetName()); problem != "" {
		r.badNames.add(gvk.Kind, r.name, problem)
		return nil
	}
	if ev, ok := obj.(*corev1.Event); ok {
		ev.Message = cutText(ev.Message, maxMessage)
	}
	if n, ok := obj.(*corev1.Node); ok {
		if t := objectTime(n); t.After(r.clocks[r.name]) {
			r.clocks[r.name] = t
		}
	}
	key := snapshot.ObjectKey{Kind: gvk.Kind, Namespace: ns, Name: m.GetName()}
	if uid := m.GetUID(); uid != "" {
		ukey := gvk.Kind + "/" + string(uid)
		if k, ok := r.uids[ukey]; ok && k != key {
			// The same object under another name: one of the copies was edited.
			key = k
		} else if !ok {
			r.uids[ukey] = key
		}
	}
	if prev := r.seen[key]; prev != nil {
		return r.again(prev, key, obj, at, sum)
	}
	idx, err := r.put(obj, -1, at)
	if err != nil {
		return err
	}
	r.seen[key] = &seenObject{obj: obj, idx: idx, file: r.name, sum: sum}
	if ns != "" {
		r.namespaces[ns] = true
	}
	r.objects++
	r.prog.object(r, gvk.Kind)
	return nil
}

// again handles an object read a second time.
func (r *reader) again(prev *seenObject, key snapshot.ObjectKey, obj runtime.Object, at location, sum uint64) error {
	// The same text is the same object; other text may still be (YAML and JSON of one object).
	if sum == prev.sum || apiequality.Semantic.DeepEqual(prev.obj, obj) {
		return nil
	}
	d := duplicate{key: key, first: prev.file, second: r.name, firstRV: resourceVersion(prev.obj), secondRV: resourceVersion(obj)}
	if newer(obj, prev.obj) {
		if _, err := r.put(obj, prev.idx, at); err != nil {
			return err
		}
		d.kept = r.name
		prev.obj, prev.file, prev.sum = obj, r.name, sum
	} else {
		d.kept = prev.file
	}
	r.duplicates = append(r.duplicates, d)
	return nil
}

// newer reports whether a is a later copy of the same object than b: by resourceVersion, which
// etcd makes increase, then by the newest timestamp each carries. A tie keeps b, the first read.
func newer(a, b runtime.Object) bool {
	ra, errA := strconv.ParseUint(resourceVersion(a), 10, 64)
	rb, errB := strconv.ParseUint(resourceVersion(b), 10, 64)
	if errA == nil && errB == nil && ra != rb {
		return ra > rb
	}
	return objectTime(a).After(objectTime(b))
}

func resourceVersion(o runtime.Object) string {
	m, err := meta.Accessor(o)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}

// put appends obj to its kind's list, or replaces the element at idx when idx >= 0, and
// returns its index.
func (r *reader) put(obj runtime.Object, idx int, at location) (int, error) {
	switch o := obj.(type) {
	case *appsv1.ControllerRevision:
		// Data keeps its JSON verbatim, indentation included; compacted, it is the same bytes
		// whichever form and layout it was read from.
		if len(o.Data.Raw) > 0 {
			var b bytes.Buffer
			if err := json.Compact(&b, o.Data.Raw); err != nil {
				return 0, at.errorf("ControllerRevision %s data: %w", o.Name, err)
			}
			o.Data.Raw = b.Bytes()
		}
	case *corev1.Pod:
		r.listed |= listedPods
	case *corev1.PersistentVolume:
		r.listed |= listedVolumes
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if k := snapshot.KindFor(gvk); k != nil {
		if i, ok := k.Put(r.snap, obj, idx); ok {
			return i, nil
		}
	}
	return 0, at.errorf("%s decoded to unexpected type %T", gvk.Kind, obj)
}

// cutText keeps at most limit bytes of s, its cut mark included, on a rune boundary.
func cutText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	keep := limit - 80
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + fmt.Sprintf(" [kubectl-diagnose cut %d more bytes]", len(s)-keep)
}

// coreEvent converts an events.k8s.io/v1 Event as the API server does
// (k8s.io/kubernetes pkg/apis/events/v1 Convert_v1_Event_To_core_Event): the deprecated fields
// fill their core/v1 namesakes and series, eventTime and reporting fields are kept as they are.
func coreEvent(in *eventsv1.Event) *corev1.Event {
	out := &corev1.Event{
		ObjectMeta:          in.ObjectMeta,
		InvolvedObject:      in.Regarding,
		Reason:              in.Reason,
		Message:             in.Note,
		Source:              in.DeprecatedSource,
		FirstTimestamp:      in.DeprecatedFirstTimestamp,
		LastTimestamp:       in.DeprecatedLastTimestamp,
		Count:               in.DeprecatedCount,
		Type:                in.Type,
		EventTime:           in.EventTime,
		Action:              in.Action,
		Related:             in.Related,
		ReportingController: in.ReportingController,
		ReportingInstance:   in.ReportingInstance,
	}
	if in.Series != nil {
		out.Series = &corev1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
	return out
}

// span is a value inside a larger JSON text and its offset there.
type span struct {
	data   []byte
	offset int
}

// listItems returns the values of a list object's "items" array, with their offsets.
func listItems(raw []byte) ([]span, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if key, _ := t.(string); key == "items" {
			return arrayAt(dec, raw)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

func arrayItems(raw []byte) ([]span, error) {
	return arrayAt(json.NewDecoder(bytes.NewReader(raw)), raw)
}

// arrayAt reads the array that dec is positioned at; null is an empty list, as kubectl writes
// an empty typed list.
func arrayAt(dec *json.Decoder, raw []byte) ([]span, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, nil
	}
	if d, ok := t.(json.Delim); !ok || d != '[' {
		return nil, errors.New("items is not a list")
	}
	var out []span
	for dec.More() {
		off := skipSeparator(raw, int(dec.InputOffset()))
		var item json.RawMessage
		if err := dec.Decode(&item); err != nil {
			return nil, err
		}
		out = append(out, span{data: item, offset: off})
	}
	return out, nil
}

func firstByte(raw []byte) byte {
	if i := skipSpace(raw, 0); i < len(raw) {
		return raw[i]
	}
	return 0
}

func describe(raw []byte) string {
	switch c := firstByte(raw); {
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	default:
		return fmt.Sprintf("%q", c)
	}
}

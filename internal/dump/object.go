package dump

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
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
	// readKinds are the kinds a snapshot models; every other kind is skipped and counted.
	readKinds = map[schema.GroupVersionKind]bool{
		appsv1.SchemeGroupVersion.WithKind("Deployment"):         true,
		appsv1.SchemeGroupVersion.WithKind("StatefulSet"):        true,
		appsv1.SchemeGroupVersion.WithKind("DaemonSet"):          true,
		appsv1.SchemeGroupVersion.WithKind("ReplicaSet"):         true,
		appsv1.SchemeGroupVersion.WithKind("ControllerRevision"): true,
		corev1.SchemeGroupVersion.WithKind("Pod"):                true,
		coreEventGVK: true,
		corev1.SchemeGroupVersion.WithKind("Service"):               true,
		corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"): true,
		corev1.SchemeGroupVersion.WithKind("Node"):                  true,
		corev1.SchemeGroupVersion.WithKind("ResourceQuota"):         true,
		discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"):    true,
		eventsv1.SchemeGroupVersion.WithKind("Event"):               true,
	}
	// decoder decodes without defaulting or conversion, so objects stay as the API server wrote them.
	decoder = newDecoder()
)

// newDecoder builds a scheme of the four API groups a snapshot holds, rather than client-go's
// scheme of every group, whose other kinds would be skipped anyway.
func newDecoder() runtime.Decoder {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{appsv1.AddToScheme, corev1.AddToScheme, discoveryv1.AddToScheme, eventsv1.AddToScheme} {
		utilruntime.Must(add(s)) // registering built-in types fails only on a programming error
	}
	return serializer.NewCodecFactory(s).UniversalDeserializer()
}

// value reads one JSON value: an object, a list of objects, or an array of objects. def supplies
// the apiVersion and kind of items of a typed list, which the API server writes without them.
func (r *reader) value(raw []byte, at location, def schema.GroupVersionKind, depth int) error {
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
			if err := r.value(it.data, at.child(i, it.offset), schema.GroupVersionKind{}, depth+1); err != nil {
				return err
			}
		}
		return nil
	default:
		return at.errorf("expected a Kubernetes object, found %s", describe(raw))
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return at.errorf("read apiVersion and kind: %w", err)
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
		return at.errorf("not a Kubernetes object: it has no apiVersion and kind")
	}
	if strings.HasSuffix(gvk.Kind, "List") {
		if gvk.Kind == "PodList" && gvk.Group == "" {
			r.podList = true
		}
		items, err := listItems(raw)
		if err != nil {
			return at.errorf("%s: %w", gvk.Kind, err)
		}
		var itemGVK schema.GroupVersionKind
		if gvk.Kind != "List" {
			itemGVK = gvk.GroupVersion().WithKind(strings.TrimSuffix(gvk.Kind, "List"))
		}
		for i, it := range items {
			if err := r.value(it.data, at.child(i, it.offset), itemGVK, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if !readKinds[gvk] {
		r.skipped[gvk.Kind]++
		return nil
	}
	obj, _, err := decoder.Decode(raw, &gvk, nil)
	if err != nil {
		return at.errorf("%s %s: %w", gvk.GroupVersion(), gvk.Kind, err)
	}
	return r.add(obj, gvk, at)
}

// add files a decoded object into the snapshot. The first copy of an object wins, so a
// directory that holds the same object twice reads as if it held it once.
func (r *reader) add(obj runtime.Object, gvk schema.GroupVersionKind, at location) error {
	if ev, ok := obj.(*eventsv1.Event); ok {
		obj, gvk = coreEvent(ev), coreEventGVK
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return at.errorf("%s: %w", gvk.Kind, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	m.SetManagedFields(nil)
	if m.GetName() == "" {
		return at.errorf("%s has no metadata.name", gvk.Kind)
	}
	ns := m.GetNamespace()
	if gvk.Kind == "Node" {
		ns = ""
	} else if ns == "" {
		return at.errorf("%s %s has no metadata.namespace; is this a manifest rather than kubectl get output?", gvk.Kind, m.GetName())
	}
	key := snapshot.ObjectKey{Kind: gvk.Kind, Namespace: ns, Name: m.GetName()}
	if r.seen[key] {
		return nil
	}
	r.seen[key] = true
	s := r.snap
	switch o := obj.(type) {
	case *appsv1.Deployment:
		s.Deployments = append(s.Deployments, o)
	case *appsv1.StatefulSet:
		s.StatefulSets = append(s.StatefulSets, o)
	case *appsv1.DaemonSet:
		s.DaemonSets = append(s.DaemonSets, o)
	case *appsv1.ReplicaSet:
		s.ReplicaSets = append(s.ReplicaSets, o)
	case *appsv1.ControllerRevision:
		// Data keeps its JSON verbatim, indentation included; compacted, it is the same bytes
		// whichever form and layout it was read from.
		if len(o.Data.Raw) > 0 {
			var b bytes.Buffer
			if err := json.Compact(&b, o.Data.Raw); err != nil {
				return at.errorf("ControllerRevision %s data: %w", o.Name, err)
			}
			o.Data.Raw = b.Bytes()
		}
		s.ControllerRevisions = append(s.ControllerRevisions, o)
	case *corev1.Pod:
		s.Pods = append(s.Pods, o)
		r.podList = true
	case *corev1.Event:
		s.Events = append(s.Events, o)
	case *corev1.Service:
		s.Services = append(s.Services, o)
	case *corev1.PersistentVolumeClaim:
		s.PersistentVolumeClaims = append(s.PersistentVolumeClaims, o)
	case *corev1.Node:
		s.Nodes = append(s.Nodes, o)
	case *corev1.ResourceQuota:
		s.ResourceQuotas = append(s.ResourceQuotas, o)
	case *discoveryv1.EndpointSlice:
		s.EndpointSlices = append(s.EndpointSlices, o)
	default:
		return at.errorf("%s decoded to unexpected type %T", gvk.Kind, obj)
	}
	if ns != "" {
		r.namespaces[ns] = true
	}
	r.objects++
	return nil
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

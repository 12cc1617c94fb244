package live

import (
	"reflect"
	"slices"
	"strconv"
	"sync"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
)

// maxInterned bounds the distinct resource requirements a watch keeps one copy of: a namespace
// has a few per template, and one that writes a new value into every pod gains nothing here.
const maxInterned = 4096

// resourceInterner makes the pods a watch stores share one copy of each container's resource
// requirements: every copy of a template carries the same requests and limits, and decoded
// apart they were two maps of quantities per container, about 2 KB a pod and the largest part of
// a 20k-pod namespace's heap after the pods' own structs. Nothing changes a pod's requirements
// after it is stored (snapshots are read, never written), so sharing them is safe. It is safe
// for concurrent use: each namespace's pod informer calls it from its own goroutine.
//
// Labels and tolerations are shared the same way: a template's copies carry the same labels (one
// set per zone they run in) and the same default tolerations.
type resourceInterner struct {
	mu          sync.Mutex
	seen        map[string]corev1.ResourceRequirements
	labels      map[string]map[string]string
	tolerations map[string][]corev1.Toleration
	// key and names are reused from pod to pod: a key is looked up as string(key), which does not
	// copy it, and only a key kept is made a string of its own (built afresh, the keys were most of
	// the 22 allocations a pod took here).
	key   []byte
	names []string
}

func newResourceInterner() *resourceInterner {
	return &resourceInterner{seen: map[string]corev1.ResourceRequirements{}, labels: map[string]map[string]string{}, tolerations: map[string][]corev1.Toleration{}}
}

// pod replaces each container's requirements, the labels and the tolerations with the shared
// copy of an equal value.
func (r *resourceInterner) pod(p *corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			r.intern(&cs[i].Resources)
		}
	}
	if len(p.Labels) > 0 {
		r.names = r.names[:0]
		for k := range p.Labels {
			r.names = append(r.names, k)
		}
		slices.Sort(r.names)
		r.key = r.key[:0]
		for _, k := range r.names {
			r.key = append(append(r.key, k...), 0)
			r.key = append(append(r.key, p.Labels[k]...), 0)
		}
		if shared, ok := r.labels[string(r.key)]; ok {
			if !sameMap(p.Labels, shared) {
				p.Labels = shared
			}
		} else if len(r.labels) < maxInterned {
			r.labels[string(r.key)] = p.Labels
		}
	}
	if len(p.Spec.Tolerations) > 0 {
		r.key = r.key[:0]
		for _, t := range p.Spec.Tolerations {
			r.key = append(append(r.key, t.Key...), 0)
			r.key = append(append(r.key, t.Operator...), 0)
			r.key = append(append(r.key, t.Value...), 0)
			r.key = append(append(r.key, t.Effect...), 0)
			if t.TolerationSeconds != nil {
				r.key = strconv.AppendInt(r.key, *t.TolerationSeconds, 10)
			} else {
				r.key = append(r.key, '-')
			}
			r.key = append(r.key, 0)
		}
		if shared, ok := r.tolerations[string(r.key)]; ok {
			if unsafe.SliceData(p.Spec.Tolerations) != unsafe.SliceData(shared) {
				p.Spec.Tolerations = shared
			}
		} else if len(r.tolerations) < maxInterned {
			// Its own capacity, so that an append to one pod's list never writes into another's.
			if cap(p.Spec.Tolerations) != len(p.Spec.Tolerations) {
				p.Spec.Tolerations = slices.Clip(p.Spec.Tolerations)
			}
			r.tolerations[string(r.key)] = p.Spec.Tolerations
		}
	}
}

func (r *resourceInterner) intern(rr *corev1.ResourceRequirements) {
	if len(rr.Claims) > 0 || (rr.Limits == nil && rr.Requests == nil) {
		return
	}
	r.key = r.appendList(r.key[:0], 'l', rr.Limits)
	r.key = r.appendList(r.key, 'r', rr.Requests)
	if shared, ok := r.seen[string(r.key)]; ok {
		if !sameMap(rr.Limits, shared.Limits) || !sameMap(rr.Requests, shared.Requests) {
			*rr = shared
		}
		return
	}
	if len(r.seen) < maxInterned {
		r.seen[string(r.key)] = *rr
	}
}

// sameMap reports whether a and b are the same map, not merely equal ones. The interner writes a
// pod only where it does not hold the shared value yet: a watch interns again the objects it was
// seeded with, which the snapshot on screen holds, and a write there would race with its reads.
func sameMap[M ~map[K]V, K comparable, V any](a, b M) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// appendList appends a resource list to key as the key of its value: each name with its
// quantity's value (as a canonical mantissa and exponent: equal values alike, where String made a
// new string for every quantity it does not keep, such as 128Mi) and format, in name order, and
// whether the list is there at all. Value and format are what String prints from.
func (r *resourceInterner) appendList(key []byte, tag byte, l corev1.ResourceList) []byte {
	key = append(key, tag)
	if l == nil {
		return append(key, "-;"...)
	}
	r.names = r.names[:0]
	for n := range l {
		r.names = append(r.names, string(n))
	}
	slices.Sort(r.names)
	for _, n := range r.names {
		q := l[corev1.ResourceName(n)]
		key = append(append(key, n...), '=')
		var exp int32
		key, exp = q.AsCanonicalBytes(key)
		key = append(strconv.AppendInt(append(key, 'e'), int64(exp), 10), '/')
		key = append(append(key, q.Format...), ',')
	}
	return append(key, ';')
}

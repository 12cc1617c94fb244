package live

import (
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
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
	key         strings.Builder
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
		r.key.Reset()
		names := make([]string, 0, len(p.Labels))
		for k := range p.Labels {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			r.key.WriteString(k)
			r.key.WriteByte(0)
			r.key.WriteString(p.Labels[k])
			r.key.WriteByte(0)
		}
		k := r.key.String()
		if shared, ok := r.labels[k]; ok {
			if !sameMap(p.Labels, shared) {
				p.Labels = shared
			}
		} else if len(r.labels) < maxInterned {
			r.labels[k] = p.Labels
		}
	}
	if len(p.Spec.Tolerations) > 0 {
		r.key.Reset()
		for _, t := range p.Spec.Tolerations {
			r.key.WriteString(t.Key)
			r.key.WriteByte(0)
			r.key.WriteString(string(t.Operator))
			r.key.WriteByte(0)
			r.key.WriteString(t.Value)
			r.key.WriteByte(0)
			r.key.WriteString(string(t.Effect))
			r.key.WriteByte(0)
			if t.TolerationSeconds != nil {
				r.key.WriteString(strconv.FormatInt(*t.TolerationSeconds, 10))
			} else {
				r.key.WriteByte('-')
			}
			r.key.WriteByte(0)
		}
		k := r.key.String()
		if shared, ok := r.tolerations[k]; ok {
			if unsafe.SliceData(p.Spec.Tolerations) != unsafe.SliceData(shared) {
				p.Spec.Tolerations = shared
			}
		} else if len(r.tolerations) < maxInterned {
			// Its own capacity, so that an append to one pod's list never writes into another's.
			if cap(p.Spec.Tolerations) != len(p.Spec.Tolerations) {
				p.Spec.Tolerations = slices.Clip(p.Spec.Tolerations)
			}
			r.tolerations[k] = p.Spec.Tolerations
		}
	}
}

func (r *resourceInterner) intern(rr *corev1.ResourceRequirements) {
	if len(rr.Claims) > 0 || (rr.Limits == nil && rr.Requests == nil) {
		return
	}
	r.key.Reset()
	writeList(&r.key, "l", rr.Limits)
	writeList(&r.key, "r", rr.Requests)
	k := r.key.String()
	if shared, ok := r.seen[k]; ok {
		if !sameMap(rr.Limits, shared.Limits) || !sameMap(rr.Requests, shared.Requests) {
			*rr = shared
		}
		return
	}
	if len(r.seen) < maxInterned {
		r.seen[k] = *rr
	}
}

// sameMap reports whether a and b are the same map, not merely equal ones. The interner writes a
// pod only where it does not hold the shared value yet: a watch interns again the objects it was
// seeded with, which the snapshot on screen holds, and a write there would race with its reads.
func sameMap[M ~map[K]V, K comparable, V any](a, b M) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// writeList writes a resource list as the key of its value: each name with its quantity's
// canonical form and format, in name order, and whether the list is there at all.
func writeList(b *strings.Builder, tag string, l corev1.ResourceList) {
	b.WriteString(tag)
	if l == nil {
		b.WriteString("-;")
		return
	}
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, string(n))
	}
	sort.Strings(names)
	for _, n := range names {
		q := l[corev1.ResourceName(n)]
		b.WriteString(n)
		b.WriteByte('=')
		b.WriteString(q.String())
		b.WriteByte('/')
		b.WriteString(string(q.Format))
		b.WriteByte(',')
	}
	b.WriteByte(';')
}

package live

import (
	"sort"
	"strings"
	"sync"

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
type resourceInterner struct {
	mu   sync.Mutex
	seen map[string]corev1.ResourceRequirements
	key  strings.Builder
}

func newResourceInterner() *resourceInterner {
	return &resourceInterner{seen: map[string]corev1.ResourceRequirements{}}
}

// pod replaces each container's requirements with the shared copy of an equal value.
func (r *resourceInterner) pod(p *corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			r.intern(&cs[i].Resources)
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
		*rr = shared
		return
	}
	if len(r.seen) < maxInterned {
		r.seen[k] = *rr
	}
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

package diagnose

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// serviceIndex finds the Services that may concern a workload without testing every Service of
// a namespace against every workload: a Service selecting the workload has all its selector
// pairs among the pods' labels, so it is filed under one of them. A namespace's Services are
// filed when a workload of it first asks (in), by the worker that asks: filing every
// namespace's before the workers started was the longest step no worker shared, and a
// Rediagnose of a few workloads files only their namespaces. The snapshot keeps what is filed
// (ServicesFiled) for as long as the Services are unchanged: a watch's next snapshot files no
// namespace again.
type serviceIndex struct {
	snap *snapshot.Snapshot
}

// nsServices is one namespace's Services, filed.
type nsServices struct {
	byPair  map[labelPair][]*corev1.Service // the selector's first pair
	byName  map[string]*corev1.Service
	byLabel map[string][]*corev1.Service // app.kubernetes.io/name label value
	// firstKeys are the distinct keys byPair files the Services under: a label of another key
	// finds nothing there, so a copy is asked for these rather than walked.
	firstKeys []string
}

// labelPair is a key=value; struct keys make lookups allocation-free.
type labelPair struct{ key, value string }

// newServiceIndex files the snapshot's Services.
func newServiceIndex(s *snapshot.Snapshot) *serviceIndex { return &serviceIndex{snap: s} }

// fileServices is nsServices.file as ServicesFiled takes it.
func fileServices(svcs []*corev1.Service) any {
	n := &nsServices{}
	n.file(svcs)
	return n
}

// in returns the namespace's Services, filed by the first caller; a caller that asks while
// they are being filed waits for them.
func (ix *serviceIndex) in(namespace string) *nsServices {
	return ix.snap.ServicesFiled(namespace, fileServices).(*nsServices)
}

func (n *nsServices) file(svcs []*corev1.Service) {
	n.byPair = make(map[labelPair][]*corev1.Service, len(svcs))
	n.byName = make(map[string]*corev1.Service, len(svcs))
	n.byLabel = map[string][]*corev1.Service{}
	for _, svc := range svcs {
		n.byName[svc.Name] = svc
		if l := svc.Labels["app.kubernetes.io/name"]; l != "" {
			n.byLabel[l] = append(n.byLabel[l], svc)
		}
		if len(svc.Spec.Selector) == 0 {
			continue
		}
		// Filed under the selector's first key in order.
		first, found := "", false
		for k := range svc.Spec.Selector {
			if !found || k < first {
				first, found = k, true
			}
		}
		pair := labelPair{first, svc.Spec.Selector[first]}
		n.byPair[pair] = append(n.byPair[pair], svc)
		if !slices.Contains(n.firstKeys, first) {
			n.firstKeys = append(n.firstKeys, first)
		}
	}
}

// candidates returns, by name, the Services filed under any of the label sets'
// pairs, under the workload's name, or under its app.kubernetes.io/name.
func (ix *serviceIndex) candidates(w *workload) []*corev1.Service {
	out := serviceSet{room: w.texts}
	n := ix.in(w.Namespace)
	if keys := n.firstKeys; len(keys) <= smallUIDs {
		// Few keys file the namespace's Services (most often one, "app"): the template and
		// each copy are asked for those, the template's values once (tmpl), and a copy's
		// value its template has is not looked up again. A label of any other key finds
		// nothing in byPair.
		var tmpl [smallUIDs]struct {
			v  string
			ok bool
		}
		for i, k := range keys {
			if v, ok := w.Template.Labels[k]; ok {
				tmpl[i].v, tmpl[i].ok = v, true
				out.add(n.byPair[labelPair{k, v}]...)
			}
		}
		for _, p := range w.Pods {
			for i, k := range keys {
				v, ok := p.Labels[k]
				if !ok || (tmpl[i].ok && tmpl[i].v == v) {
					continue
				}
				out.add(n.byPair[labelPair{k, v}]...)
			}
		}
	} else {
		n.labelPairs(w, &out)
	}
	out.add(n.byName[w.Name])
	if l := w.Template.Labels["app.kubernetes.io/name"]; l != "" {
		out.add(n.byLabel[l]...)
	}
	// Names are unique in a namespace: no two compare equal.
	slices.SortFunc(out.list, func(a, b *corev1.Service) int { return strings.Compare(a.Name, b.Name) })
	return out.list
}

// serviceSet is the Services taken, each once. Few Services concern a workload: the list is
// scanned for the ones already taken, until it is long enough for a map, the worker's
// (textCache.serviceSeen), emptied for the set.
type serviceSet struct {
	list []*corev1.Service
	seen map[*corev1.Service]bool
	room *textCache
}

func (t *serviceSet) taken(svc *corev1.Service) bool {
	if t.seen != nil {
		return t.seen[svc]
	}
	return slices.Contains(t.list, svc)
}

func (t *serviceSet) add(svcs ...*corev1.Service) {
	if t.list == nil && len(svcs) > 0 {
		// The first Services added are most often all there will be.
		t.list = make([]*corev1.Service, 0, len(svcs))
	}
	for _, svc := range svcs {
		if svc == nil || t.taken(svc) {
			continue
		}
		t.list = append(t.list, svc)
		if t.seen != nil {
			t.seen[svc] = true
		} else if len(t.list) > smallUIDs {
			t.seen = t.room.serviceSeen()
			for _, x := range t.list {
				t.seen[x] = true
			}
		}
	}
}

// labelPairs adds the Services filed under any label pair of the template or of a copy,
// walking their labels: for a namespace whose Services are filed under many keys.
func (n *nsServices) labelPairs(w *workload, out *serviceSet) {
	for k, v := range w.Template.Labels {
		out.add(n.byPair[labelPair{k, v}]...)
	}
	// The pairs a copy has beyond its template's (its revision's hash) are most often its
	// siblings' too: the first few are remembered, so each is looked up once.
	var done [4][2]string
	nDone := 0
	for _, p := range w.Pods {
	labels:
		for k, v := range p.Labels {
			// A copy has its template's labels (and the revision's hash): those pairs
			// were looked up already.
			if tv, ok := w.Template.Labels[k]; ok && tv == v {
				continue
			}
			for _, d := range done[:nDone] {
				if d[0] == k && d[1] == v {
					continue labels
				}
			}
			if nDone < len(done) {
				done[nDone] = [2]string{k, v}
				nDone++
			}
			out.add(n.byPair[labelPair{k, v}]...)
		}
	}
}

// attachServices files the Services the index offers for the workload: those selecting its
// template or any of its copies under Services, those evidently meant for it under
// UnmatchedServices. The rules read only these, never every Service of the namespace.
func attachServices(s *snapshot.Snapshot, svcs *serviceIndex, w *workload) {
	tmplLabels := labels.Set(w.Template.Labels)
	w.NearbyServices = svcs.candidates(w)
	for i, svc := range w.NearbyServices {
		if len(svc.Spec.Selector) == 0 {
			continue
		}
		switch {
		case facts.SetSelects(svc.Spec.Selector, tmplLabels) || selectsAny(svc.Spec.Selector, w.Pods):
			if w.Services == nil {
				// Room for the rest: the Services near a workload most often select it.
				w.Services = make([]*corev1.Service, 0, len(w.NearbyServices)-i)
			}
			w.Services = append(w.Services, svc)
		case meantFor(s, svc, w):
			w.UnmatchedServices = append(w.UnmatchedServices, svc)
		}
	}
}

// meantFor reports whether a Service that selects none of the workload's pods was evidently
// written for it: it serves nothing at all (its EndpointSlices hold no endpoint) and it has the
// workload's name or the same app.kubernetes.io/name label as its template. A Service that
// serves another component (a chart's "redis-master" beside "redis-replicas") is not an orphan
// and stays out. Without EndpointSlices only the same name counts.
func meantFor(s *snapshot.Snapshot, svc *corev1.Service, w *workload) bool {
	slices := s.EndpointSlicesFor(svc.Namespace, svc.Name)
	if len(slices) == 0 {
		return svc.Name == w.Name
	}
	for _, es := range slices {
		if len(es.Endpoints) > 0 {
			return false
		}
	}
	if svc.Name == w.Name {
		return true
	}
	n := svc.Labels["app.kubernetes.io/name"]
	return n != "" && n == w.Template.Labels["app.kubernetes.io/name"]
}

func selectsAny(selector map[string]string, pods []*corev1.Pod) bool {
	for _, p := range pods {
		if facts.SetSelects(selector, p.Labels) {
			return true
		}
	}
	return false
}

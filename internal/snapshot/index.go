package snapshot

import (
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ObjectKey names an object by kind, namespace and name.
type ObjectKey struct {
	Kind      string
	Namespace string
	Name      string
}

type logKey struct {
	namespace, pod, container string
	previous                  bool
}

type index struct {
	// byOwner holds, per kind of Kinds marked ByOwner, a map[types.UID][]*T of its objects
	// by their owners' UIDs.
	byOwner             map[string]any
	eventsByUID         map[types.UID][]*corev1.Event
	eventsByKey         map[ObjectKey][]*corev1.Event
	servicesByNamespace map[string][]*corev1.Service
	slicesByService     map[ObjectKey][]*discoveryv1.EndpointSlice
	pvcs                map[ObjectKey]*corev1.PersistentVolumeClaim
	quotasByNamespace   map[string][]*corev1.ResourceQuota
	nodes               map[string]*corev1.Node
	logs                map[logKey]*ContainerLog
}

// Index builds the lookup tables if they are not built yet. The engine and the console both call
// it on the same snapshot, so a second call must cost nothing; a snapshot is not changed after it
// is indexed (sources build a new one per read).
func (s *Snapshot) Index() {
	if s.index != nil {
		return
	}
	// Sized from the start: a watch indexes every snapshot, and growing maps of a namespace's
	// tens of thousands of events was a good part of the cost and of its garbage.
	ix := &index{
		byOwner:             map[string]any{},
		eventsByUID:         make(map[types.UID][]*corev1.Event, len(s.Events)),
		eventsByKey:         make(map[ObjectKey][]*corev1.Event, len(s.Events)),
		servicesByNamespace: map[string][]*corev1.Service{},
		slicesByService:     make(map[ObjectKey][]*discoveryv1.EndpointSlice, len(s.EndpointSlices)),
		pvcs:                make(map[ObjectKey]*corev1.PersistentVolumeClaim, len(s.PersistentVolumeClaims)),
		quotasByNamespace:   map[string][]*corev1.ResourceQuota{},
		nodes:               make(map[string]*corev1.Node, len(s.Nodes)),
		logs:                make(map[logKey]*ContainerLog, len(s.Logs)),
	}
	for i := range Kinds {
		if k := &Kinds[i]; k.ByOwner {
			ix.byOwner[k.Kind] = k.ops.owners(s)
		}
	}
	for _, e := range s.Events {
		if e.InvolvedObject.UID != "" {
			ix.eventsByUID[e.InvolvedObject.UID] = append(ix.eventsByUID[e.InvolvedObject.UID], e)
		}
		ns := e.InvolvedObject.Namespace
		if ns == "" {
			ns = e.Namespace
		}
		k := ObjectKey{Kind: e.InvolvedObject.Kind, Namespace: ns, Name: e.InvolvedObject.Name}
		ix.eventsByKey[k] = append(ix.eventsByKey[k], e)
	}
	for _, svc := range s.Services {
		ix.servicesByNamespace[svc.Namespace] = append(ix.servicesByNamespace[svc.Namespace], svc)
	}
	for _, es := range s.EndpointSlices {
		name := es.Labels[discoveryv1.LabelServiceName]
		if name == "" {
			continue
		}
		k := ObjectKey{Kind: "Service", Namespace: es.Namespace, Name: name}
		ix.slicesByService[k] = append(ix.slicesByService[k], es)
	}
	for _, pvc := range s.PersistentVolumeClaims {
		ix.pvcs[ObjectKey{Kind: "PersistentVolumeClaim", Namespace: pvc.Namespace, Name: pvc.Name}] = pvc
	}
	for _, q := range s.ResourceQuotas {
		ix.quotasByNamespace[q.Namespace] = append(ix.quotasByNamespace[q.Namespace], q)
	}
	for _, n := range s.Nodes {
		ix.nodes[n.Name] = n
	}
	for i := range s.Logs {
		l := &s.Logs[i]
		ix.logs[logKey{l.Namespace, l.Pod, l.Container, l.Previous}] = l
	}
	s.index = ix
}

func (s *Snapshot) ix() *index {
	s.Index()
	return s.index
}

// ownedBy returns the objects of a kind indexed ByOwner that have an owner reference to uid.
func ownedBy[P any](s *Snapshot, kind string, uid types.UID) []P {
	m, _ := s.ix().byOwner[kind].(map[types.UID][]P)
	return m[uid]
}

// PodsOwnedBy returns the pods with an owner reference to uid.
func (s *Snapshot) PodsOwnedBy(uid types.UID) []*corev1.Pod {
	return ownedBy[*corev1.Pod](s, "Pod", uid)
}

// ReplicaSetsOwnedBy returns the ReplicaSets with an owner reference to uid.
func (s *Snapshot) ReplicaSetsOwnedBy(uid types.UID) []*appsv1.ReplicaSet {
	return ownedBy[*appsv1.ReplicaSet](s, "ReplicaSet", uid)
}

// JobsOwnedBy returns the Jobs with an owner reference to uid (a CronJob's).
func (s *Snapshot) JobsOwnedBy(uid types.UID) []*batchv1.Job {
	return ownedBy[*batchv1.Job](s, "Job", uid)
}

// ControllerRevisionsOwnedBy returns the ControllerRevisions owned by uid, oldest revision first.
func (s *Snapshot) ControllerRevisionsOwnedBy(uid types.UID) []*appsv1.ControllerRevision {
	crs := ownedBy[*appsv1.ControllerRevision](s, "ControllerRevision", uid)
	sort.SliceStable(crs, func(i, j int) bool { return crs[i].Revision < crs[j].Revision })
	return crs
}

// EventsFor returns the events whose involved object is the given one, matched by UID and, for
// events written without a UID, by kind, namespace and name.
func (s *Snapshot) EventsFor(kind, namespace, name string, uid types.UID) []*corev1.Event {
	ix := s.ix()
	byKey := ix.eventsByKey[ObjectKey{Kind: kind, Namespace: namespace, Name: name}]
	if uid == "" {
		return byKey
	}
	byUID := ix.eventsByUID[uid]
	out := make([]*corev1.Event, 0, len(byUID)+len(byKey))
	out = append(out, byUID...)
	for _, e := range byKey {
		// An event for an earlier object of the same name carries another UID.
		if e.InvolvedObject.UID == "" {
			out = append(out, e)
		}
	}
	return out
}

// ServicesIn returns the Services of a namespace.
func (s *Snapshot) ServicesIn(namespace string) []*corev1.Service {
	return s.ix().servicesByNamespace[namespace]
}

// EndpointSlicesFor returns the EndpointSlices of a Service.
func (s *Snapshot) EndpointSlicesFor(namespace, service string) []*discoveryv1.EndpointSlice {
	return s.ix().slicesByService[ObjectKey{Kind: "Service", Namespace: namespace, Name: service}]
}

// PersistentVolumeClaim returns the named claim, or nil.
func (s *Snapshot) PersistentVolumeClaim(namespace, name string) *corev1.PersistentVolumeClaim {
	return s.ix().pvcs[ObjectKey{Kind: "PersistentVolumeClaim", Namespace: namespace, Name: name}]
}

// ResourceQuotasIn returns the ResourceQuotas of a namespace.
func (s *Snapshot) ResourceQuotasIn(namespace string) []*corev1.ResourceQuota {
	return s.ix().quotasByNamespace[namespace]
}

// Node returns the named node, or nil.
func (s *Snapshot) Node(name string) *corev1.Node { return s.ix().nodes[name] }

// Log returns the log tail of a container, or nil when the source has none.
func (s *Snapshot) Log(namespace, pod, container string, previous bool) *ContainerLog {
	return s.ix().logs[logKey{namespace, pod, container, previous}]
}

// HasNamespace reports whether the snapshot covers the namespace.
func (s *Snapshot) HasNamespace(ns string) bool {
	if len(s.Namespaces) == 0 {
		return true
	}
	for _, n := range s.Namespaces {
		if n == ns {
			return true
		}
	}
	return false
}

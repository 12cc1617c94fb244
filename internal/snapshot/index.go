package snapshot

import (
	"sort"
	"sync"
	"sync/atomic"

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

// index holds a snapshot's lookup tables. The tables of the kinds a watch changes all the time
// (pods, ReplicaSets, events, EndpointSlices and the other kinds indexed by owner) are cowMaps, so
// that a watch's next snapshot derives its index from its last one's in proportion to what
// changed (derive); the others are plain maps, shared with the last index until their kind
// changes.
type index struct {
	// byOwner holds, per kind of Kinds marked ByOwner, a cowList[types.UID, *T] of its objects
	// by their owners' UIDs.
	byOwner         map[string]any
	eventsByUID     cowList[types.UID, *corev1.Event]
	eventsByKey     cowList[ObjectKey, *corev1.Event]
	slicesByService cowList[ObjectKey, *discoveryv1.EndpointSlice]
	// podsByName and replicaSetsByUID are made on first use (a one-shot diagnosis does not look
	// pods up by name), from the snapshot or derived from the last index's when it made them.
	podsByName          atomic.Pointer[cowMap[ObjectKey, *corev1.Pod]]
	replicaSetsByUID    atomic.Pointer[cowMap[types.UID, *appsv1.ReplicaSet]]
	servicesByNamespace map[string][]*corev1.Service
	// servicesFiled holds, per namespace, what the engine filed of its Services
	// (ServicesFiled); it goes with servicesByNamespace, and is made anew with it.
	servicesFiled     *sync.Map
	pvcs              map[ObjectKey]*corev1.PersistentVolumeClaim
	quotasByNamespace map[string][]*corev1.ResourceQuota
	nodes             map[string]*corev1.Node
	// logs is made on first use: a watch indexes a snapshot before it reads its log tails,
	// for which it looks its pods up here.
	logs     map[logKey]*ContainerLog
	logsOnce sync.Once
}

// Index builds the lookup tables if they are not built yet. The engine and the console both call
// it on the same snapshot, so a second call must cost nothing; a snapshot is not changed after it
// is indexed (sources build a new one per read), but for its log tails, which a watch reads
// after it indexed the objects and sets before it hands the snapshot on.
//
// A snapshot a Tracker made from the last one, whose index was built, derives its index from
// that one's with what changed, when few things did: under churn a watch's update then costs in
// proportion to the changed objects, not to the namespace.
func (s *Snapshot) Index() {
	if s.index != nil {
		return
	}
	if c := s.changes; c != nil && c.base != nil && len(c.objects) <= s.Len()/4 {
		s.index = c.base.derive(s, c.objects)
	} else {
		s.index = buildIndex(s)
	}
	if s.changes != nil {
		// The last index is needed only to derive this one; kept, each snapshot would keep the
		// one before it alive, and that one the one before.
		s.changes.base = nil
	}
}

func buildIndex(s *Snapshot) *index {
	// Sized from the start: a watch indexes every snapshot, and growing maps of a namespace's
	// tens of thousands of events was a good part of the cost and of its garbage.
	ix := &index{
		byOwner:         map[string]any{},
		eventsByUID:     cowList[types.UID, *corev1.Event]{newCOWMap[types.UID, []*corev1.Event](len(s.Events), hashUID)},
		eventsByKey:     cowList[ObjectKey, *corev1.Event]{newCOWMap[ObjectKey, []*corev1.Event](len(s.Events), hashKey)},
		slicesByService: cowList[ObjectKey, *discoveryv1.EndpointSlice]{newCOWMap[ObjectKey, []*discoveryv1.EndpointSlice](len(s.EndpointSlices), hashKey)},
	}
	// The owners' tables on one processor, the rest on another: a dump's or a watch's first
	// snapshot is indexed before anything can be diagnosed, and both halves only read s.
	owners := make([]any, len(Kinds))
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range Kinds {
			if k := &Kinds[i]; k.ByOwner {
				owners[i] = k.ops.owners(s)
			}
		}
	})
	for _, e := range s.Events {
		if e.InvolvedObject.UID != "" {
			ix.eventsByUID.appendOwned(e.InvolvedObject.UID, e)
		}
		ix.eventsByKey.appendOwned(eventKey(e), e)
	}
	for _, es := range s.EndpointSlices {
		if k, ok := sliceService(es); ok {
			ix.slicesByService.appendOwned(k, es)
		}
	}
	ix.indexServices(s)
	ix.indexPVCs(s)
	ix.indexQuotas(s)
	ix.indexNodes(s)
	wg.Wait()
	for i := range Kinds {
		if k := &Kinds[i]; k.ByOwner {
			ix.byOwner[k.Kind] = owners[i]
		}
	}
	return ix
}

func buildPodsByName(s *Snapshot) *cowMap[ObjectKey, *corev1.Pod] {
	m := newCOWMap[ObjectKey, *corev1.Pod](len(s.Pods), hashKey)
	for _, p := range s.Pods {
		m.set(podKey(p), p)
	}
	return m
}

func buildReplicaSetsByUID(s *Snapshot) *cowMap[types.UID, *appsv1.ReplicaSet] {
	m := newCOWMap[types.UID, *appsv1.ReplicaSet](len(s.ReplicaSets), hashUID)
	for _, rs := range s.ReplicaSets {
		m.set(rs.UID, rs)
	}
	return m
}

// lazily returns the table p holds, made by build first if it holds none. Two goroutines may
// both build it; one table is kept.
func lazily[T any](p *atomic.Pointer[T], build func() *T) *T {
	if m := p.Load(); m != nil {
		return m
	}
	p.CompareAndSwap(nil, build())
	return p.Load()
}

func (ix *index) indexServices(s *Snapshot) {
	ix.servicesFiled = new(sync.Map)
	ix.servicesByNamespace = map[string][]*corev1.Service{}
	for _, svc := range s.Services {
		ix.servicesByNamespace[svc.Namespace] = append(ix.servicesByNamespace[svc.Namespace], svc)
	}
}

func (ix *index) indexPVCs(s *Snapshot) {
	ix.pvcs = make(map[ObjectKey]*corev1.PersistentVolumeClaim, len(s.PersistentVolumeClaims))
	for _, pvc := range s.PersistentVolumeClaims {
		ix.pvcs[ObjectKey{Kind: "PersistentVolumeClaim", Namespace: pvc.Namespace, Name: pvc.Name}] = pvc
	}
}

func (ix *index) indexQuotas(s *Snapshot) {
	ix.quotasByNamespace = map[string][]*corev1.ResourceQuota{}
	for _, q := range s.ResourceQuotas {
		ix.quotasByNamespace[q.Namespace] = append(ix.quotasByNamespace[q.Namespace], q)
	}
}

func (ix *index) indexNodes(s *Snapshot) {
	ix.nodes = make(map[string]*corev1.Node, len(s.Nodes))
	for _, n := range s.Nodes {
		ix.nodes[n.Name] = n
	}
}

func podKey(p *corev1.Pod) ObjectKey {
	return ObjectKey{Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
}

// eventKey names an event's involved object; an object of the event's own namespace may leave
// its namespace out.
func eventKey(e *corev1.Event) ObjectKey {
	ns := e.InvolvedObject.Namespace
	if ns == "" {
		ns = e.Namespace
	}
	return ObjectKey{Kind: e.InvolvedObject.Kind, Namespace: ns, Name: e.InvolvedObject.Name}
}

func (ix *index) addEvent(e *corev1.Event) {
	if e.InvolvedObject.UID != "" {
		ix.eventsByUID.appendTo(e.InvolvedObject.UID, e)
	}
	ix.eventsByKey.appendTo(eventKey(e), e)
}

func (ix *index) removeEvent(e *corev1.Event) {
	if e.InvolvedObject.UID != "" {
		ix.eventsByUID.removeFrom(e.InvolvedObject.UID, e)
	}
	ix.eventsByKey.removeFrom(eventKey(e), e)
}

func sliceService(es *discoveryv1.EndpointSlice) (ObjectKey, bool) {
	name := es.Labels[discoveryv1.LabelServiceName]
	return ObjectKey{Kind: "Service", Namespace: es.Namespace, Name: name}, name != ""
}

func (ix *index) addSlice(es *discoveryv1.EndpointSlice) {
	if k, ok := sliceService(es); ok {
		ix.slicesByService.appendTo(k, es)
	}
}

// derive is the index of s, a Tracker's snapshot made from the one ix indexes with the changes
// chs. A Tracker keeps, per kind, the objects of the last snapshot that did not change in their
// order and puts the changed and added ones after them in the order of chs, so taking an old
// object out of its lists and putting the new one at their ends leaves every list in the order
// a build from s's lists gives it (TestDerivedIndexIsTheBuiltIndex holds the two equal).
func (ix *index) derive(s *Snapshot, chs []Change) *index {
	out := &index{
		byOwner:             make(map[string]any, len(ix.byOwner)),
		eventsByUID:         cowList[types.UID, *corev1.Event]{ix.eventsByUID.derive()},
		eventsByKey:         cowList[ObjectKey, *corev1.Event]{ix.eventsByKey.derive()},
		slicesByService:     cowList[ObjectKey, *discoveryv1.EndpointSlice]{ix.slicesByService.derive()},
		servicesByNamespace: ix.servicesByNamespace,
		servicesFiled:       ix.servicesFiled,
		pvcs:                ix.pvcs,
		quotasByNamespace:   ix.quotasByNamespace,
		nodes:               ix.nodes,
	}
	for kind, m := range ix.byOwner {
		out.byOwner[kind] = KindNamed(kind).ops.deriveOwners(m)
	}
	// A watch looks pods up by name with every snapshot: derived, or made now for the next.
	pods, rss := ix.podsByName.Load(), ix.replicaSetsByUID.Load()
	if pods != nil {
		pods = pods.derive()
	} else {
		pods = buildPodsByName(s)
	}
	if rss != nil {
		rss = rss.derive()
	} else {
		rss = buildReplicaSetsByUID(s)
	}
	rebuilt := map[string]bool{}
	for _, c := range chs {
		if k := KindNamed(c.Kind); k != nil && k.ByOwner {
			k.ops.reown(out.byOwner[c.Kind], c.Old, c.New)
		}
		switch c.Kind {
		case "Pod":
			if old, ok := c.Old.(*corev1.Pod); ok && pods.get(podKey(old)) == old {
				pods.del(podKey(old))
			}
			if p, ok := c.New.(*corev1.Pod); ok {
				pods.set(podKey(p), p)
			}
		case "ReplicaSet":
			if old, ok := c.Old.(*appsv1.ReplicaSet); ok && rss.get(old.UID) == old {
				rss.del(old.UID)
			}
			if rs, ok := c.New.(*appsv1.ReplicaSet); ok {
				rss.set(rs.UID, rs)
			}
		case "Event":
			if old, ok := c.Old.(*corev1.Event); ok {
				out.removeEvent(old)
			}
			if e, ok := c.New.(*corev1.Event); ok {
				out.addEvent(e)
			}
		case "EndpointSlice":
			if old, ok := c.Old.(*discoveryv1.EndpointSlice); ok {
				if k, ok := sliceService(old); ok {
					out.slicesByService.removeFrom(k, old)
				}
			}
			if es, ok := c.New.(*discoveryv1.EndpointSlice); ok {
				out.addSlice(es)
			}
		case "Service", "PersistentVolumeClaim", "ResourceQuota", "Node":
			// Few, and seldom changed: their tables are built again from s's lists.
			if !rebuilt[c.Kind] {
				rebuilt[c.Kind] = true
				map[string]func(*Snapshot){
					"Service": out.indexServices, "PersistentVolumeClaim": out.indexPVCs,
					"ResourceQuota": out.indexQuotas, "Node": out.indexNodes,
				}[c.Kind](s)
			}
		}
	}
	out.podsByName.Store(pods)
	out.replicaSetsByUID.Store(rss)
	return out
}

func (s *Snapshot) ix() *index {
	s.Index()
	return s.index
}

// ownedBy returns the objects of a kind indexed ByOwner that have an owner reference to uid.
func ownedBy[P any](s *Snapshot, kind string, uid types.UID) []P {
	m, ok := s.ix().byOwner[kind].(cowList[types.UID, P])
	if !ok {
		return nil
	}
	return m.get(uid)
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

// EventsOfUID returns the events whose involved object has uid, whatever its kind and name:
// what EventsFor returns for an object with that UID when no event names it without a UID.
// The list is the index's: not to be changed.
func (s *Snapshot) EventsOfUID(uid types.UID) []*corev1.Event { return s.ix().eventsByUID.get(uid) }

// EventsFor returns the events whose involved object is the given one, matched by UID and, for
// events written without a UID, by kind, namespace and name.
func (s *Snapshot) EventsFor(kind, namespace, name string, uid types.UID) []*corev1.Event {
	ix := s.ix()
	byKey := ix.eventsByKey.get(ObjectKey{Kind: kind, Namespace: namespace, Name: name})
	if uid == "" {
		return byKey
	}
	byUID := ix.eventsByUID.get(uid)
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

// filed is one namespace's entry of servicesFiled.
type filed struct {
	once sync.Once
	v    any
}

// ForgetServicesFiled drops what ServicesFiled kept: for a benchmark that diagnoses one
// snapshot again and again and is to pay for the filing each time, as a one-shot diagnosis of
// a new snapshot does.
func (s *Snapshot) ForgetServicesFiled() { s.ix().servicesFiled = new(sync.Map) }

// ServicesFiled returns what file makes of the namespace's Services (ServicesIn), made once for
// as long as they are unchanged: a snapshot a Tracker derived from the last one, no Service
// having changed, shares what the last one filed, so a console's update files no namespace
// again. A caller that asks while another files the namespace waits for it. It has one caller,
// the engine: what is filed is whatever its file makes.
func (s *Snapshot) ServicesFiled(namespace string, file func([]*corev1.Service) any) any {
	ix := s.ix()
	e, ok := ix.servicesFiled.Load(namespace)
	if !ok {
		e, _ = ix.servicesFiled.LoadOrStore(namespace, &filed{})
	}
	f := e.(*filed)
	f.once.Do(func() { f.v = file(ix.servicesByNamespace[namespace]) })
	return f.v
}

// EndpointSlicesFor returns the EndpointSlices of a Service.
func (s *Snapshot) EndpointSlicesFor(namespace, service string) []*discoveryv1.EndpointSlice {
	return s.ix().slicesByService.get(ObjectKey{Kind: "Service", Namespace: namespace, Name: service})
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
	ix := s.ix()
	ix.logsOnce.Do(func() {
		ix.logs = make(map[logKey]*ContainerLog, len(s.Logs))
		for i := range s.Logs {
			l := &s.Logs[i]
			ix.logs[logKey{l.Namespace, l.Pod, l.Container, l.Previous}] = l
		}
	})
	return ix.logs[logKey{namespace, pod, container, previous}]
}

// Pod returns the named pod, or nil.
func (s *Snapshot) Pod(namespace, name string) *corev1.Pod {
	m := lazily(&s.ix().podsByName, func() *cowMap[ObjectKey, *corev1.Pod] { return buildPodsByName(s) })
	return m.get(ObjectKey{Kind: "Pod", Namespace: namespace, Name: name})
}

// ReplicaSetByUID returns the ReplicaSet with the UID, or nil.
func (s *Snapshot) ReplicaSetByUID(uid types.UID) *appsv1.ReplicaSet {
	m := lazily(&s.ix().replicaSetsByUID, func() *cowMap[types.UID, *appsv1.ReplicaSet] { return buildReplicaSetsByUID(s) })
	return m.get(uid)
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

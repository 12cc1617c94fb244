package snapshot

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
)

// Kind is one kind of object a snapshot holds. Kinds is the whole list; the dump reader and
// writer, the filters, the indexes, the reference-time scan and the live source range over it,
// so adding a kind is adding one entry (and, for a workload kind, its adapter in
// internal/kinds, whose names the entry takes). Secrets and ConfigMaps are deliberately
// absent: the tool never reads them.
type Kind struct {
	// Kind is the object kind ("Deployment"), GVK its group, version and kind.
	Kind string
	GVK  schema.GroupVersionKind
	// Resource is the plural resource name as kubectl names it ("deployments").
	Resource string
	// Cluster marks cluster-scoped kinds (Nodes): they are read once and no namespace filter
	// drops them.
	Cluster bool
	// Workload marks the kinds a diagnosis is about: a live read that could list none of them
	// has nothing to say and fails instead of reporting an empty namespace.
	Workload bool
	// Selectable kinds are the workloads -l and --field-selector pick; the API server filters
	// them. Evidence (pods, events, ...) is read whole.
	Selectable bool
	// Follows names the kind whose controller a workload of this kind follows through a
	// selector ("Deployment" for ReplicaSets): a ReplicaSet a Deployment controls is kept when
	// that Deployment is, whatever its own labels; one without is selected on its own. Kinds
	// that follow are listed whole by a live source.
	Follows string
	// ByOwner kinds are indexed by their owners' UIDs (OwnedBy).
	ByOwner bool
	// File is the name of the kind's list in each namespace's directory of a dump
	// ("deployments.json"), or at the top for a cluster-scoped kind.
	File string
	// KeepUnread leaves the kind's file out of a dump when the source could not read it in
	// the namespace (anywhere, for a cluster-scoped kind): an empty pod list would read back
	// as a namespace without copies, an empty volume list as a cluster without volumes.
	KeepUnread bool

	// New returns an empty object of the kind, for informers' type checks.
	New func() runtime.Object
	// ops are the typed operations on the kind's slice of a Snapshot.
	ops kindOps
}

// kindOps are the operations on one kind's slice of a Snapshot, made by entry for its type.
type kindOps struct {
	len  func(s *Snapshot) int
	each func(s *Snapshot, f func(runtime.Object))
	add  func(s *Snapshot, objs []runtime.Object)
	// fill sets the slice to the n objects of the kind among objs; share sets dst's to src's.
	fill   func(s *Snapshot, objs []runtime.Object, n int)
	share  func(dst, src *Snapshot)
	put    func(s *Snapshot, obj runtime.Object, idx int) (int, bool)
	filter func(dst, src *Snapshot, keep func(namespace string) bool)
	// filterObjects sets dst's slice to the objects of src's that keep accepts.
	filterObjects func(dst, src *Snapshot, keep func(metav1.Object) bool)
	items         func(s *Snapshot, keep func(metav1.Object) bool) any
	// owners indexes the objects by their owners' UIDs (a cowList[types.UID, P]); deriveOwners
	// derives such an index for the next snapshot, and reown moves one object's entries in it
	// from its old version to its new (either nil).
	owners       func(s *Snapshot) any
	deriveOwners func(m any) any
	reown        func(m any, old, next runtime.Object)
}

// object is what every kind's pointer type is.
type object[T any] interface {
	*T
	metav1.Object
	runtime.Object
}

// entry builds the operations of a kind from the accessor of its slice in a Snapshot.
func entry[T any, P object[T]](k Kind, slice func(s *Snapshot) *[]P) Kind {
	k.New = func() runtime.Object { return P(new(T)) }
	k.ops = kindOps{
		len: func(s *Snapshot) int { return len(*slice(s)) },
		each: func(s *Snapshot, f func(runtime.Object)) {
			for _, o := range *slice(s) {
				f(o)
			}
		},
		add: func(s *Snapshot, objs []runtime.Object) {
			dst := slice(s)
			for _, o := range objs {
				if t, ok := o.(P); ok {
					*dst = append(*dst, t)
				}
			}
		},
		fill: func(s *Snapshot, objs []runtime.Object, n int) {
			out := make([]P, 0, n)
			for _, o := range objs {
				if t, ok := o.(P); ok {
					out = append(out, t)
				}
			}
			*slice(s) = out
		},
		share: func(dst, src *Snapshot) { *slice(dst) = *slice(src) },
		put: func(s *Snapshot, obj runtime.Object, idx int) (int, bool) {
			t, ok := obj.(P)
			if !ok {
				return 0, false
			}
			list := slice(s)
			if idx >= 0 {
				(*list)[idx] = t
				return idx, true
			}
			*list = append(*list, t)
			return len(*list) - 1, true
		},
		filter: func(dst, src *Snapshot, keep func(string) bool) {
			var out []P
			for _, o := range *slice(src) {
				if keep(o.GetNamespace()) {
					out = append(out, o)
				}
			}
			*slice(dst) = out
		},
		filterObjects: func(dst, src *Snapshot, keep func(metav1.Object) bool) {
			var out []P
			for _, o := range *slice(src) {
				if keep(o) {
					out = append(out, o)
				}
			}
			*slice(dst) = out
		},
		items: func(s *Snapshot, keep func(metav1.Object) bool) any {
			// Counted first: grown by doubling, a namespace's 20,000 pods were copied twice over.
			n := 0
			for _, o := range *slice(s) {
				if keep(o) {
					n++
				}
			}
			var out []T
			if n > 0 {
				out = make([]T, 0, n)
			}
			for _, o := range *slice(s) {
				if !keep(o) {
					continue
				}
				// A copy, with apiVersion and kind cleared as in a list the API server returns;
				// the snapshot's object is not touched.
				c := *o
				P(&c).GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
				out = append(out, c)
			}
			return out
		},
		owners: func(s *Snapshot) any {
			objs := *slice(s)
			// Two passes: the owners counted, then one array carved into their lists, instead
			// of each list grown by appends (a watch indexes 20k pods with every snapshot).
			n := make(map[types.UID]int, len(objs)/4+1)
			total := 0
			for _, o := range objs {
				for _, ref := range o.GetOwnerReferences() {
					n[ref.UID]++
					total++
				}
			}
			m := cowList[types.UID, P]{newCOWMap[types.UID, []P](len(n), hashUID)}
			all := make([]P, total)
			for _, o := range objs {
				for _, ref := range o.GetOwnerReferences() {
					sh := m.shards[m.shard(ref.UID)]
					l, ok := sh[ref.UID]
					if !ok {
						c := n[ref.UID]
						l, all = all[:0:c], all[c:]
					}
					sh[ref.UID] = append(l, o)
				}
			}
			return m
		},
		deriveOwners: func(m any) any {
			return cowList[types.UID, P]{m.(cowList[types.UID, P]).derive()}
		},
		reown: func(m any, old, next runtime.Object) {
			l := m.(cowList[types.UID, P])
			if o, ok := old.(P); ok {
				for _, ref := range o.GetOwnerReferences() {
					l.removeFrom(ref.UID, o)
				}
			}
			if o, ok := next.(P); ok {
				for _, ref := range o.GetOwnerReferences() {
					l.appendTo(ref.UID, o)
				}
			}
		},
	}
	return k
}

var (
	apps      = appsv1.SchemeGroupVersion
	core      = corev1.SchemeGroupVersion
	discovery = discoveryv1.SchemeGroupVersion
	policy    = policyv1.SchemeGroupVersion
)

// Kinds lists every kind a snapshot holds, in the order sources read them.
var Kinds = []Kind{
	entry(workload(&kinds.Deployment, Kind{File: "deployments.json", Selectable: true}),
		func(s *Snapshot) *[]*appsv1.Deployment { return &s.Deployments }),
	entry(workload(&kinds.StatefulSet, Kind{File: "statefulsets.json", Selectable: true}),
		func(s *Snapshot) *[]*appsv1.StatefulSet { return &s.StatefulSets }),
	entry(workload(&kinds.DaemonSet, Kind{File: "daemonsets.json", Selectable: true}),
		func(s *Snapshot) *[]*appsv1.DaemonSet { return &s.DaemonSets }),
	entry(workload(&kinds.ReplicaSet, Kind{File: "replicasets.json", ByOwner: true}),
		func(s *Snapshot) *[]*appsv1.ReplicaSet { return &s.ReplicaSets }),
	entry(Kind{
		Kind: "ControllerRevision", GVK: apps.WithKind("ControllerRevision"), Resource: "controllerrevisions",
		File: "controllerrevisions.json", ByOwner: true,
	}, func(s *Snapshot) *[]*appsv1.ControllerRevision { return &s.ControllerRevisions }),
	entry(workload(&kinds.CronJob, Kind{File: "cronjobs.json", Selectable: true}),
		func(s *Snapshot) *[]*batchv1.CronJob { return &s.CronJobs }),
	entry(workload(&kinds.Job, Kind{File: "jobs.json", ByOwner: true}),
		func(s *Snapshot) *[]*batchv1.Job { return &s.Jobs }),
	entry(Kind{
		Kind: "Pod", GVK: core.WithKind("Pod"), Resource: "pods", File: "pods.json", ByOwner: true, KeepUnread: true,
	}, func(s *Snapshot) *[]*corev1.Pod { return &s.Pods }),
	entry(Kind{
		Kind: "Event", GVK: core.WithKind("Event"), Resource: "events", File: "events.json",
	}, func(s *Snapshot) *[]*corev1.Event { return &s.Events }),
	entry(Kind{
		Kind: "Service", GVK: core.WithKind("Service"), Resource: "services", File: "services.json",
	}, func(s *Snapshot) *[]*corev1.Service { return &s.Services }),
	entry(Kind{
		Kind: "PersistentVolumeClaim", GVK: core.WithKind("PersistentVolumeClaim"), Resource: "persistentvolumeclaims",
		File: "persistentvolumeclaims.json",
	}, func(s *Snapshot) *[]*corev1.PersistentVolumeClaim { return &s.PersistentVolumeClaims }),
	entry(Kind{
		Kind: "ResourceQuota", GVK: core.WithKind("ResourceQuota"), Resource: "resourcequotas", File: "resourcequotas.json",
	}, func(s *Snapshot) *[]*corev1.ResourceQuota { return &s.ResourceQuotas }),
	entry(Kind{
		Kind: "EndpointSlice", GVK: discovery.WithKind("EndpointSlice"), Resource: "endpointslices", File: "endpointslices.json",
	}, func(s *Snapshot) *[]*discoveryv1.EndpointSlice { return &s.EndpointSlices }),
	entry(Kind{
		Kind: "PodDisruptionBudget", GVK: policy.WithKind("PodDisruptionBudget"), Resource: "poddisruptionbudgets",
		File: "poddisruptionbudgets.json",
	}, func(s *Snapshot) *[]*policyv1.PodDisruptionBudget { return &s.PodDisruptionBudgets }),
	entry(Kind{
		Kind: "Node", GVK: core.WithKind("Node"), Resource: "nodes", File: "nodes.json", Cluster: true,
	}, func(s *Snapshot) *[]*corev1.Node { return &s.Nodes }),
	entry(Kind{
		Kind: "PersistentVolume", GVK: core.WithKind("PersistentVolume"), Resource: "persistentvolumes",
		File: "persistentvolumes.json", Cluster: true, KeepUnread: true,
	}, func(s *Snapshot) *[]*corev1.PersistentVolume { return &s.PersistentVolumes }),
}

// workload fills a workload kind's entry from its adapter: its names, and the kind it follows.
func workload(w *kinds.Workload, k Kind) Kind {
	k.Kind, k.GVK, k.Resource, k.Workload, k.Follows = w.Kind, w.GVK, w.Resource, true, w.ControlledBy
	return k
}

// KindFor returns the entry of a group, version and kind, or nil for a kind a snapshot does not
// hold.
func KindFor(gvk schema.GroupVersionKind) *Kind { return kindsByGVK[gvk] }

// KindNamed returns the entry of a kind by its name ("Deployment"), or nil.
func KindNamed(name string) *Kind {
	for i := range Kinds {
		if Kinds[i].Kind == name {
			return &Kinds[i]
		}
	}
	return nil
}

var kindsByGVK = func() map[schema.GroupVersionKind]*Kind {
	m := map[schema.GroupVersionKind]*Kind{}
	for i := range Kinds {
		m[Kinds[i].GVK] = &Kinds[i]
	}
	return m
}()

// Len is how many objects of the kind the snapshot holds.
func (k *Kind) Len(s *Snapshot) int { return k.ops.len(s) }

// Each calls f on every object of the kind in the snapshot.
func (k *Kind) Each(s *Snapshot, f func(runtime.Object)) { k.ops.each(s, f) }

// Add appends the objects of the kind among objs to the snapshot; others are ignored.
func (k *Kind) Add(s *Snapshot, objs []runtime.Object) { k.ops.add(s, objs) }

// Put appends obj to its kind's list in the snapshot, or replaces the element at idx when idx
// >= 0, and returns its index; ok is false when obj is not of the kind.
func (k *Kind) Put(s *Snapshot, obj runtime.Object, idx int) (i int, ok bool) {
	return k.ops.put(s, obj, idx)
}

// Items returns the kind's objects keep accepts as a slice of values ([]appsv1.Deployment),
// with apiVersion and kind cleared, as the items of a list the API server returns.
func (k *Kind) Items(s *Snapshot, keep func(metav1.Object) bool) any { return k.ops.items(s, keep) }

// Len counts every object of the snapshot, all kinds together.
func (s *Snapshot) Len() int {
	n := 0
	for i := range Kinds {
		n += Kinds[i].Len(s)
	}
	return n
}

// Each calls f on every object of the snapshot, kind by kind in the order of Kinds.
func (s *Snapshot) Each(f func(runtime.Object)) {
	for i := range Kinds {
		Kinds[i].Each(s, f)
	}
}

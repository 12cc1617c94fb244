package snapshot

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// each calls f on every entry of m in no order.
func (m *cowMap[K, V]) each(f func(K, V)) {
	for _, s := range m.shards {
		for k, v := range s {
			f(k, v)
		}
	}
}

// world is a random namespace that changes as a watch sees it: pods move between ReplicaSets,
// are renamed, deleted and made again under the same name with a new UID; ReplicaSets change
// Deployments; events name pods by UID or by name alone; slices change Services.
type world struct {
	rng  *rand.Rand
	gen  int
	objs map[ObjectKey]runtime.Object
}

func newWorld(seed uint64) *world {
	return &world{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), objs: map[ObjectKey]runtime.Object{}}
}

func (w *world) uid(prefix string) types.UID {
	w.gen++
	return types.UID(fmt.Sprintf("%s-%d", prefix, w.gen))
}

func (w *world) pick(n int) int { return w.rng.IntN(n) }

func (w *world) meta(name string, owners ...metav1.OwnerReference) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: []string{"a", "b"}[w.pick(2)], Name: name, UID: w.uid(name), OwnerReferences: owners}
}

func (w *world) ref(kind string, n int) metav1.OwnerReference {
	// Owner UIDs are stable per name, so owners are shared and lists are long.
	return metav1.OwnerReference{Kind: kind, Name: fmt.Sprintf("%s-%d", kind, n), UID: types.UID(fmt.Sprintf("%s-%d", kind, n)), Controller: ptr.To(true)}
}

// change makes one random change and returns the object put (deleted false) or deleted.
func (w *world) change() (runtime.Object, bool) {
	var obj runtime.Object
	switch w.pick(6) {
	case 0, 1:
		p := &corev1.Pod{ObjectMeta: w.meta(fmt.Sprintf("pod-%d", w.pick(300)))}
		switch w.pick(4) {
		case 0: // bare
		case 1:
			p.OwnerReferences = []metav1.OwnerReference{w.ref("ReplicaSet", w.pick(6)), w.ref("Other", w.pick(2))}
		default:
			p.OwnerReferences = []metav1.OwnerReference{w.ref("ReplicaSet", w.pick(6))}
		}
		p.Status.Phase = corev1.PodPhase(fmt.Sprint(w.pick(3)))
		obj = p
	case 2:
		rs := &appsv1.ReplicaSet{ObjectMeta: w.meta(fmt.Sprintf("ReplicaSet-%d", w.pick(6)), w.ref("Deployment", w.pick(3)))}
		// The UID pods' references name; UIDs are unique, so in one namespace.
		rs.Namespace, rs.UID = "a", types.UID(rs.Name)
		if w.pick(5) == 0 {
			rs.OwnerReferences = nil
		}
		obj = rs
	case 3:
		e := &corev1.Event{ObjectMeta: w.meta(fmt.Sprintf("ev-%d", w.pick(300)))}
		e.InvolvedObject = corev1.ObjectReference{Kind: []string{"Pod", "ReplicaSet"}[w.pick(2)], Name: fmt.Sprintf("pod-%d", w.pick(300))}
		if w.pick(2) == 0 {
			e.InvolvedObject.UID = types.UID(fmt.Sprintf("u-%d", w.pick(10)))
		}
		if w.pick(3) == 0 {
			e.InvolvedObject.Namespace = "b"
		}
		obj = e
	case 4:
		es := &discoveryv1.EndpointSlice{ObjectMeta: w.meta(fmt.Sprintf("es-%d", w.pick(8)))}
		if w.pick(4) != 0 {
			es.Labels = map[string]string{discoveryv1.LabelServiceName: fmt.Sprintf("svc-%d", w.pick(3))}
		}
		obj = es
	case 5:
		switch w.pick(3) {
		case 0:
			obj = &corev1.Service{ObjectMeta: w.meta(fmt.Sprintf("svc-%d", w.pick(3)))}
		case 1:
			obj = &appsv1.Deployment{ObjectMeta: w.meta(fmt.Sprintf("Deployment-%d", w.pick(3)))}
		default:
			obj = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", w.pick(3)), UID: w.uid("node")}}
		}
	}
	m := obj.(metav1.Object)
	k := ObjectKey{Kind: reflect.TypeOf(obj).Elem().Name(), Namespace: m.GetNamespace(), Name: m.GetName()}
	if old, ok := w.objs[k]; ok && w.pick(4) == 0 {
		delete(w.objs, k)
		return old, true
	}
	w.objs[k] = obj
	return obj, false
}

// indexContents is an index as plain values, its lists in their order.
func indexContents(ix *index, s *Snapshot) map[string]any {
	lists := func(m any) map[any]any {
		out := map[any]any{}
		switch c := m.(type) {
		case cowList[types.UID, *corev1.Pod]:
			c.each(func(k types.UID, v []*corev1.Pod) { out[k] = v })
		case cowList[types.UID, *appsv1.ReplicaSet]:
			c.each(func(k types.UID, v []*appsv1.ReplicaSet) { out[k] = v })
		case cowList[types.UID, *appsv1.ControllerRevision]:
			c.each(func(k types.UID, v []*appsv1.ControllerRevision) { out[k] = v })
		default:
			out["other"] = c
		}
		return out
	}
	out := map[string]any{}
	for kind, m := range ix.byOwner {
		if kind == "Job" {
			continue
		}
		out["owners/"+kind] = lists(m)
	}
	uids := map[types.UID][]*corev1.Event{}
	ix.eventsByUID.each(func(k types.UID, v []*corev1.Event) { uids[k] = v })
	keys := map[ObjectKey][]*corev1.Event{}
	ix.eventsByKey.each(func(k ObjectKey, v []*corev1.Event) { keys[k] = v })
	slices := map[ObjectKey][]*discoveryv1.EndpointSlice{}
	ix.slicesByService.each(func(k ObjectKey, v []*discoveryv1.EndpointSlice) { slices[k] = v })
	pods := map[ObjectKey]*corev1.Pod{}
	lazily(&ix.podsByName, func() *cowMap[ObjectKey, *corev1.Pod] { return buildPodsByName(s) }).each(func(k ObjectKey, v *corev1.Pod) { pods[k] = v })
	rss := map[types.UID]*appsv1.ReplicaSet{}
	lazily(&ix.replicaSetsByUID, func() *cowMap[types.UID, *appsv1.ReplicaSet] { return buildReplicaSetsByUID(s) }).each(func(k types.UID, v *appsv1.ReplicaSet) { rss[k] = v })
	out["eventsByUID"], out["eventsByKey"], out["slices"], out["pods"], out["rss"] = uids, keys, slices, pods, rss
	out["services"], out["pvcs"], out["quotas"], out["nodes"] = ix.servicesByNamespace, ix.pvcs, ix.quotasByNamespace, ix.nodes
	return out
}

// Over random sequences of changes (pods moving between ReplicaSets, renamed, deleted and made
// again; ReplicaSets changing Deployments; events by UID and by name; slices changing Services;
// Services, Deployments and Nodes), each snapshot of a Tracker holds what the changes left, says
// exactly what changed since the last, and its index derived from the last one's equals, list
// order included, the index built from its lists. A snapshot retracted now and then folds its
// changes into the next.
func TestDerivedIndexIsTheBuiltIndex(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		w := newWorld(seed)
		// Enough objects that the derived tables spread over several shards.
		for range 1500 {
			w.change()
		}
		base := &Snapshot{}
		for _, o := range w.objs {
			KindFor(gvkOf(o)).Put(base, o, -1)
		}
		tr := NewTracker(base)
		base.Index()
		taken, last := base, base
		derived := 0
		for step := range 60 {
			for range 1 + w.pick(6) {
				obj, deleted := w.change()
				if deleted {
					tr.Delete(obj)
				} else {
					tr.Put(obj)
				}
			}
			// A watch takes back the snapshot its reader did not take; one left unread makes the
			// next say nothing to the reader.
			skipped := last != taken && w.pick(4) == 0
			if last != taken && !skipped {
				tr.Retract(last)
			}
			s := tr.Snapshot()
			if s.changes.base != nil {
				derived++
			}
			s.Index()
			if got, want := indexContents(s.index, s), indexContents(buildIndex(s), s); !reflect.DeepEqual(got, want) {
				for k := range want {
					if !reflect.DeepEqual(got[k], want[k]) {
						t.Fatalf("seed %d step %d: derived index's %s differs from the built one:\n got %v\nwant %v", seed, step, k, got[k], want[k])
					}
				}
			}
			// The lists hold the world.
			held := map[ObjectKey]runtime.Object{}
			s.Each(func(o runtime.Object) {
				m := o.(metav1.Object)
				held[ObjectKey{Kind: reflect.TypeOf(o).Elem().Name(), Namespace: m.GetNamespace(), Name: m.GetName()}] = o
			})
			if !reflect.DeepEqual(held, w.objs) {
				t.Fatalf("seed %d step %d: the snapshot holds %d objects, the world %d", seed, step, len(held), len(w.objs))
			}
			if len(held) != s.Len() {
				t.Fatalf("seed %d step %d: the snapshot lists %d objects under %d names", seed, step, s.Len(), len(held))
			}
			last = s
			if skipped {
				if _, ok := s.ChangesSince(taken); ok {
					t.Fatalf("seed %d step %d: a snapshot says what changed since one that it was not made from", seed, step)
				}
				taken = s
				continue
			}
			if w.pick(4) != 0 {
				// The reader takes it: its changes since the last taken are exactly the difference.
				chs, ok := s.ChangesSince(taken)
				if !ok {
					t.Fatalf("seed %d step %d: the snapshot does not say what changed since the last one taken", seed, step)
				}
				checkChanges(t, seed, step, taken, s, chs)
				taken = s
			}
		}
		if derived == 0 {
			t.Fatalf("seed %d: no index was derived", seed)
		}
		if n := len(last.index.eventsByKey.shards); n < 4 {
			t.Fatalf("seed %d: the events' table of the last index has %d shards, want several", seed, n)
		}
	}
}

// checkChanges holds chs to the difference between two snapshots' objects.
func checkChanges(t *testing.T, seed uint64, step int, prev, next *Snapshot, chs []Change) {
	t.Helper()
	objects := func(s *Snapshot) map[ObjectKey]runtime.Object {
		out := map[ObjectKey]runtime.Object{}
		s.Each(func(o runtime.Object) {
			m := o.(metav1.Object)
			out[ObjectKey{Kind: KindFor(gvkOf(o)).Kind, Namespace: m.GetNamespace(), Name: m.GetName()}] = o
		})
		return out
	}
	a, b := objects(prev), objects(next)
	want := map[ObjectKey][2]runtime.Object{}
	for k, o := range a {
		if b[k] != o {
			want[k] = [2]runtime.Object{o, b[k]}
		}
	}
	for k, o := range b {
		if _, ok := a[k]; !ok {
			want[k] = [2]runtime.Object{nil, o}
		}
	}
	got := map[ObjectKey][2]runtime.Object{}
	for _, c := range chs {
		k := ObjectKey{Kind: c.Kind, Namespace: c.Namespace, Name: c.Name}
		if _, dup := got[k]; dup {
			t.Fatalf("seed %d step %d: %v changed twice", seed, step, k)
		}
		for _, o := range []runtime.Object{c.Old, c.New} {
			if m, ok := o.(metav1.Object); ok && (m.GetNamespace() != c.Namespace || m.GetName() != c.Name) {
				t.Fatalf("seed %d step %d: a change of %v holds %s/%s", seed, step, k, m.GetNamespace(), m.GetName())
			}
		}
		if c.Old == nil && c.New == nil {
			if _, ok := a[k]; ok {
				t.Fatalf("seed %d step %d: %v came and went, but the last snapshot held it", seed, step, k)
			}
			continue
		}
		got[k] = [2]runtime.Object{c.Old, c.New}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("seed %d step %d: %d changes said, %d made", seed, step, len(got), len(want))
	}
}

func gvkOf(o runtime.Object) (gvk schema.GroupVersionKind) {
	for i := range Kinds {
		if reflect.TypeOf(Kinds[i].New()) == reflect.TypeOf(o) {
			return Kinds[i].GVK
		}
	}
	return gvk
}

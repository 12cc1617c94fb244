package snapshot

import (
	"reflect"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
)

// Change is one object a watch saw added (Old nil), replaced or deleted (New nil) between two
// snapshots, by its kind (its entry in Kinds), namespace and name. Both are nil for an object
// that came and went in between: a reader that keeps state per object may have seen it.
type Change struct {
	Kind, Namespace, Name string
	Old, New              runtime.Object
}

// changes is what changed in a Tracker's snapshot since the one numbered since.
type changes struct {
	origin *Tracker
	since  uint64
	// base is the index of that snapshot, to derive this one's from; cleared once used.
	base    *index
	objects []Change
}

// ChangesSince returns what changed in s since base, when a Tracker made s from base (or from a
// snapshot made from base that its reader never took; see Retract): every object added,
// replaced or deleted, each once. ok is false when s does not say: it was not made from base.
// A reader that diagnoses a watch's snapshots finds in it what to diagnose again in proportion to
// what changed, without comparing the two snapshots' lists.
func (s *Snapshot) ChangesSince(base *Snapshot) (_ []Change, ok bool) {
	c := s.changes
	if c == nil || base == nil || base.changes == nil || c.origin != base.changes.origin || c.since == 0 || c.since != base.seq {
		return nil, false
	}
	return c.objects, true
}

// ChangesAfter is ChangesSince for a reader that keeps its own state per object and reads the
// changed objects' names, not what they were: it also says what changed since p when p is a
// snapshot the Tracker made and took back (Retract), as s's changes then include p's. Its
// changes may so name objects that did not change since p.
func (s *Snapshot) ChangesAfter(p *Snapshot) (_ []Change, ok bool) {
	if chs, ok := s.ChangesSince(p); ok {
		return chs, true
	}
	c := s.changes
	if c == nil || p == nil || p.changes == nil || c.origin != p.changes.origin || c.since == 0 || c.since != p.changes.since || p.seq >= s.seq {
		return nil, false
	}
	return c.objects, true
}

// objectName names an object within its kind.
type objectName struct{ namespace, name string }

// trackedKind is one kind's objects in a Tracker: items in the order its snapshots list them,
// nil where an object was replaced or deleted until the list is compacted, and where each is.
type trackedKind struct {
	kind  *Kind
	items []runtime.Object
	pos   map[objectName]int
	// changed is set when the list changed since the last snapshot, which otherwise shares
	// its list.
	changed bool
}

// Tracker keeps the objects of a watch current from its informers' events and makes snapshots of
// them that say what changed since the last one (ChangesSince), so a reader's work per snapshot
// can follow the changes rather than the namespace. The cost of a snapshot is a copy of the
// pointers of the kinds that changed. A Tracker is safe for concurrent use.
//
// Per kind, a snapshot lists the objects of the last one that did not change, in their order,
// then the replaced and added ones in the order its changes list them: Index derives a snapshot's
// index from the last one's on that promise.
type Tracker struct {
	mu    sync.Mutex
	kinds map[reflect.Type]*trackedKind
	order []*trackedKind // in the order of Kinds
	// pending holds, per object changed since base, what base held (nil for none).
	pending map[ObjectKey]runtime.Object
	// base is the snapshot the next one's changes are relative to; built is the last one made,
	// whose lists the next shares where its kind did not change. They differ after Retract.
	base, built *Snapshot
	// prev is the base of the last snapshot made, which Retract goes back to.
	prev *Snapshot
	seq  uint64
}

// NewTracker starts a Tracker from base, a snapshot of every object its informers start with,
// which it takes as the first of its snapshots: the second says what changed since base. It
// marks base as its own (before anyone else holds it).
func NewTracker(base *Snapshot) *Tracker {
	t := &Tracker{kinds: map[reflect.Type]*trackedKind{}, pending: map[ObjectKey]runtime.Object{}, base: base, built: base, seq: 1}
	for i := range Kinds {
		k := &Kinds[i]
		tk := &trackedKind{kind: k, pos: make(map[objectName]int, k.Len(base))}
		k.Each(base, func(o runtime.Object) {
			m := metaOf(o)
			tk.pos[objectName{m.GetNamespace(), m.GetName()}] = len(tk.items)
			tk.items = append(tk.items, o)
		})
		t.kinds[reflect.TypeOf(k.New())] = tk
		t.order = append(t.order, tk)
	}
	base.seq, base.changes = t.seq, &changes{origin: t}
	return t
}

// Put adds obj, or replaces the object of its kind, namespace and name, and reports whether
// that changed anything. Objects of kinds a snapshot does not hold are ignored.
func (t *Tracker) Put(obj runtime.Object) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	tk := t.kinds[reflect.TypeOf(obj)]
	if tk == nil {
		return false
	}
	m := metaOf(obj)
	n := objectName{m.GetNamespace(), m.GetName()}
	var old runtime.Object
	if i, ok := tk.pos[n]; ok {
		if old = tk.items[i]; old == obj {
			return false
		}
		tk.items[i] = nil
	}
	// A replaced object goes to the end, as an added one: an object that changed owners or
	// involved object then leaves one list of the index and ends another, which keeps the
	// index's lists in its snapshot's order (derive).
	tk.pos[n] = len(tk.items)
	tk.items = append(tk.items, obj)
	t.changed(tk, n, old)
	return true
}

// Delete removes the object of obj's kind, namespace and name, and reports whether there was
// one.
func (t *Tracker) Delete(obj runtime.Object) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	tk := t.kinds[reflect.TypeOf(obj)]
	if tk == nil {
		return false
	}
	m := metaOf(obj)
	n := objectName{m.GetNamespace(), m.GetName()}
	i, ok := tk.pos[n]
	if !ok {
		return false
	}
	old := tk.items[i]
	tk.items[i] = nil
	delete(tk.pos, n)
	t.changed(tk, n, old)
	return true
}

func (t *Tracker) changed(tk *trackedKind, n objectName, old runtime.Object) {
	tk.changed = true
	k := ObjectKey{Kind: tk.kind.Kind, Namespace: n.namespace, Name: n.name}
	if _, seen := t.pending[k]; !seen {
		t.pending[k] = old
	}
}

// Snapshot returns a snapshot of the objects now, which says what changed since the last one.
// It reads the last snapshot's index, to derive its own from: index each snapshot (Index) before
// handing it to another goroutine. Only the objects are set; the caller sets the rest.
func (t *Tracker) Snapshot() *Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	c := &changes{origin: t, since: t.base.seq, base: t.base.index, objects: make([]Change, 0, len(t.pending))}
	type placed struct {
		kind, pos int
		Change
	}
	ordered := make([]placed, 0, len(t.pending))
	for k, old := range t.pending {
		tk := t.kindNamed(k.Kind)
		ch := placed{kind: -1, pos: -1, Change: Change{Kind: k.Kind, Namespace: k.Namespace, Name: k.Name, Old: old}}
		if i, ok := tk.pos[objectName{k.Namespace, k.Name}]; ok {
			ch.New, ch.pos = tk.items[i], i
		}
		for j, o := range t.order {
			if o == tk {
				ch.kind = j
			}
		}
		ordered = append(ordered, ch)
	}
	// The order the lists put them in: deleted objects, which are in none, first.
	sort.Slice(ordered, func(i, j int) bool {
		if ordered[i].kind != ordered[j].kind {
			return ordered[i].kind < ordered[j].kind
		}
		return ordered[i].pos < ordered[j].pos
	})
	for _, p := range ordered {
		c.objects = append(c.objects, p.Change)
	}
	s := &Snapshot{seq: t.seq, changes: c}
	for _, tk := range t.order {
		if !tk.changed {
			tk.kind.ops.share(s, t.built)
			continue
		}
		tk.kind.ops.fill(s, tk.items, len(tk.pos))
		tk.changed = false
		if dead := len(tk.items) - len(tk.pos); dead > 64 && dead > len(tk.pos)/2 {
			tk.compact()
		}
	}
	clear(t.pending)
	t.prev, t.base, t.built = t.base, s, s
	return s
}

// Retract takes back s, the last snapshot made, which its reader never took (a newer one
// replaces it): the next snapshot's changes are then relative to the one before s, and include
// s's. A snapshot other than the last made is not retracted.
func (t *Tracker) Retract(s *Snapshot) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s != t.base || t.prev == nil || s.changes == nil || s.changes.since != t.prev.seq {
		return
	}
	for _, ch := range s.changes.objects {
		// What changed again since s changed from what the snapshot before it held.
		t.pending[ObjectKey{Kind: ch.Kind, Namespace: ch.Namespace, Name: ch.Name}] = ch.Old
	}
	t.base, t.prev = t.prev, nil
}

func (t *Tracker) kindNamed(kind string) *trackedKind {
	for _, tk := range t.order {
		if tk.kind.Kind == kind {
			return tk
		}
	}
	return nil
}

// compact drops the holes replaced and deleted objects left, keeping the order.
func (tk *trackedKind) compact() {
	items := make([]runtime.Object, 0, len(tk.pos))
	for _, o := range tk.items {
		if o != nil {
			m := metaOf(o)
			tk.pos[objectName{m.GetNamespace(), m.GetName()}] = len(items)
			items = append(items, o)
		}
	}
	tk.items = items
}

type namedObject interface {
	GetNamespace() string
	GetName() string
}

func metaOf(o runtime.Object) namedObject {
	if m, ok := o.(namedObject); ok {
		return m
	}
	return noName{}
}

type noName struct{}

func (noName) GetNamespace() string { return "" }
func (noName) GetName() string      { return "" }

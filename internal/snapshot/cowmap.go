package snapshot

import (
	"hash/maphash"
	"maps"
)

// cowMap is a map that a watch's next snapshot derives from its last one's by copying only the
// parts that change: its entries are spread over shards of about shardSize entries, a derived map
// shares the shards of its parent, and a write copies the one shard it touches first. A change of
// one pod so costs the copy of a few dozen entries whatever the namespace's size, where a map of
// its own per snapshot cost a map of every pod. A map is read-only once derived from.
type cowMap[K comparable, V any] struct {
	seed   maphash.Seed
	shards []map[K]V
	// own marks the shards this map copied from its parent, which it may write in place.
	own []bool
}

// shardSize is about how many entries a shard holds when its map is built; a write copies one.
const shardSize = 32

// newCOWMap makes a map sized for about n entries.
func newCOWMap[K comparable, V any](n int) *cowMap[K, V] {
	shards := 1
	for shards*shardSize < n {
		shards *= 2
	}
	m := &cowMap[K, V]{seed: maphash.MakeSeed(), shards: make([]map[K]V, shards), own: make([]bool, shards)}
	per := n/shards + 1
	for i := range m.shards {
		m.shards[i] = make(map[K]V, per)
		m.own[i] = true
	}
	return m
}

func (m *cowMap[K, V]) shard(k K) int {
	return int(maphash.Comparable(m.seed, k) & uint64(len(m.shards)-1))
}

func (m *cowMap[K, V]) get(k K) V { return m.shards[m.shard(k)][k] }

// derive returns a map with m's entries that shares m's shards until it writes them.
func (m *cowMap[K, V]) derive() *cowMap[K, V] {
	return &cowMap[K, V]{seed: m.seed, shards: append([]map[K]V(nil), m.shards...), own: make([]bool, len(m.shards))}
}

// writable returns the shard of k, copied first if m shares it.
func (m *cowMap[K, V]) writable(k K) map[K]V {
	i := m.shard(k)
	if !m.own[i] {
		m.shards[i] = maps.Clone(m.shards[i])
		if m.shards[i] == nil {
			m.shards[i] = map[K]V{}
		}
		m.own[i] = true
	}
	return m.shards[i]
}

func (m *cowMap[K, V]) set(k K, v V) { m.writable(k)[k] = v }

func (m *cowMap[K, V]) del(k K) {
	if _, ok := m.shards[m.shard(k)][k]; ok {
		delete(m.writable(k), k)
	}
}

// len counts the entries; tests only.
func (m *cowMap[K, V]) len() int {
	n := 0
	for _, s := range m.shards {
		n += len(s)
	}
	return n
}

// each calls f on every entry in no order; tests only.
func (m *cowMap[K, V]) each(f func(K, V)) {
	for _, s := range m.shards {
		for k, v := range s {
			f(k, v)
		}
	}
}

// appendOwned adds v at the end of k's list in a map being built, whose shards are all its own.
func (l cowList[K, V]) appendOwned(k K, v V) {
	sh := l.shards[l.shard(k)]
	sh[k] = append(sh[k], v)
}

// cowList is a cowMap of lists: a write replaces a key's list with a new one, so lists a parent
// map holds are never changed either.
type cowList[K comparable, V any] struct{ *cowMap[K, []V] }

// appendTo adds v at the end of k's list.
func (l cowList[K, V]) appendTo(k K, v V) {
	old := l.get(k)
	l.set(k, append(old[:len(old):len(old)], v))
}

// removeFrom takes v out of k's list, keeping the others' order.
func (l cowList[K, V]) removeFrom(k K, v V) {
	old := l.get(k)
	for i, o := range old {
		if any(o) != any(v) {
			continue
		}
		if len(old) == 1 {
			l.del(k)
			return
		}
		out := make([]V, 0, len(old)-1)
		out = append(append(out, old[:i]...), old[i+1:]...)
		l.set(k, out)
		return
	}
}

package snapshot

import (
	"hash/maphash"
	"maps"

	"k8s.io/apimachinery/pkg/types"
)

// cowMap is a map that a watch's next snapshot derives from its last one's by copying only the
// parts that change: its entries are spread over shards of about shardSize entries, a derived map
// shares the shards of its parent, and a write copies the one shard it touches first. A change of
// one pod so costs the copy of a few dozen entries whatever the namespace's size, where a map of
// its own per snapshot cost a map of every pod. A map is read-only once derived from.
type cowMap[K comparable, V any] struct {
	seed   maphash.Seed
	hash   func(maphash.Seed, K) uint64
	shards []map[K]V
	// own marks the shards this map copied from its parent, which it may write in place.
	own []bool
}

// hashUID and hashKey pick shards by a UID, and by an object's name alone: hashing the whole key,
// as the shard's map hashes it again, made an index a third dearer to build.
func hashUID(seed maphash.Seed, uid types.UID) uint64 { return maphash.String(seed, string(uid)) }

func hashKey(seed maphash.Seed, k ObjectKey) uint64 { return maphash.String(seed, k.Name) }

// shardSize is about how many entries a shard holds when its map is built; a write copies one.
const shardSize = 32

// newCOWMap makes a map of one shard for about n entries, whose keys hash spreads over shards
// once it is derived from: a map built for one snapshot costs what a plain map does, as most are
// never derived from (a one-shot diagnosis, a dump).
func newCOWMap[K comparable, V any](n int, hash func(maphash.Seed, K) uint64) *cowMap[K, V] {
	return &cowMap[K, V]{hash: hash, shards: []map[K]V{make(map[K]V, n)}, own: []bool{true}}
}

func (m *cowMap[K, V]) shard(k K) int {
	if len(m.shards) == 1 {
		return 0
	}
	return int(m.hash(m.seed, k) & uint64(len(m.shards)-1))
}

func (m *cowMap[K, V]) get(k K) V { return m.shards[m.shard(k)][k] }

// derive returns a map with m's entries that shares m's shards until it writes them. The first
// derived from a map of one shard spreads its entries over shards of about shardSize, once.
func (m *cowMap[K, V]) derive() *cowMap[K, V] {
	if n := len(m.shards[0]); len(m.shards) == 1 && n > 2*shardSize {
		shards := 1
		for shards*shardSize < n {
			shards *= 2
		}
		out := &cowMap[K, V]{seed: maphash.MakeSeed(), hash: m.hash, shards: make([]map[K]V, shards), own: make([]bool, shards)}
		for i := range out.shards {
			out.shards[i], out.own[i] = make(map[K]V, n/shards+1), true
		}
		for k, v := range m.shards[0] {
			out.shards[out.shard(k)][k] = v
		}
		return out
	}
	return &cowMap[K, V]{seed: m.seed, hash: m.hash, shards: append([]map[K]V(nil), m.shards...), own: make([]bool, len(m.shards))}
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

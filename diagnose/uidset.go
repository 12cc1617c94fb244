package diagnose

import "k8s.io/apimachinery/pkg/types"

// Most workloads have a handful of copies, and a map per workload for each question asked of
// its copies by UID cost more than the questions (building them showed in profiles of 100,000
// pods). These hold a few UIDs in a list, scanned, and move to a map past smallUIDs; a UID
// added twice is held once, as a map would hold it.

// smallUIDs is the most UIDs held in a list.
const smallUIDs = 16

// uidSet is a set of UIDs. The zero value is empty.
type uidSet struct {
	list []types.UID
	m    map[types.UID]struct{}
}

// newUIDSet is an empty set with room for n UIDs.
func newUIDSet(n int) uidSet {
	if n > smallUIDs {
		return uidSet{m: make(map[types.UID]struct{}, n)}
	}
	return uidSet{list: make([]types.UID, 0, n)}
}

func (s *uidSet) add(u types.UID) {
	if s.m != nil {
		s.m[u] = struct{}{}
		return
	}
	if s.has(u) {
		return
	}
	if len(s.list) < smallUIDs {
		s.list = append(s.list, u)
		return
	}
	s.m = make(map[types.UID]struct{}, 2*smallUIDs)
	for _, x := range s.list {
		s.m[x] = struct{}{}
	}
	s.m[u] = struct{}{}
	s.list = nil
}

func (s *uidSet) has(u types.UID) bool {
	if s.m != nil {
		_, ok := s.m[u]
		return ok
	}
	for _, x := range s.list {
		if x == u {
			return true
		}
	}
	return false
}

// uidMap maps UIDs to revisions; setting a UID again replaces its value. The zero value is
// empty.
type uidMap struct {
	keys []types.UID
	vals []*revision
	m    map[types.UID]*revision
}

// newUIDMap is an empty map with room for n UIDs.
func newUIDMap(n int) uidMap {
	if n > smallUIDs {
		return uidMap{m: make(map[types.UID]*revision, n)}
	}
	return uidMap{keys: make([]types.UID, 0, n), vals: make([]*revision, 0, n)}
}

func (s *uidMap) set(u types.UID, v *revision) {
	if s.m != nil {
		s.m[u] = v
		return
	}
	for i, x := range s.keys {
		if x == u {
			s.vals[i] = v
			return
		}
	}
	if len(s.keys) < smallUIDs {
		s.keys = append(s.keys, u)
		s.vals = append(s.vals, v)
		return
	}
	s.m = make(map[types.UID]*revision, 2*smallUIDs)
	for i, x := range s.keys {
		s.m[x] = s.vals[i]
	}
	s.m[u] = v
	s.keys, s.vals = nil, nil
}

func (s *uidMap) get(u types.UID) *revision {
	if s.m != nil {
		return s.m[u]
	}
	for i, x := range s.keys {
		if x == u {
			return s.vals[i]
		}
	}
	return nil
}

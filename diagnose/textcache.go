package diagnose

import "time"

// Many workloads log the very same texts (one image behind several Deployments, every client
// of a dependency that is down). What a text says does not depend on the workload that logged
// it, so each worker keeps what it read of each text for the workloads it diagnoses next:
// textFacts holds only what is a function of the text alone.

// maxCachedTexts bounds a worker's cache; past it the cache starts afresh, so a cluster whose
// texts never repeat holds no more than this many.
const maxCachedTexts = 1 << 16

// textFacts is what a log text says, each part read when first asked.
type textFacts struct {
	failingDone, reducedDone, atDone, toksDone, keyDone bool
	failing                                             bool
	dated                                               bool
	reduced                                             *reducedLine
	at                                                  time.Time
	// toks are the text's tokens (tokenize), key their tokensKey.
	toks []token
	key  string
	// pullKind is pullKindOf the text, 0 until asked.
	pullKind uint8
}

// textCache is one worker's textFacts by text. A nil cache shares nothing.
type textCache struct {
	m map[string]*textFacts
	// facts is the worker's room for a workload's copy facts, which no diagnosis keeps: the
	// next workload reads its copies into it (copyFacts).
	facts []copyFacts
	// hits and groupOf are its room for the log lines collectSignals reads and their
	// signals, which it gives no signal (logRoom).
	hits    []logHit
	groupOf []int32
	// obs and refs are its room for a workload's observation list and the objects they
	// point at: the report keeps what the list is written from and the tails, not the list
	// (obsLog).
	obs  []Observation
	refs []ObjectRef
}

// obsRoom returns an empty list with room for n observations, the worker's own when it has a
// cache.
func (c *textCache) obsRoom(n int) []Observation {
	if c == nil {
		return make([]Observation, 0, n)
	}
	if cap(c.obs) < n {
		c.obs = make([]Observation, 0, n)
	}
	return c.obs[:0]
}

// refRoom returns an empty list with room for n object references, the worker's own when it
// has a cache.
func (c *textCache) refRoom(n int) []ObjectRef {
	if c == nil {
		return make([]ObjectRef, 0, n)
	}
	if cap(c.refs) < n {
		c.refs = make([]ObjectRef, 0, n)
	}
	return c.refs[:0]
}

// logRoom returns empty lists with room for n log lines and their signals' indexes, the
// worker's own when it has a cache.
func (c *textCache) logRoom(n int) ([]logHit, []int32) {
	if c == nil {
		return make([]logHit, 0, n), make([]int32, 0, n)
	}
	if cap(c.hits) < n {
		c.hits, c.groupOf = make([]logHit, 0, n), make([]int32, 0, n)
	}
	return c.hits[:0], c.groupOf[:0]
}

// copyFacts returns room for n copies' facts, the worker's own when it has a cache. Each is
// written whole (fillCopy) before it is read.
func (c *textCache) copyFacts(n int) []copyFacts {
	if c == nil {
		return make([]copyFacts, n)
	}
	if cap(c.facts) < n {
		c.facts = make([]copyFacts, n)
	}
	return c.facts[:n]
}

// get returns the facts of text, new ones the first time.
func (c *textCache) get(text string) *textFacts {
	if c == nil {
		return &textFacts{}
	}
	if f := c.m[text]; f != nil {
		return f
	}
	if c.m == nil || len(c.m) >= maxCachedTexts {
		c.m = make(map[string]*textFacts, 256)
	}
	f := &textFacts{}
	c.m[text] = f
	return f
}

package diagnose

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// Many workloads log the very same texts (one image behind several Deployments, every client
// of a dependency that is down). What a text says does not depend on the workload that logged
// it, so each worker keeps what it read of each text for the workloads it diagnoses next:
// textFacts holds only what is a function of the text alone.

// maxCachedTexts bounds a worker's cache; past it the cache starts afresh, so a cluster whose
// texts never repeat holds no more than this many.
const maxCachedTexts = 1 << 16

// textCache is one worker's readings by text (facts.Reading), and its rooms. A nil cache
// shares nothing.
type textCache struct {
	m map[string]*facts.Reading
	workerRoom
}

// workerRoom is what a worker writes a workload's working state into, workload after
// workload: no diagnosis keeps any of it (the report keeps an observation list's source and
// log tails, not the list).
//
// The rooms earn their place (measured 2026-12-07 by allocating each workload's state afresh
// instead, branch rooms37 d59016a): BenchmarkDiagnose100kCPU went from 1.08-1.34 to
// 1.33-1.63 CPU s per op (+23-35%) and from 79 to 178 MB per op, against the engine's goal
// in docs/performance.md. TestWorkerRoomsAsFresh holds them to what fresh state gives.
type workerRoom struct {
	// facts is the room for a workload's copy facts (copyFacts), factRefs for the list of
	// them (copyRefs).
	facts    []copyFacts
	factRefs []*copyFacts
	// lives are a workload's copies' lifecycles, lifeContainers their containers (lifeRoom).
	lives          []facts.Copy
	lifeContainers []facts.Container
	// obs, refs, obsOf and byPod are a workload's observation list, the objects it points at,
	// the observations themselves and their ranges by copy; texts its log texts (observeLog).
	obs   []Observation
	notes []*lineFacts
	refs  []ObjectRef
	obsOf observations
	byPod []obsRange
	texts map[string]*lineFacts
	// gaps is the ranker of its gap checks, gapFind their finder; rank the ranker of its
	// suspects (rankRoom) and copies the copies its rules read (copyRoom).
	gaps    ranker
	gapFind gapFinder
	rank    ranker
	copies  []rules.Copy
	// flags and revs hand out a workload's lists by copy (flagRoom, revRoom); nFlags is
	// how many flags are handed out.
	flags  []bool
	nFlags int
	revs   []*revision
	// revisions are a workload's revisions (revisionRoom).
	revisions []revision
	// events are a workload's events with their times, to sort (eventRoom).
	events []datedEvent
	// lineFacts are a workload's log texts' facts (lineFacts).
	lineFacts blockRoom[lineFacts]
	// ready is the room of a workload's ready endpoints (readyRoom), cites of the log lines
	// its evidence cites (citeRoom).
	ready []readyEndpoint
	cites []lineCite
	// evidence and evidenceItems are a workload's evidence builder and its items
	// (evidenceRoom).
	evidence      evidenceBuilder
	evidenceItems blockRoom[Evidence]
	// moments is the room of a workload's timeline (timelineRoom).
	moments []TimelineEntry
	// svcRefs are the Services' references the worker has cited (serviceRef), svcSeen the
	// set of a workload's Services long enough for a map (serviceSeen).
	svcRefs map[*corev1.Service]string
	svcSeen map[*corev1.Service]bool
	signalsRoom
}

// signalsRoom is where collectSignals and the rules write a workload's signals.
type signalsRoom struct {
	// hits and groupOf are the log lines collectSignals reads and their signals (logRoom);
	// lines the same lines by signal.
	hits    []logHit
	groupOf []int32
	lines   []logHit
	sigs    blockRoom[signal]
	cellOf  map[string]int32
	cells   []tokenCell
	// ordObs and ordCnt are the places of the signals' lines (citations).
	ordObs, ordCnt []int32
}

// blockRoom hands out values from blocks that are never grown, so a value stays where it is
// while the workload holds it (signals its rules hold, facts its observations point at,
// evidence items its builder holds), and are reused, workload after workload: no report
// keeps them.
type blockRoom[T any] struct {
	blocks [][]T
	b, n   int
}

// put returns a pointer to a copy of v; a new block holds size values.
func (r *blockRoom[T]) put(v T, size int) *T {
	if r.b == len(r.blocks) {
		r.blocks = append(r.blocks, make([]T, size))
	}
	p := &r.blocks[r.b][r.n]
	*p = v
	if r.n++; r.n == len(r.blocks[r.b]) {
		r.b, r.n = r.b+1, 0
	}
	return p
}

// free makes every value free for the next workload.
func (r *blockRoom[T]) free() { r.b, r.n = 0, 0 }

// reset makes the room's values free for the next workload; its lists are emptied as they are
// taken.
func (c *textCache) reset() {
	if c != nil {
		c.sigs.free()
		c.nFlags = 0
		c.lineFacts.free()
	}
}

// newLineFacts returns new facts of a text, in the worker's room.
func (c *textCache) newLineFacts(tf *facts.Reading) *lineFacts {
	return c.lineFacts.put(lineFacts{Reading: tf}, 256)
}

// flagRoom returns n flags, all false, the worker's own when it has a cache: each call of a
// workload has flags of its own.
func (c *textCache) flagRoom(n int) []bool {
	if c == nil {
		return make([]bool, n)
	}
	if len(c.flags)-c.nFlags < n {
		// The lists handed out before keep the old block until the next workload.
		c.flags, c.nFlags = make([]bool, max(4*n, 256)), 0
	}
	out := c.flags[c.nFlags : c.nFlags+n : c.nFlags+n]
	c.nFlags += n
	clear(out)
	return out
}

// timelineRoom returns an empty list with room for n moments, the worker's own when it has a
// cache.
func (c *textCache) timelineRoom(n int) []TimelineEntry {
	if c == nil {
		return make([]TimelineEntry, 0, n)
	}
	if cap(c.moments) < n {
		c.moments = make([]TimelineEntry, 0, n)
	}
	return c.moments[:0]
}

// readyRoom returns an empty list of ready endpoints, the worker's own when it has a cache;
// keepReadyRoom keeps what it grew to for the next workload.
func (c *textCache) readyRoom() []readyEndpoint {
	if c == nil {
		return nil
	}
	return c.ready[:0]
}

func (c *textCache) keepReadyRoom(r []readyEndpoint) {
	if c != nil {
		c.ready = r[:0]
	}
}

// citeRoom returns an empty list of log lines cited, the worker's own when it has a cache;
// keepCiteRoom keeps what it grew to for the next workload.
func (c *textCache) citeRoom() []lineCite {
	if c == nil {
		return nil
	}
	return c.cites[:0]
}

func (c *textCache) keepCiteRoom(l []lineCite) {
	if c != nil {
		clear(l)
		c.cites = l[:0]
	}
}

// evidenceRoom returns an empty evidence builder, the worker's own when it has a cache: its
// lists and items are the last workload's, emptied.
func (c *textCache) evidenceRoom() *evidenceBuilder {
	if c == nil {
		return newEvidence()
	}
	b := &c.evidence
	clear(b.vals)
	*b = evidenceBuilder{keys: b.keys[:0], vals: b.vals[:0], order: b.order[:0], items: &c.evidenceItems}
	c.evidenceItems.free()
	return b
}

// sized returns n values of room, the first n of *room, which is made anew when it holds
// fewer; the values are as the last workload left them.
func sized[T any](room *[]T, n int) []T {
	if cap(*room) < n {
		*room = make([]T, n)
	}
	return (*room)[:n]
}

// revisionRoom returns n revisions to write, the worker's own when it has a cache: a
// workload's revisions are read anew for each (collectDeployment), and nothing keeps them.
func (c *textCache) revisionRoom(n int) []revision {
	if c == nil {
		return make([]revision, n)
	}
	return sized(&c.revisions, n)
}

// eventRoom returns room for n dated events, the worker's own when it has a cache.
func (c *textCache) eventRoom(n int) []datedEvent {
	if c == nil {
		return make([]datedEvent, n)
	}
	return sized(&c.events, n)
}

// revRoom returns room for n copies' revisions, the worker's own when it has a cache.
func (c *textCache) revRoom(n int) []*revision {
	if c == nil {
		return make([]*revision, n)
	}
	return sized(&c.revs, n)
}

// signal returns a pointer to a copy of s, in the worker's room when it has a cache.
func (c *textCache) signal(s signal) *signal {
	if c == nil {
		p := new(signal)
		*p = s
		return p
	}
	return c.sigs.put(s, 64)
}

// hitRoom returns n log lines to write, the worker's own when it has a cache.
func (c *textCache) hitRoom(n int) []logHit {
	if c == nil {
		return make([]logHit, n)
	}
	if cap(c.lines) < n {
		c.lines = make([]logHit, n)
	}
	return c.lines[:n]
}

// cellIndex returns an empty map from a text to its token cell, the worker's own when it has
// a cache.
func (c *textCache) cellIndex(n int) map[string]int32 {
	if c == nil {
		return make(map[string]int32, n)
	}
	// Clearing a map costs its size: one a workload of thousands of texts grew is let go.
	if c.cellOf == nil || len(c.cellOf) > 512 {
		c.cellOf = make(map[string]int32, n)
	}
	clear(c.cellOf)
	return c.cellOf
}

// lineIndex returns an empty map from a log text to its facts, the worker's own when it has
// a cache.
func (c *textCache) lineIndex() map[string]*lineFacts {
	if c == nil {
		return map[string]*lineFacts{}
	}
	// As cellIndex: a map grown past a few hundred texts is let go rather than cleared.
	if c.texts == nil || len(c.texts) > 512 {
		c.texts = map[string]*lineFacts{}
	}
	clear(c.texts)
	return c.texts
}

// ordRoom returns two zeroed lists of n places, the worker's own when it has a cache.
func (c *textCache) ordRoom(n int) ([]int32, []int32) {
	if c == nil {
		return make([]int32, n), make([]int32, n)
	}
	if cap(c.ordObs) < n {
		c.ordObs, c.ordCnt = make([]int32, n), make([]int32, n)
	}
	obs, cnt := c.ordObs[:n], c.ordCnt[:n]
	clear(obs)
	clear(cnt)
	return obs, cnt
}

// cellRoom returns n zeroed token cells, the worker's own when it has a cache.
func (c *textCache) cellRoom(n int) []tokenCell {
	if c == nil {
		return make([]tokenCell, n)
	}
	if cap(c.cells) < n {
		c.cells = make([]tokenCell, n)
	}
	cells := c.cells[:n]
	clear(cells)
	return cells
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

// noteRoom returns n nil notes with room for capacity, the worker's own when it has a cache.
func (c *textCache) noteRoom(n, capacity int) []*lineFacts {
	if c == nil {
		return make([]*lineFacts, n, capacity)
	}
	if cap(c.notes) < capacity {
		c.notes = make([]*lineFacts, capacity)
	}
	out := c.notes[:n:capacity]
	clear(out)
	return out
}

// observations returns the workload's empty observations, the worker's own when it has a
// cache: the report keeps their head's source and tails, not them.
func (c *textCache) observations(w *workload) *observations {
	if c == nil {
		return &observations{w: w}
	}
	c.obsOf = observations{w: w}
	return &c.obsOf
}

// byPodRoom returns n copies' ranges to write, the worker's own when it has a cache.
func (c *textCache) byPodRoom(n int) []obsRange {
	if c == nil {
		return make([]obsRange, n)
	}
	if cap(c.byPod) < n {
		c.byPod = make([]obsRange, n)
	}
	return c.byPod[:n]
}

// gapFinder returns a gap finder with no gaps and a ranker to fill, the worker's own when it
// has a cache.
func (c *textCache) gapFinder() *gapFinder {
	if c == nil {
		return &gapFinder{ranker: new(ranker)}
	}
	c.gapFind = gapFinder{ranker: &c.gaps}
	return &c.gapFind
}

// rankRoom returns the ranker of a workload's suspects, the worker's own when it has a cache:
// the ranker lives while rankSuspects runs, and its suspects are copied out.
func (c *textCache) rankRoom() *ranker {
	if c == nil {
		return new(ranker)
	}
	return &c.rank
}

// copyRoom returns n copies for the rules to read, the worker's own when it has a cache.
func (c *textCache) copyRoom(n int) []rules.Copy {
	if c == nil || cap(c.copies) < n {
		s := make([]rules.Copy, n)
		if c != nil {
			c.copies = s
		}
		return s
	}
	return c.copies[:n]
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
	return sized(&c.facts, n)
}

// lifeRoom returns room for n copies' lifecycles and an empty list for their containers,
// the worker's own when it has a cache. Each is written whole (readLives) before it is read.
func (c *textCache) lifeRoom(n int) ([]facts.Copy, []facts.Container) {
	if c == nil {
		return make([]facts.Copy, n), nil
	}
	return sized(&c.lives, n), c.lifeContainers[:0]
}

// keepContainers keeps the list readLives grew, for the next workload.
func (c *textCache) keepContainers(room []facts.Container) {
	if c != nil && cap(room) > cap(c.lifeContainers) {
		c.lifeContainers = room
	}
}

// copyRefs returns room for n pointers to a workload's copy facts, the worker's own when it
// has a cache: the list lives as long as the facts it points into (copyFacts).
func (c *textCache) copyRefs(n int) []*copyFacts {
	if c == nil {
		return make([]*copyFacts, n)
	}
	return sized(&c.factRefs, n)
}

// get returns the reading of text, a new one the first time.
func (c *textCache) get(text string) *facts.Reading {
	if c == nil {
		return &facts.Reading{}
	}
	if f := c.m[text]; f != nil {
		return f
	}
	if c.m == nil || len(c.m) >= maxCachedTexts {
		c.m = make(map[string]*facts.Reading, 256)
	}
	f := &facts.Reading{}
	c.m[text] = f
	return f
}

// serviceRef returns "Service/<name>" of svc, made once by the worker: the Services of a
// namespace are cited by many of its workloads (a hundred each in a namespace whose Services
// all select all its copies), in items the reports keep.
func (c *textCache) serviceRef(svc *corev1.Service) string {
	if c == nil {
		return "Service/" + svc.Name
	}
	if ref, ok := c.svcRefs[svc]; ok {
		return ref
	}
	if c.svcRefs == nil {
		c.svcRefs = map[*corev1.Service]string{}
	}
	ref := "Service/" + svc.Name
	c.svcRefs[svc] = ref
	return ref
}

// serviceSeen returns the worker's set of Services, emptied, for the one serviceSet at a time
// that outgrows its list; without a cache, a set of its own.
func (c *textCache) serviceSeen() map[*corev1.Service]bool {
	if c == nil {
		return map[*corev1.Service]bool{}
	}
	if c.svcSeen == nil {
		c.svcSeen = map[*corev1.Service]bool{}
	} else {
		clear(c.svcSeen)
	}
	return c.svcSeen
}

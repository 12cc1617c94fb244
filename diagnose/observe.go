package diagnose

import (
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Read each fact once. Every pod status and condition, container state, controller condition,
// event, revision and log line of a workload becomes one typed, dated Observation in one list,
// read in one pass (observe). Classification, evidence, the suspect rules, the onset and the
// timeline read that list instead of the objects, so the evidence a front end shows is what
// ranked the suspects, and two readers of one field cannot drift apart.

// observations is a workload's list with its indexes.
type observations struct {
	list []Observation
	// src is what observe wrote list from, before any log line; read the tails read into
	// list after it, in order: what the report keeps (obsLog).
	src  *obsHead
	read []logTail
	// byPod[i] is the range of workload.Pods[i]'s status observations in list.
	byPod []obsRange
	// logs[i] is the range of workload.Pods[i]'s log lines, once read; tails[i] the range of
	// each of its tails in the order collected.
	logs  []obsRange
	tails [][]obsRange
	// events is the range of the events, ctrl of the controller conditions.
	events, ctrl obsRange
	// lines holds what is read of each distinct log text once per workload; lfs[k] is
	// list[k]'s, from the first log line on (nil for the facts before it).
	lines map[string]*lineFacts
	lfs   []*lineFacts
	// lineBlock is where newLineFacts takes the facts from; full blocks are replaced, never grown.
	lineBlock []lineFacts
	// prevLines and prevFacts are the last tail read and its lines' facts: the copies of a
	// workload log the same lines in the same order, and comparing a line with its sibling's
	// is cheaper than looking it up.
	prevLines []string
	prevFacts []*lineFacts
	// tailMark and sigCall number the tails and the calls of collectSignals (lineFacts).
	tailMark, sigCall int32
	// podIndex maps a pod name to its index in workload.Pods; logsByPod its log tails.
	podIndex  map[string]int32
	logsByPod map[string][]*snapshot.ContainerLog
	// refs holds the objects the observations point at; self is the workload.
	refs []ObjectRef
	self *ObjectRef
	w    *workload
}

// ref returns a new object reference; refs is pre-sized, and a full one is replaced, never
// grown, so earlier references stay where they are.
func (o *observations) ref(kind, name string, uid types.UID) *ObjectRef {
	if len(o.refs) == cap(o.refs) {
		o.refs = make([]ObjectRef, 0, 16)
	}
	o.refs = append(o.refs, ObjectRef{Kind: kind, Name: name, UID: uid})
	return &o.refs[len(o.refs)-1]
}

type obsRange struct {
	from, to int32
	read     bool
}

// lineFacts is what a log text says (its textFacts, which workloads share) and what the
// workload made of it.
type lineFacts struct {
	*facts.Reading
	// logItem is the item of builder logOwner the text counts toward (logEvidence).
	logItem  *Evidence
	logOwner *evidenceBuilder
	// tailMark is the tail collectSignals last took the text from; group the index of its
	// last log signal in collectSignals call groupCall.
	tailMark, group, groupCall int32
}

// observe reads the workload's copies, events, controller conditions and revisions into its
// observation list. Log lines are read per copy when first asked for (logLines): a healthy
// workload's tails are never read, and a line is still read once.
func (w *workload) observe() *observations {
	if w.obs != nil {
		return w.obs
	}
	o := w.texts.observations(w)
	h := newObsHead(w)
	o.src = h
	// The list is the worker's room: the report keeps h and the tails, not the list, and a
	// list of every copy's statuses was a third of the bytes a diagnosis allocated.
	o.list = w.texts.obsRoom(h.len())
	h.write(o, w.texts.refRoom(h.refs()))
	w.obs = o
	return o
}

// obsHead is what observe reads to write a workload's list up to its first log line: the
// report keeps it instead of the list (a few hundred bytes against an observation of 120 per
// status, condition and event), and Detail.Observations writes the same list out of it again.
type obsHead struct {
	kind, name string
	uid        types.UID
	object     any
	pods       []*corev1.Pod
	// podRevision[i] is the number of pods[i]'s revision, 0 when it has none.
	podRevision []int64
	events      []*corev1.Event
	replicaSets []*appsv1.ReplicaSet
	revisions   []obsRevision
	// ctl is the workload's controller record (workload.controller), a copy so that the
	// report does not keep the workload; zero for the batch kinds, whose conditions are their
	// runs' verdict, which the batch evidence reads.
	ctl facts.Controller
}

// obsRevision is what the list records of a revision.
type obsRevision struct {
	number  int64
	created time.Time
	rs      *appsv1.ReplicaSet
}

// newObsHead takes what observe reads of w. The slices are w's own: collect makes them anew
// for every workload, and nothing writes them after.
func newObsHead(w *workload) *obsHead {
	h := &obsHead{
		kind: w.Kind, name: w.Name, uid: w.UID, object: w.Object,
		pods: w.Pods, events: w.Events, replicaSets: w.ReplicaSets,
	}
	if k := kinds.Of(w.Object); k != nil && !k.Batch {
		h.ctl = *w.controller()
	}
	if len(w.Pods) > 0 {
		h.podRevision = make([]int64, len(w.Pods))
		for i, r := range w.cls.revAt {
			if r != nil {
				h.podRevision[i] = r.Number
			}
		}
	}
	if len(w.cls.Revisions) > 0 {
		h.revisions = make([]obsRevision, len(w.cls.Revisions))
		for i, rev := range w.cls.Revisions {
			h.revisions[i] = obsRevision{number: rev.Number, created: rev.Created, rs: rev.ReplicaSet}
		}
	}
	return h
}

// len is the exact count of the observations write appends: the list is taken once, so room
// to spare costs.
func (h *obsHead) len() int {
	n := len(h.events) + len(h.revisions) + h.controllerConditions()
	for _, p := range h.pods {
		n += facts.PodFactCount(p)
	}
	return n
}

// refs is how many object references write takes: one for each copy, event, ReplicaSet and
// revision, and the workload's.
func (h *obsHead) refs() int {
	return len(h.pods) + len(h.events) + len(h.replicaSets) + len(h.revisions) + 1
}

// write appends the copies', events', controller conditions' and revisions' observations to
// o.list, in that order, and sets o's ranges of them; refs is the room for the objects they
// point at.
func (h *obsHead) write(o *observations, refs []ObjectRef) {
	o.refs = refs
	o.self = o.ref(h.kind, h.name, h.uid)
	var room *textCache // none when a report writes its list out again
	if o.w != nil {
		room = o.w.texts
	}
	o.byPod = room.byPodRoom(len(h.pods))
	for i, p := range h.pods {
		from := int32(len(o.list))
		o.observePod(p, h.podRevision[i])
		o.byPod[i] = obsRange{from: from, to: int32(len(o.list)), read: true}
	}
	o.events.from = int32(len(o.list))
	for _, e := range h.events {
		o.list = append(o.list, Observation{
			Kind: ObsEvent, Count: eventCount(e),
			Object: o.ref(e.InvolvedObject.Kind, e.InvolvedObject.Name, e.InvolvedObject.UID),
			Name:   containerOfFieldPath(e.InvolvedObject.FieldPath),
			Status: e.Type, Reason: e.Reason, Text: e.Message,
		})
		o.timeLast(eventTime(e), eventFirst(e))
	}
	o.events.to = int32(len(o.list))
	o.ctrl.from = int32(len(o.list))
	o.observeController(h)
	o.ctrl.to = int32(len(o.list))
	for _, rev := range h.revisions {
		obj := o.ref(h.kind, h.name, h.uid)
		if rev.rs != nil {
			obj = o.ref("ReplicaSet", rev.rs.Name, rev.rs.UID)
		}
		obj.Revision = rev.number
		o.list = append(o.list, Observation{Kind: ObsRevisionCreated, Object: obj})
		o.timeLast(rev.created, time.Time{})
	}
}

// list writes the observations out again, as write wrote them for the engine.
func (h *obsHead) list() []Observation {
	n := h.len()
	if n == 0 {
		return nil
	}
	o := &observations{list: make([]Observation, 0, n)}
	h.write(o, make([]ObjectRef, 0, h.refs()))
	return o.list
}

func (o *observations) observePod(p *corev1.Pod, revision int64) {
	obj := o.ref("Pod", p.Name, p.UID)
	obj.Revision = revision
	o.list = facts.AppendPod(o.list, p, obj)
}

// controllerConditions counts the conditions observeController writes.
func (h *obsHead) controllerConditions() int {
	n := len(h.ctl.Conditions)
	for _, rs := range h.replicaSets {
		if rs != h.object {
			n += kinds.ReplicaSet.ConditionCount(rs)
		}
	}
	return n
}

// observeController writes the conditions of the workload (its controller record) and of
// its ReplicaSets, each read as the workload's is.
func (o *observations) observeController(h *obsHead) {
	o.list = facts.AppendController(o.list, &h.ctl, o.self)
	for _, rs := range h.replicaSets {
		if rs == h.object || kinds.ReplicaSet.ConditionCount(rs) == 0 {
			continue
		}
		ctl := facts.ReadController(rs)
		o.list = facts.AppendController(o.list, &ctl, o.ref("ReplicaSet", rs.Name, rs.UID))
	}
}

// pod returns the status observations of workload.Pods[i].
func (o *observations) pod(i int) []Observation {
	r := o.byPod[i]
	return o.list[r.from:r.to]
}

// podObservations returns the status observations of the copy named name; none for a name
// that is not one of the workload's copies.
func (o *observations) podObservations(name string) []Observation {
	if i := o.podOf(name); i >= 0 {
		return o.pod(i)
	}
	return nil
}

// eventList returns the event observations, oldest first.
func (o *observations) eventList() []Observation { return o.list[o.events.from:o.events.to] }

// logLines returns the log-line observations of workload.Pods[i], reading its tails (current
// and previous container, in the order collected) the first time they are asked for. The
// list may grow: callers index it afresh after a call.
func (o *observations) logLines(i int) (from, to int) {
	if o.logs == nil {
		// Only when a rule asks: a healthy workload's tails are never read.
		o.logs = make([]obsRange, len(o.w.Pods))
		o.tails = make([][]obsRange, len(o.w.Pods))
	}
	r := &o.logs[i]
	if !r.read {
		r.read = true
		r.from = int32(len(o.list))
		if o.logsByPod == nil {
			// Room for every tail at once: the copies whose logs are read are most often
			// all of them, and growing the list copies it.
			o.logsByPod = make(map[string][]*snapshot.ContainerLog, len(o.w.Pods))
			lines, tails := 0, 0
			for _, l := range o.w.Logs {
				if l != nil {
					o.logsByPod[l.Pod] = append(o.logsByPod[l.Pod], l)
					lines += len(l.Lines)
					tails++
				}
			}
			// The report keeps the tails read: at their count, not grown one doubling at a time.
			o.read = make([]logTail, 0, tails)
			// The worker's room (observe took it already, unless o is a report's): the
			// report keeps the head's source and the tails, not this list.
			o.list = append(o.w.texts.obsRoom(len(o.list)+lines), o.list...)
			// The notes on the lines' texts run beside the list, in a room of their own.
			o.lfs = o.w.texts.noteRoom(len(o.list), cap(o.list))
		}
		p := o.w.Pods[i]
		for _, l := range o.logsByPod[p.Name] {
			from := int32(len(o.list))
			o.observeLog(int32(i), l)
			o.tails[i] = append(o.tails[i], obsRange{from: from, to: int32(len(o.list)), read: true})
		}
		r.to = int32(len(o.list))
	}
	return int(r.from), int(r.to)
}

func (o *observations) observeLog(i int32, l *snapshot.ContainerLog) {
	if o.lines == nil {
		o.lines = o.w.texts.lineIndex()
	}
	obj := o.list[o.byPod[i].from].Object
	o.read = append(o.read, logTail{obj: *obj, container: l.Container, previous: l.Previous, lines: l.Lines})
	base := len(o.list)
	o.list = slices.Grow(o.list, len(l.Lines))[:base+len(l.Lines)]
	// The engine's notes on each line's text (lfs) run beside the list, from its first log line.
	if len(o.lfs) < base {
		o.lfs = append(o.lfs, make([]*lineFacts, base-len(o.lfs))...)
	}
	o.lfs = o.lfs[:base]
	prev, prevFacts := o.prevLines, o.prevFacts
	// The facts are written over the previous tail's, each after it was read.
	facts := prevFacts
	if cap(facts) < len(l.Lines) {
		facts = make([]*lineFacts, len(l.Lines))
	}
	facts = facts[:len(l.Lines)]
	for k, line := range l.Lines {
		var lf *lineFacts
		if k < len(prev) && prev[k] == line {
			lf = prevFacts[k]
		} else if lf = o.lines[line]; lf == nil {
			lf = o.newLineFacts(o.w.texts.get(line))
			o.lines[line] = lf
		}
		facts[k] = lf
		at := lf.Time(line)
		o.list[base+k] = Observation{Kind: ObsLogLine, Object: obj, Name: l.Container, Last: l.Previous, Text: line, At: at, Reading: lf.Reading}
		o.lfs = append(o.lfs, lf)
	}
	o.prevLines, o.prevFacts = l.Lines, facts
}

// logTail is a tail read into a workload's list: its copy and the container's lines.
type logTail struct {
	// obj is a copy: the list's references are the worker's room.
	obj       ObjectRef
	container string
	previous  bool
	lines     []string
}

// obsLog is the observation list a report keeps: the source of its head, then each tail's
// lines, written out only when asked for (Detail.Observations) as observe and observeLog wrote
// them and settle left them.
type obsLog struct {
	head  *obsHead
	tails []logTail
	// kept is the list as the engine read it, kept only under keepObservationLists.
	kept []Observation
}

// report returns what the report keeps of the list.
func (o *observations) report() obsLog {
	if keepObservationLists {
		// The list and the objects it points at are the worker's room: copy both.
		kept := append([]Observation(nil), o.list...)
		objs := map[*ObjectRef]*ObjectRef{}
		for i := range kept {
			if p := kept[i].Object; p != nil {
				if objs[p] == nil {
					c := *p
					objs[p] = &c
				}
				kept[i].Object = objs[p]
			}
		}
		return obsLog{kept: kept}
	}
	return obsLog{head: o.src, tails: o.read}
}

// keepObservationLists makes report keep the list the engine read, log lines and all:
// TestLazyLogLinesAsList compares what Observations writes out with it. Set only by that
// test, which runs alone.
var keepObservationLists bool

func (l obsLog) list() []Observation {
	if l.head == nil {
		return l.kept
	}
	out := l.head.list()
	n := len(out)
	if len(l.tails) == 0 {
		return out
	}
	for _, t := range l.tails {
		n += len(t.lines)
	}
	out = slices.Grow(out, n-len(out))
	for i := range l.tails {
		t := &l.tails[i]
		for _, line := range t.lines {
			at, _ := facts.LineTime(line)
			out = append(out, Observation{Kind: ObsLogLine, Object: &t.obj, Name: t.container, Last: t.previous, Text: line, At: at})
		}
	}
	return out
}

// newLineFacts returns new facts of a text of the workload, taken from a block: a workload's
// failing copies log hundreds of distinct texts (their times differ), one allocation each.
func (o *observations) newLineFacts(tf *facts.Reading) *lineFacts {
	if c := o.w.texts; c != nil {
		return c.newLineFacts(tf)
	}
	if len(o.lineBlock) == cap(o.lineBlock) {
		o.lineBlock = make([]lineFacts, 0, 32)
	}
	o.lineBlock = append(o.lineBlock, lineFacts{Reading: tf})
	return &o.lineBlock[len(o.lineBlock)-1]
}

// settle lets go of what the diagnosis read of each log text once it is done: the report
// keeps the observations, not the worker's cache (whose facts other workloads fill on), so
// a diagnosis holds the same whichever workloads shared the worker.
func (o *observations) settle() {
	// Only log lines have facts, and only copies whose tails were read have lines.
	for _, r := range o.logs {
		for k := r.from; k < r.to; k++ {
			o.list[k].Reading = nil
		}
	}
	clear(o.lfs)
	o.lfs = o.lfs[:0]
	o.prevLines, o.prevFacts = nil, nil
}

// tailsOf returns the ranges of copy i's log tails, reading them first.
func (o *observations) tailsOf(i int) []obsRange {
	o.logLines(i)
	return o.tails[i]
}

// lineAt returns the engine's notes on list[k]'s text, nil for a fact that is no log line.
func (o *observations) lineAt(k int) *lineFacts {
	if k < len(o.lfs) {
		return o.lfs[k]
	}
	return nil
}

// podOf returns the index of the copy named name in workload.Pods, or -1.
func (o *observations) podOf(name string) int {
	if o.podIndex == nil {
		o.podIndex = make(map[string]int32, len(o.w.Pods))
		for i, p := range o.w.Pods {
			if _, dup := o.podIndex[p.Name]; !dup {
				o.podIndex[p.Name] = int32(i)
			}
		}
	}
	if i, ok := o.podIndex[name]; ok {
		return int(i)
	}
	return -1
}

// timeLast sets the times of the observation appended last: appended as a literal and timed
// in place, an observation is written once.
func (o *observations) timeLast(at, since time.Time) {
	ob := &o.list[len(o.list)-1]
	ob.At, ob.Since = at, since
}

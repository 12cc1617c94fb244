package diagnose

import (
	"strconv"
	"sync"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ObservationKind names what an observation records.
type ObservationKind uint8

// The observation kinds.
const (
	// ObsPodCreated: a copy was created (At).
	ObsPodCreated ObservationKind = iota + 1
	// ObsPodDeleted: a copy is terminating (At is its deletionTimestamp).
	ObsPodDeleted
	// ObsReadyChanged: a copy's Ready condition last changed to Status at At.
	ObsReadyChanged
	// ObsConditionChanged: another condition of a copy (PodScheduled, Initialized...).
	ObsConditionChanged
	// ObsContainerWaiting: a container waits (Reason, Text); Count is its restart count.
	ObsContainerWaiting
	// ObsContainerRunning: a container runs since Since; Count is its restart count.
	ObsContainerRunning
	// ObsContainerTerminated: a container terminated at At after starting at Since, with
	// ExitCode, Reason and Text; Last marks the lastTerminationState, not the current state.
	ObsContainerTerminated
	// ObsControllerCondition: a condition of the workload or one of its ReplicaSets; At is its
	// last transition, Since its last update.
	ObsControllerCondition
	// ObsEvent: an event (Reason, Status is its type, Text its message); Since is when it was
	// first seen, At last, Count how often.
	ObsEvent
	// ObsLogLine: one line of a container's log tail; At is the line's own time, when it
	// carries one.
	ObsLogLine
	// ObsRevisionCreated: a revision's ReplicaSet or ControllerRevision was created.
	ObsRevisionCreated
)

var observationKindNames = [...]string{
	ObsPodCreated: "PodCreated", ObsPodDeleted: "PodDeleted", ObsReadyChanged: "ReadyChanged",
	ObsConditionChanged: "ConditionChanged", ObsContainerWaiting: "ContainerWaiting",
	ObsContainerRunning: "ContainerRunning", ObsContainerTerminated: "ContainerTerminated",
	ObsControllerCondition: "ControllerCondition", ObsEvent: "Event", ObsLogLine: "LogLine",
	ObsRevisionCreated: "RevisionCreated",
}

// String names the kind as the documentation does.
func (k ObservationKind) String() string {
	if int(k) < len(observationKindNames) && observationKindNames[k] != "" {
		return observationKindNames[k]
	}
	return "Unknown"
}

// ObjectRef names the object an observation was read from.
type ObjectRef struct {
	Kind, Name string
	UID        types.UID
	// Revision is the number of the revision a copy belongs to, or that a RevisionCreated
	// observation records (0 when unknown).
	Revision int64
}

// String is Kind/Name, as evidence names objects.
func (r ObjectRef) String() string { return r.Kind + "/" + r.Name }

// Observation is one fact of a workload with its time, read once from its object.
type Observation struct {
	Kind ObservationKind
	// Last marks a container's lastTerminationState (a log line: the previous container's
	// log); Ready a container that is Ready; Init an init container.
	Last, Ready, Init bool
	// atLoc and sinceLoc name the locations of at and since (obsLocation).
	atLoc, sinceLoc uint8
	ExitCode        int32
	// Count is an event's count, a container's restart count.
	Count int32
	// at and since are the times At and Since return (obsTimeFrom): a time.Time is 24 bytes with a pointer the garbage collector follows, and a
	// report of 100,000 copies holds about a million observations.
	atNsec, sinceNsec int32
	atSec, sinceSec   int64
	Object            *ObjectRef
	// name is what Container or Type returns, by the kind: no observation has both.
	name string
	// Status is a condition's status, an event's type, or a copy's phase (on ObsPodCreated).
	Status string
	// Reason and Text are the reason and message of a state, condition or event; Text is a
	// log line's text.
	Reason, Text string
	// line is what its text says, shared by the lines of one text.
	line *lineFacts
}

// conditionKind reports whether the kind records a condition, whose name is its type.
func (k ObservationKind) conditionKind() bool {
	return k == ObsReadyChanged || k == ObsConditionChanged || k == ObsControllerCondition
}

// Container names the container of a container state, event or log line.
func (o *Observation) Container() string {
	if o.Kind.conditionKind() {
		return ""
	}
	return o.name
}

// Type is a condition's type.
func (o *Observation) Type() string {
	if o.Kind.conditionKind() {
		return o.name
	}
	return ""
}

// At is when the fact holds or happened; zero when the object does not date it.
func (o *Observation) At() time.Time { return obsTimeOf(o.atSec, o.atNsec, o.atLoc) }

// Since is when a container started, an event was first seen, a condition last updated.
func (o *Observation) Since() time.Time { return obsTimeOf(o.sinceSec, o.sinceNsec, o.sinceLoc) }

// setAt and setSince store the times At and Since return.
func (o *Observation) setAt(t time.Time) { o.atSec, o.atNsec, o.atLoc = obsTimeFrom(t) }

func (o *Observation) setSince(t time.Time) {
	o.sinceSec, o.sinceNsec, o.sinceLoc = obsTimeFrom(t)
}

// timeLast sets the times of the observation appended last: appended as a literal and timed
// in place, an observation is written once, where passed through withTimes it was copied
// twice more (120 bytes, for every status of every copy).
func (o *observations) timeLast(at, since time.Time) {
	ob := &o.list[len(o.list)-1]
	ob.setAt(at)
	ob.setSince(since)
}

// withTimes returns ob with its times set: the literals that build observations stay literals.
func withTimes(ob Observation, at, since time.Time) Observation {
	ob.setAt(at)
	ob.setSince(since)
	return ob
}

// The location codes: 0 is UTC (and the zero time), 1 time.Local (where the API machinery
// puts every time it decodes), others are numbered as first seen.
var (
	obsLocMu   sync.RWMutex
	obsLocs    = []*time.Location{nil, time.Local}
	obsLocCode = map[*time.Location]uint8{}
)

// obsTimeFrom and obsTimeOf store a time as seconds since the zero time's, nanoseconds and a
// location code, so that the zero Observation holds zero times, and give back the same
// time.Time (monotonic readings aside: no object of a snapshot carries one).
func obsTimeFrom(t time.Time) (int64, int32, uint8) {
	return t.Unix() - zeroSec, int32(t.Nanosecond()), obsLocation(t.Location())
}

// zeroSec is the zero time.Time's seconds since 1970.
var zeroSec = time.Time{}.Unix()

func obsTimeOf(sec int64, nsec int32, loc uint8) time.Time {
	switch loc {
	case 0:
		if sec == 0 && nsec == 0 {
			return time.Time{}
		}
		return time.Unix(sec+zeroSec, int64(nsec)).UTC()
	case 1:
		return time.Unix(sec+zeroSec, int64(nsec)).In(time.Local)
	}
	obsLocMu.RLock()
	l := obsLocs[loc]
	obsLocMu.RUnlock()
	return time.Unix(sec+zeroSec, int64(nsec)).In(l)
}

// obsLocation returns the code of loc; past 255 locations a time is kept in UTC (the
// same instant).
func obsLocation(loc *time.Location) uint8 {
	switch loc {
	case time.UTC:
		return 0
	case time.Local:
		return 1
	}
	obsLocMu.RLock()
	c, ok := obsLocCode[loc]
	obsLocMu.RUnlock()
	if ok {
		return c
	}
	obsLocMu.Lock()
	defer obsLocMu.Unlock()
	if c, ok := obsLocCode[loc]; ok {
		return c
	}
	if len(obsLocs) > 255 {
		return 0
	}
	c = uint8(len(obsLocs))
	obsLocs = append(obsLocs, loc)
	obsLocCode[loc] = c
	return c
}

// terminationText words a termination as the evidence and the headline show it, with the
// exit code the runtime reported.
func (o *Observation) terminationText() string {
	s := o.Reason
	if s == "" {
		s = "terminated"
	}
	s += " (exit code " + strconv.Itoa(int(o.ExitCode)) + ")"
	if o.Text != "" {
		s += ": " + o.Text
	}
	return s
}

// logLine is a log line's text as the fact base reads it (facts.ReadLine), once per text.
func (o *Observation) logLine() *facts.Line {
	if o.line == nil {
		l := facts.ReadLine(o.Text)
		return &l
	}
	return o.line.read(o.Text)
}

// read returns the text read as a log line, reading it the first time.
func (lf *textFacts) read(text string) *facts.Line {
	if !lf.lineDone {
		lf.line, lf.lineDone = facts.ReadLine(text), true
		lf.at, lf.atDone = lf.line.At, true
	}
	return &lf.line
}

// time returns the time the text carries itself, zero when none: read alone, for every line
// read, where what the line says is read only when asked.
func (lf *textFacts) time(text string) time.Time {
	if !lf.atDone {
		lf.at, _ = facts.LineTime(text)
		lf.atDone = true
	}
	return lf.at
}

// signal is the fact base's verdict on a log line: whether it reports a failure, which one.
func (o *Observation) signal() facts.Signal { return o.logLine().Signal }

// failing reports whether a log line reports a failure.
func (o *Observation) failing() bool { return o.signal().Failing }

// dated reports whether a log line carries its own time.
func (o *Observation) dated() bool {
	if o.Kind != ObsLogLine {
		return true
	}
	return o.logLine().Dated
}

// eventFirst is when an event was first seen.
func eventFirst(e *corev1.Event) time.Time {
	if !e.FirstTimestamp.IsZero() {
		return e.FirstTimestamp.Time
	}
	return e.EventTime.Time
}

package facts

import (
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Kind names what a fact records.
type Kind uint8

// The fact kinds.
const (
	// PodCreated: a copy was created (At); Status is its phase, Reason and Text its reason
	// and message.
	PodCreated Kind = iota + 1
	// PodDeleted: a copy is terminating (At is its deletionTimestamp).
	PodDeleted
	// ReadyChanged: a copy's Ready condition last changed to Status at At.
	ReadyChanged
	// ConditionChanged: another condition of a copy (PodScheduled, Initialized...).
	ConditionChanged
	// ContainerWaiting: a container waits (Reason, Text); Count is its restart count.
	ContainerWaiting
	// ContainerRunning: a container runs since Since; Count is its restart count.
	ContainerRunning
	// ContainerTerminated: a container terminated at At after starting at Since, with
	// ExitCode, Reason and Text; Last marks the lastTerminationState, not the current state.
	ContainerTerminated
	// ControllerCondition: a condition of the workload or one of its ReplicaSets; At is its
	// last transition, Since its last update.
	ControllerCondition
	// Event: an event (Reason, Status is its type, Text its message); Since is when it was
	// first seen, At last, Count how often.
	Event
	// LogLine: one line of a container's log tail; At is the line's own time, when it
	// carries one.
	LogLine
	// RevisionCreated: a revision's ReplicaSet or ControllerRevision was created.
	RevisionCreated
)

var kindNames = [...]string{
	PodCreated: "PodCreated", PodDeleted: "PodDeleted", ReadyChanged: "ReadyChanged",
	ConditionChanged: "ConditionChanged", ContainerWaiting: "ContainerWaiting",
	ContainerRunning: "ContainerRunning", ContainerTerminated: "ContainerTerminated",
	ControllerCondition: "ControllerCondition", Event: "Event", LogLine: "LogLine",
	RevisionCreated: "RevisionCreated",
}

// String names the kind as the documentation does.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "Unknown"
}

// conditionKind reports whether the kind records a condition, whose name is its type.
func (k Kind) conditionKind() bool {
	return k == ReadyChanged || k == ConditionChanged || k == ControllerCondition
}

// Ref names the object a fact was read from.
type Ref struct {
	Kind, Name string
	UID        types.UID
	// Revision is the number of the revision a copy belongs to, or that a RevisionCreated
	// fact records (0 when unknown).
	Revision int64
}

// String is Kind/Name, as evidence names objects.
func (r Ref) String() string { return r.Kind + "/" + r.Name }

// Fact is one observation of a workload with its time, read once from its object.
type Fact struct {
	Kind Kind
	// Last marks a container's lastTerminationState (a log line: the previous container's
	// log); Ready a container that is Ready; Init an init container.
	Last, Ready, Init bool
	ExitCode          int32
	// Count is an event's count, a container's restart count.
	Count int32
	// At is when the fact holds or happened; zero when the object does not date it. Since is
	// when a container started, an event was first seen, a condition last updated.
	At, Since time.Time
	Object    *Ref
	// Name is the container of a container state, event or log line, or a condition's type.
	Name string
	// Status is a condition's status, an event's type, or a copy's phase (on PodCreated).
	Status string
	// Reason and Text are the reason and message of a state, condition or event; Text is a
	// log line's text.
	Reason, Text string
	// Reading is what a log line's text says, shared by every line of that text; nil for
	// other facts, and for a line read on its own.
	Reading *Reading
}

// Container names the container of a container state, event or log line.
func (f *Fact) Container() string {
	if f.Kind.conditionKind() {
		return ""
	}
	return f.Name
}

// Type is a condition's type.
func (f *Fact) Type() string {
	if f.Kind.conditionKind() {
		return f.Name
	}
	return ""
}

// Line is a log line's text read as a log line, once per text.
func (f *Fact) Line() *Line {
	if f.Reading == nil {
		l := ReadLine(f.Text)
		return &l
	}
	return f.Reading.Line(f.Text)
}

// Signal is the verdict on a log line: whether it reports a failure, which one.
func (f *Fact) Signal() Signal { return f.Line().Signal }

// Failing reports whether a log line reports a failure.
func (f *Fact) Failing() bool { return f.Signal().Failing }

// Dated reports whether the fact has its own time: a log line carries one or not; every
// other fact is dated by its object.
func (f *Fact) Dated() bool {
	if f.Kind != LogLine {
		return true
	}
	if f.Reading == nil {
		_, ok := LineTime(f.Text)
		return ok
	}
	return !f.Reading.Time(f.Text).IsZero()
}

// TerminationText words a termination as the evidence and the headline show it, with the
// exit code the runtime reported.
func (f *Fact) TerminationText() string {
	s := f.Reason
	if s == "" {
		s = "terminated"
	}
	s += " (exit code " + strconv.Itoa(int(f.ExitCode)) + ")"
	if f.Text != "" {
		s += ": " + f.Text
	}
	return s
}

// Reading is what one log text says, each part read when first asked and kept: the lines of
// one text share it, so a failure logged by every copy is read once.
type Reading struct {
	lineDone, atDone, valuesDone, keyDone bool
	line                                  Line
	at                                    time.Time
	values                                []Value
	key                                   string
}

// Line returns text read as a log line (ReadLine), reading it the first time.
func (r *Reading) Line(text string) *Line {
	if !r.lineDone {
		r.line, r.lineDone = ReadLine(text), true
		r.at, r.atDone = r.line.At, true
	}
	return &r.line
}

// Time returns the time the text carries itself, zero when none: read alone, where what the
// line says is read only when asked.
func (r *Reading) Time(text string) time.Time {
	if !r.atDone {
		r.at, _ = LineTime(text)
		r.atDone = true
	}
	return r.at
}

// Values returns what the text names (Values), found the first time.
func (r *Reading) Values(text string) []Value {
	if !r.valuesDone {
		r.values, r.valuesDone = Values(text), true
	}
	return r.values
}

// ValuesKey returns ValuesKey of the text's values, built the first time.
func (r *Reading) ValuesKey(text string) string {
	if !r.keyDone {
		r.key, r.keyDone = ValuesKey(r.Values(text)), true
	}
	return r.key
}

// ValuesKey identifies a set of values, so that failures naming the same things are matched
// once.
func ValuesKey(vs []Value) string {
	n := 0
	for _, v := range vs {
		n += 2 + len(v.Text) + len(v.Host) + len(v.Port) + len(v.Path) + 4
	}
	b := make([]byte, 0, n)
	for _, v := range vs {
		b = append(b, byte('0'+v.Kind))
		for _, f := range [...]string{v.Text, v.Host, v.Port, v.Path} {
			b = append(b, f...)
			b = append(b, 0)
		}
		b = append(b, 1)
	}
	return string(b)
}

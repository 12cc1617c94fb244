package diagnose

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// copyList is what Detail.Copies writes a workload's copy list from: the pods and their
// revisions (the observation list's source holds both) and a row of what the engine made of
// each. A report of 100,000 copies held a 112-byte Copy for each, and an audit or a JSON
// report never reads one; a row is 12 bytes. The phase, reason and message a row shows are
// the pod's own words, read from the pod as the row is written out: the row would grow by
// three strings for what most reports never show.
type copyList struct {
	// given is the list as a report put together by hand set it (WithCopies).
	given []Copy
	pods  []*corev1.Pod
	// revision[i] is pods[i]'s revision number, when rows[i].hasRevision.
	revision []int64
	rows     []copyRow
	// notes holds the reasons and messages the engine wrote for copies it read a fault or a
	// restart of.
	notes   []copyNote
	ref     time.Time
	current string
}

// copyRow is the engine's reading of one copy: the case its reason comes from and the flags
// that are not the pod's own.
type copyRow struct {
	what           copyCase
	ready, serving bool
	hasRevision    bool
	note           int32
	// restarts is the copy's restart count (facts.Copy.Restarts).
	restarts int32
}

type copyNote struct{ reason, message string }

// copyCase is the reason a copy shows, in the order they take precedence.
type copyCase uint8

const (
	copyTerminating copyCase = iota
	// copyNoted: a fault the engine read (never starts, dies), in notes.
	copyNoted
	copyInactive
	copyNotReady
	// copyConnectFailing: Ready and routed to, but its log keeps failing to reach an
	// endpoint its env names (findDialLoop), in notes.
	copyConnectFailing
	copyNotAnEndpoint
	copyPhase
	copyReady
	// copyRestarted: Ready, with the last restart in notes.
	copyRestarted
)

// Copies lists the workload's pods, worst first. The list is written out on each call from
// what the report keeps (copyList).
func (d *Detail) Copies() []Copy {
	l := &d.copies
	if l.given != nil {
		return l.given
	}
	if len(l.rows) == 0 {
		return nil
	}
	out := make([]Copy, len(l.rows))
	for i := range l.rows {
		out[i] = l.copy(i)
	}
	sortCopies(out, l.current)
	return out
}

// WithCopies sets the copy list Copies returns to cs, as given, and returns d: for a report
// put together by hand.
func (d *Detail) WithCopies(cs []Copy) *Detail {
	d.copies = copyList{given: cs}
	return d
}

// newCopyList reads each copy's case from its facts; the texts of faults and restarts are
// written now, while the observations they come from are at hand.
func newCopyList(w *workload, ref time.Time) copyList {
	l := copyList{ref: ref, current: w.CurrentRevision}
	if len(w.cls.copies) == 0 {
		return l
	}
	h := w.observe().src
	l.pods, l.revision = h.pods, h.podRevision
	l.rows = make([]copyRow, len(w.cls.copies))
	for i, f := range w.cls.copies {
		r := copyRow{ready: f.Ready, serving: f.Serving, hasRevision: f.Rev != nil, note: -1, restarts: f.Life.Restarts}
		p := f.Pod
		switch {
		case p.DeletionTimestamp != nil:
			r.what = copyTerminating
		case f.NeverStarts != "":
			r.what = copyNoted
			r.note = l.note(f.NeverStarts, withContainer(f.Container, f.Message))
		case f.Dies != "":
			r.what = copyNoted
			r.note = l.note(f.Dies, withContainer(f.Container, f.Message))
		case !f.Active:
			r.what = copyInactive
		case f.Running && !f.Ready:
			r.what = copyNotReady
			r.note = l.note("NotReady", f.Life.ReadyCondition.Message)
		case f.Ready && f.Dialing != nil:
			r.what = copyConnectFailing
			r.note = l.note("ConnectFailing", "Ready, but "+f.Dialing.detail())
		case f.Ready && !f.Serving:
			r.what = copyNotAnEndpoint
		case !f.Ready:
			r.what = copyPhase
		case f.LastTerminated != nil:
			r.what = copyRestarted
			since := f.Age - f.LastTerminated.At.Sub(p.CreationTimestamp.Time)
			r.note = l.note("Ready", fmt.Sprintf("last restart %s ago: %s", humanDuration(since), f.LastTerminated.TerminationText()))
		default:
			r.what = copyReady
		}
		l.rows[i] = r
	}
	return l
}

func (l *copyList) note(reason, message string) int32 {
	l.notes = append(l.notes, copyNote{reason, message})
	return int32(len(l.notes) - 1)
}

// copy writes copy i as a person reads it.
func (l *copyList) copy(i int) Copy {
	p, r := l.pods[i], &l.rows[i]
	c := Copy{
		Name: p.Name, Phase: string(p.Status.Phase), Ready: r.ready, Serving: r.serving,
		Restarts: r.restarts, Node: p.Spec.NodeName,
	}
	if !p.CreationTimestamp.IsZero() {
		age := int64(l.ref.Sub(p.CreationTimestamp.Time) / time.Second)
		c.AgeSeconds = &age
	}
	if r.hasRevision {
		c.Revision = strconv.FormatInt(l.revision[i], 10)
	}
	switch r.what {
	case copyTerminating:
		c.Reason = "Terminating"
	case copyNoted, copyRestarted, copyConnectFailing, copyNotReady:
		n := l.notes[r.note]
		c.Reason, c.Message = n.reason, n.message
	case copyInactive:
		c.Reason, c.Message = p.Status.Reason, p.Status.Message
		if c.Reason == "" {
			c.Reason = string(p.Status.Phase)
		}
	case copyNotAnEndpoint:
		c.Reason, c.Message = "NotAnEndpoint", "Ready, but no Service meant for the workload has it as a ready endpoint"
	case copyPhase:
		c.Reason = string(p.Status.Phase)
	case copyReady:
		c.Reason = "Ready"
	}
	return c
}

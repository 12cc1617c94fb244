package rules

import "github.com/kubediagnose/kubectl-diagnose/diagnose/facts"

// Signal is one failure message the suspect rules read: a waiting or terminated container
// state, an unschedulable condition, a Warning event, or a failing log line.
type Signal struct {
	// Reason is the state or event reason (ErrImagePull, FailedMount, OOMKilled...); empty for
	// log lines.
	Reason string
	Text   string
	// From says where the signal was read.
	From SignalSource
	// Pod and Container name where the signal came from, when known.
	Pod, Container string
	// ExitCode of a terminated state.
	ExitCode int32
	// Obs is the index of the observation the signal was read from, -1 for the controller's
	// ReplicaFailure message (several observations may carry it).
	Obs int
	// Explained is set by a specific rule that accounted for the signal, so the general rule
	// does not also turn it into weaker suspects.
	Explained bool
	// Cell caches facts.Values(Text). Signals with the same text share one cell, so each
	// distinct message is tokenized once per workload.
	Cell *TokenCell
	// Ord is the signal's place among the workload's signals had each log line been one.
	Ord int32
	// Lines are a log signal's lines, its own (Pod, Obs) first; nil for other signals.
	Lines []LogHit
}

// SignalSource says where a signal was read.
type SignalSource uint8

// The places a signal is read from.
const (
	FromPodStatus SignalSource = iota + 1
	FromEvent
	FromLog
	// FromController is a controller's status: its ReplicaFailure condition.
	FromController
)

// String names the source as the report's evidence does.
func (f SignalSource) String() string {
	switch f {
	case FromPodStatus:
		return "pod-status"
	case FromEvent:
		return "event"
	case FromLog:
		return "log"
	case FromController:
		return "controller-status"
	}
	return ""
}

// LogHit is one line of a log signal: the copy (index in Input.Pods) that logged it, the
// observation it was read from, and its place (Ord) among a signal per line.
type LogHit struct{ Copy, Obs, Ord int32 }

// TokenCell holds the reading of one message text, shared by the signals of that text: its
// values (what it names) and their key are found once per worker.
type TokenCell struct {
	Text *facts.Reading
}

// TokensKey returns the key of the signal's values, building it once per distinct text.
func (s *Signal) TokensKey() string { return s.Reading().ValuesKey(s.Text) }

// Reading is the signal's text's reading, its own when no cell holds one.
func (s *Signal) Reading() *facts.Reading {
	if s.Cell == nil {
		s.Cell = &TokenCell{}
	}
	if s.Cell.Text == nil {
		s.Cell.Text = &facts.Reading{}
	}
	return s.Cell.Text
}

// Class is the kind of failure the signal reports, as the fact base reads it: a log line
// through its reading (once per text), any other message by its words.
func (s *Signal) Class() facts.Class {
	if s.From != FromLog {
		return facts.ClassOf(s.Text)
	}
	return s.Reading().Line(s.Text).Signal.Class
}

// Tokens returns what the signal's text names, found once per text.
func (s *Signal) Tokens() []facts.Value { return s.Reading().Values(s.Text) }

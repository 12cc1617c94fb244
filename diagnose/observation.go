package diagnose

import (
	"time"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"

	corev1 "k8s.io/api/core/v1"
)

// The engine's facts are the fact base's (package facts): Observation is a facts.Fact, its
// kinds and references the fact base's own.
type (
	// Observation is one fact of a workload with its time, read once from its object.
	Observation = facts.Fact
	// ObservationKind names what an observation records.
	ObservationKind = facts.Kind
	// ObjectRef names the object an observation was read from.
	ObjectRef = facts.Ref
)

// The observation kinds, as the fact base names them.
const (
	ObsPodCreated          = facts.PodCreated
	ObsPodDeleted          = facts.PodDeleted
	ObsReadyChanged        = facts.ReadyChanged
	ObsConditionChanged    = facts.ConditionChanged
	ObsContainerWaiting    = facts.ContainerWaiting
	ObsContainerRunning    = facts.ContainerRunning
	ObsContainerTerminated = facts.ContainerTerminated
	ObsControllerCondition = facts.ControllerCondition
	ObsEvent               = facts.Event
	ObsLogLine             = facts.LogLine
	ObsRevisionCreated     = facts.RevisionCreated
)

// eventFirst is when an event was first seen.
func eventFirst(e *corev1.Event) time.Time {
	if !e.FirstTimestamp.IsZero() {
		return e.FirstTimestamp.Time
	}
	return e.EventTime.Time
}

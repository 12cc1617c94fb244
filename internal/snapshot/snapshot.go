package snapshot

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// SourceKind says where a snapshot came from.
type SourceKind string

// The kinds of source.
const (
	SourceDump SourceKind = "dump"
	SourceLive SourceKind = "live"
	SourceDemo SourceKind = "demo"
)

// SourceInfo describes the source a snapshot was read from.
type SourceInfo struct {
	Type    SourceKind `json:"type"`
	Path    string     `json:"path,omitempty"`
	Context string     `json:"context,omitempty"`
	Server  string     `json:"server,omitempty"`
	// Skipped counts objects of kinds the source does not model, by kind.
	Skipped map[string]int `json:"skipped,omitempty"`
}

// Source produces snapshots; the live cluster reader and the dump reader both implement it.
type Source interface {
	Snapshot(ctx context.Context) (*Snapshot, error)
}

// Visibility records something the source could not read, so a diagnosis can say what it did
// not see instead of presenting a partial answer as complete.
type Visibility struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Reason    string `json:"reason"`
}

// ContainerLog is the tail of one container's log.
type ContainerLog struct {
	Namespace string
	Pod       string
	Container string
	// Previous is true when the tail is of the previous, terminated instance.
	Previous bool
	Lines    []string
}

// Snapshot holds what one source read of one or more namespaces.
type Snapshot struct {
	// ReferenceTime is "now" for every age computed from this snapshot.
	ReferenceTime time.Time
	// Namespaces lists the namespaces read; empty means all namespaces.
	Namespaces []string
	Source     SourceInfo
	Visibility []Visibility

	Deployments         []*appsv1.Deployment
	StatefulSets        []*appsv1.StatefulSet
	DaemonSets          []*appsv1.DaemonSet
	ReplicaSets         []*appsv1.ReplicaSet
	ControllerRevisions []*appsv1.ControllerRevision
	Jobs                []*batchv1.Job
	CronJobs            []*batchv1.CronJob
	Pods                []*corev1.Pod
	// Events holds core/v1 events; events.k8s.io/v1 events are converted on the way in.
	Events                 []*corev1.Event
	Services               []*corev1.Service
	PersistentVolumeClaims []*corev1.PersistentVolumeClaim
	Nodes                  []*corev1.Node
	ResourceQuotas         []*corev1.ResourceQuota
	EndpointSlices         []*discoveryv1.EndpointSlice
	// PodDisruptionBudgets say how many copies a team keeps available: a workload's
	// availability floor, where one selects its copies.
	PodDisruptionBudgets []*policyv1.PodDisruptionBudget
	// PersistentVolumes are the volumes a Pending claim could bind: which of its fields none
	// satisfies. Cluster-scoped, like Nodes.
	PersistentVolumes []*corev1.PersistentVolume
	Logs              []ContainerLog
	// Metrics holds the workloads' throughput and backlog series; nil when no metrics source
	// was configured.
	Metrics *Metrics

	index *index
	// seq numbers a Tracker's snapshots, changes says what changed since its last one; both
	// are zero in a snapshot no Tracker made.
	seq     uint64
	changes *changes
}

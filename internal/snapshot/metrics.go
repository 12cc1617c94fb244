package snapshot

import (
	"encoding/json"
	"time"
)

// MetricRole says what a workload's series measures.
type MetricRole string

// The roles a query can have.
const (
	// RoleThroughput is the workload's own output per second: requests served, readings accepted.
	RoleThroughput MetricRole = "throughput"
	// RoleBacklog is work waiting for it: a queue depth or a consumer lag.
	RoleBacklog MetricRole = "backlog"
)

// QueryOrigin says where the query of a series came from.
type QueryOrigin string

// The origins, in the order a metrics source tries them.
const (
	OriginAnnotation QueryOrigin = "annotation"
	OriginConfig     QueryOrigin = "config"
	OriginDefault    QueryOrigin = "default"
)

// Metrics is what a metrics source (Prometheus, or a dump of its answers) read for the
// snapshot's workloads. A nil *Metrics means none was configured; an empty one means one was
// configured and answered nothing, which is itself a signal.
type Metrics struct {
	// Source names the server queried (its URL) or the dump the answers were replayed from.
	Source string
	Series []MetricSeries
}

// MetricSeries is one range query for one workload and its answer.
type MetricSeries struct {
	Workload ObjectKey
	Role     MetricRole
	Origin   QueryOrigin
	// Template is the query as written (annotation, config file or default list); Query is it
	// with the placeholders filled in, as sent.
	Template string
	Query    string
	Unit     string
	// Start, End and Step are the range query's parameters.
	Start, End time.Time
	Step       time.Duration
	// Result is the API's data.result as it returned it (a matrix), kept so a dump replays the
	// exact answer; Samples is it summed over its series per timestamp.
	Result  json.RawMessage
	Samples []Sample
}

// Sample is one point of a series.
type Sample struct {
	Time  time.Time
	Value float64
}

// MetricsFor returns the series of one workload and role, or nil.
func (s *Snapshot) MetricsFor(kind, namespace, name string, role MetricRole) *MetricSeries {
	if s.Metrics == nil {
		return nil
	}
	k := ObjectKey{Kind: kind, Namespace: namespace, Name: name}
	for i := range s.Metrics.Series {
		if m := &s.Metrics.Series[i]; m.Workload == k && m.Role == role {
			return m
		}
	}
	return nil
}

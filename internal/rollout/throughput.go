package rollout

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// DefaultThroughputEvery is how often MetricsThroughput asks Prometheus again: the gate steps
// every second, a scrape interval is 15 s or more.
const DefaultThroughputEvery = 10 * time.Second

// MetricsReader reads the workloads' throughput into a snapshot, as metrics.Source does.
type MetricsReader interface {
	Read(ctx context.Context, snap *snapshot.Snapshot)
	// Declares reports whether the workload names its own throughput query.
	Declares(snap *snapshot.Snapshot, w snapshot.ObjectKey) bool
}

// MetricsThroughput is a ThroughputQuery on a metrics source: the copies produce output when
// the workload's throughput series has samples since the rollout looked done and none of them
// is zero. The query is the one the source picks for the workload (its annotation, a config
// rule or the common request counters); a workload none answers for is not gated on output.
type MetricsThroughput struct {
	Source MetricsReader
	// Every, when positive, replaces DefaultThroughputEvery.
	Every time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu sync.Mutex
	// latest is the newest snapshot the gate read, which Feed keeps: the workload's
	// annotations, which name its query, are there.
	latest *snapshot.Snapshot
	last   *Output
	lastAt time.Time
	lastOf Target
	since  time.Time
}

// Feed passes the snapshots on, keeping the newest for the queries.
func (m *MetricsThroughput) Feed(in <-chan *snapshot.Snapshot) <-chan *snapshot.Snapshot {
	out := make(chan *snapshot.Snapshot)
	go func() {
		defer close(out)
		for s := range in {
			m.mu.Lock()
			m.latest = s
			m.mu.Unlock()
			out <- s
		}
	}()
	return out
}

// Output reads the workload's throughput, at most once per Every.
func (m *MetricsThroughput) Output(ctx context.Context, t Target, since time.Time) (*Output, error) {
	now := time.Now
	if m.Now != nil {
		now = m.Now
	}
	every := m.Every
	if every <= 0 {
		every = DefaultThroughputEvery
	}
	m.mu.Lock()
	base := m.latest
	if m.last != nil && m.lastOf == t && m.since.Equal(since) && now().Sub(m.lastAt) < every {
		out := *m.last
		m.mu.Unlock()
		return &out, nil
	}
	m.mu.Unlock()
	if base == nil {
		return nil, errors.New("no snapshot of the workload to read its throughput query from")
	}
	sel, err := snapshot.ParseSelector("", "metadata.name="+t.Name)
	if err != nil {
		return nil, err
	}
	snap := base.FilterNamespaces([]string{t.Namespace}).FilterWorkloads(sel)
	snap.Metrics, snap.Visibility, snap.ReferenceTime = nil, nil, now().UTC()
	m.Source.Read(ctx, snap)
	declared := m.Source.Declares(snap, snapshot.ObjectKey{Kind: t.Kind, Namespace: t.Namespace, Name: t.Name})
	out, err := judge(snap, t, since, declared)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.last, m.lastAt, m.lastOf, m.since = out, now(), t, since
	m.mu.Unlock()
	return out, nil
}

// judge reads the answer: producing when every sample since the rollout looked done is above
// zero, and there is at least one. A workload that declares its query and has no series yet
// waits for one; one that does not and matched none of the common counters is not gated.
func judge(snap *snapshot.Snapshot, t Target, since time.Time, declared bool) (*Output, error) {
	series := snap.MetricsFor(t.Kind, t.Namespace, t.Name, snapshot.RoleThroughput)
	if series == nil {
		for _, v := range snap.Visibility {
			// metrics.VisibilityKind: the server could not be read, or refused the query.
			if v.Kind == "Prometheus" {
				return nil, fmt.Errorf("read the throughput: %s", v.Reason)
			}
		}
		if declared {
			return &Output{Detail: "no throughput sample yet from its own query"}, nil
		}
		return &Output{Producing: true, Detail: "no throughput query answered for it, so output is not gated"}, nil
	}
	var n int
	var lastValue float64
	for _, s := range series.Samples {
		if s.Time.Before(since) {
			continue
		}
		n++
		lastValue = s.Value
		if s.Value <= 0 {
			return &Output{Detail: fmt.Sprintf("throughput 0 %s at %s (%s)", series.Unit, s.Time.UTC().Format(time.RFC3339), series.Query)}, nil
		}
	}
	if n == 0 {
		return &Output{Detail: fmt.Sprintf("no throughput sample yet since %s (%s)", since.UTC().Format(time.RFC3339), series.Query)}, nil
	}
	return &Output{Producing: true, Detail: strings.TrimSpace(fmt.Sprintf("producing %s %s", strconv.FormatFloat(lastValue, 'g', 3, 64), series.Unit))}, nil
}

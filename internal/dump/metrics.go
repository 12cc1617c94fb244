package dump

import (
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubediagnose/kubectl-diagnose/internal/metrics"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// MetricsFile is the file, at the top of a dump directory, that holds the metrics source's
// queries and answers.
const MetricsFile = "metrics.json"

// metricsGVK identifies the metrics document among a dump's files.
var metricsGVK = schema.GroupVersionKind{Group: "kubediagnose.dev", Version: "v1alpha1", Kind: "MetricsDump"}

// metricsDoc is the metrics file: each query as sent, its range, and its result as the
// Prometheus API returned it, so a replay reads the same numbers.
type metricsDoc struct {
	APIVersion string        `json:"apiVersion"`
	Kind       string        `json:"kind"`
	Source     string        `json:"source"`
	Queries    []metricQuery `json:"queries"`
}

type metricQuery struct {
	Workload struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"workload"`
	Role     snapshot.MetricRole  `json:"role"`
	Origin   snapshot.QueryOrigin `json:"origin"`
	Template string               `json:"template"`
	Query    string               `json:"query"`
	Unit     string               `json:"unit"`
	Start    time.Time            `json:"start"`
	End      time.Time            `json:"end"`
	Step     string               `json:"step"`
	Result   json.RawMessage      `json:"result"`
}

// metrics writes the metrics file when the snapshot was read with a metrics source.
func (w *writer) metrics(s *snapshot.Snapshot) {
	if s.Metrics == nil || w.err != nil {
		return
	}
	doc := metricsDoc{APIVersion: metricsGVK.GroupVersion().String(), Kind: metricsGVK.Kind, Source: s.Metrics.Source, Queries: []metricQuery{}}
	for _, m := range s.Metrics.Series {
		q := metricQuery{
			Role: m.Role, Origin: m.Origin, Template: m.Template, Query: m.Query, Unit: m.Unit,
			Start: m.Start.UTC(), End: m.End.UTC(), Step: m.Step.String(), Result: m.Result,
		}
		q.Workload.Kind, q.Workload.Namespace, q.Workload.Name = m.Workload.Kind, m.Workload.Namespace, m.Workload.Name
		doc.Queries = append(doc.Queries, q)
	}
	data, err := json.MarshalIndent(doc, "", "    ")
	if err != nil {
		w.fail(fmt.Errorf("write dump %s: %w", MetricsFile, err))
		return
	}
	w.file(MetricsFile, append(data, '\n'))
}

// metrics reads a metrics document back into the snapshot.
func (r *reader) metrics(raw []byte, at location) error {
	var doc metricsDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return at.errorf("%s: %w", metricsGVK.Kind, err)
	}
	if r.snap.Metrics == nil {
		r.snap.Metrics = &snapshot.Metrics{Source: doc.Source}
	}
	for i, q := range doc.Queries {
		step, err := time.ParseDuration(q.Step)
		if err != nil {
			return at.errorf("%s: queries[%d].step: %w", metricsGVK.Kind, i, err)
		}
		samples, err := metrics.Samples(q.Result)
		if err != nil {
			return at.errorf("%s: queries[%d]: %w", metricsGVK.Kind, i, err)
		}
		if q.Role != snapshot.RoleThroughput && q.Role != snapshot.RoleBacklog {
			return at.errorf("%s: queries[%d]: unknown role %q", metricsGVK.Kind, i, q.Role)
		}
		r.snap.Metrics.Series = append(r.snap.Metrics.Series, snapshot.MetricSeries{
			Workload: snapshot.ObjectKey{Kind: q.Workload.Kind, Namespace: q.Workload.Namespace, Name: q.Workload.Name},
			Role:     q.Role, Origin: q.Origin, Template: q.Template, Query: q.Query, Unit: q.Unit,
			Start: q.Start, End: q.End, Step: step, Result: q.Result, Samples: samples,
		})
	}
	return nil
}

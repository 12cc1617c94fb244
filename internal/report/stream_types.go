package report

import (
	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// The writers of the report types, member for member in the order of the structs' fields
// with their JSON tags' names and omitempty rules. A field added to a type and not here fails
// TestStreamWritesEveryField.

func streamReportList(e *jsonStream, l *ReportList) {
	e.open('{')
	e.key("apiVersion")
	e.str(l.APIVersion)
	e.key("kind")
	e.str(l.Kind)
	e.key("items")
	streamSlice(e, l.Items, func(e *jsonStream, r **diagnose.Report) { streamPtr(e, *r, streamReport) })
	e.close('}')
}

func streamReport(e *jsonStream, r *diagnose.Report) {
	e.open('{')
	e.key("apiVersion")
	e.str(r.APIVersion)
	e.key("kind")
	e.str(r.Kind)
	e.key("referenceTime")
	e.time(r.ReferenceTime)
	e.key("source")
	streamSourceInfo(e, &r.Source)
	e.key("visibility")
	streamSlice(e, r.Visibility, streamVisibility)
	e.key("summary")
	streamCounts(e, r.Summary)
	e.key("workloads")
	streamSlice(e, r.Workloads, streamDiagnosis)
	e.close('}')
}

func streamSourceInfo(e *jsonStream, s *snapshot.SourceInfo) {
	e.open('{')
	e.key("type")
	e.str(string(s.Type))
	if s.Path != "" {
		e.key("path")
		e.str(s.Path)
	}
	if s.Context != "" {
		e.key("context")
		e.str(s.Context)
	}
	if s.Server != "" {
		e.key("server")
		e.str(s.Server)
	}
	if len(s.Skipped) > 0 {
		e.key("skipped")
		streamCounts(e, s.Skipped)
	}
	e.close('}')
}

func streamVisibility(e *jsonStream, v *snapshot.Visibility) {
	e.open('{')
	e.key("kind")
	e.str(v.Kind)
	if v.Namespace != "" {
		e.key("namespace")
		e.str(v.Namespace)
	}
	e.key("reason")
	e.str(v.Reason)
	e.close('}')
}

func streamDiagnosis(e *jsonStream, d *diagnose.Diagnosis) {
	e.open('{')
	e.key("kind")
	e.str(d.Kind)
	e.key("namespace")
	e.str(d.Namespace)
	e.key("name")
	e.str(d.Name)
	e.key("shape")
	e.str(string(d.Shape))
	e.key("counts")
	streamWorkloadCounts(e, &d.Counts)
	e.key("youngestCopySeconds")
	e.int64Ptr(d.YoungestCopySeconds)
	e.key("oldestCopySeconds")
	e.int64Ptr(d.OldestCopySeconds)
	e.key("headline")
	e.str(d.Headline)
	e.key("cause")
	e.str(string(d.Cause))
	e.key("argument")
	streamPtr(e, d.Argument, streamArgument)
	e.key("suspects")
	streamSlice(e, d.Suspects, streamSuspect)
	e.key("evidence")
	streamSlice(e, d.Evidence, streamEvidence)
	e.key("revisions")
	streamPtr(e, d.Revisions, streamRevisions)
	e.key("signalGaps")
	streamSlice(e, d.SignalGaps, streamSignalGap)
	e.key("fix")
	e.str(d.Fix)
	if d.Throughput != nil {
		e.key("throughput")
		streamThroughput(e, d.Throughput)
	}
	e.key("timeline")
	streamSlice(e, d.Timeline, streamTimelineEntry)
	e.key("waived")
	streamPtr(e, d.Waived, streamWaiver)
	e.close('}')
}

func streamWaiver(e *jsonStream, w *diagnose.Waiver) {
	e.open('{')
	e.key("what")
	e.str(w.What)
	e.key("reason")
	e.str(w.Reason)
	e.close('}')
}

func streamArgument(e *jsonStream, a *diagnose.Argument) {
	e.open('{')
	if a.Object != "" {
		e.key("object")
		e.str(a.Object)
	}
	e.key("for")
	e.str(a.For)
	if a.Against != "" {
		e.key("against")
		e.str(a.Against)
	}
	e.close('}')
}

func streamWorkloadCounts(e *jsonStream, c *diagnose.Counts) {
	e.open('{')
	e.key("declared")
	e.int(int64(c.Declared))
	e.key("existing")
	e.int(int64(c.Existing))
	e.key("serving")
	e.int(int64(c.Serving))
	e.key("restarts")
	e.int(int64(c.Restarts))
	e.close('}')
}

// streamSuspect writes a suspect as its MarshalJSON does: the path in field.Path notation.
func streamSuspect(e *jsonStream, s *diagnose.Suspect) {
	e.open('{')
	e.key("rule")
	e.str(string(s.Rule))
	e.key("object")
	e.str(s.Object)
	e.key("path")
	e.str(PathText(s.Path))
	e.key("value")
	e.str(s.Value)
	e.key("previousValue")
	e.str(s.PreviousValue)
	e.key("element")
	e.str(s.Element)
	e.key("confidence")
	e.str(string(s.Confidence))
	e.key("reason")
	e.str(s.Reason)
	e.close('}')
}

func streamEvidence(e *jsonStream, ev *diagnose.Evidence) {
	e.open('{')
	e.key("kind")
	e.str(ev.Kind)
	e.key("message")
	e.str(ev.Message)
	e.key("source")
	e.str(string(ev.Source))
	e.key("objects")
	e.strings(ev.Objects)
	e.key("count")
	e.int(int64(ev.Count))
	e.key("lastSeen")
	e.timePtr(ev.LastSeen)
	e.close('}')
}

func streamRevisions(e *jsonStream, r *diagnose.Revisions) {
	e.open('{')
	e.key("current")
	e.str(r.Current)
	e.key("lastServing")
	e.str(r.LastServing)
	e.key("changedPaths")
	e.strings(r.ChangedPaths)
	e.close('}')
}

func streamSignalGap(e *jsonStream, g *diagnose.SignalGap) {
	e.open('{')
	e.key("object")
	e.str(g.Object)
	e.key("path")
	e.str(g.Path)
	e.key("message")
	e.str(g.Message)
	e.close('}')
}

func streamThroughput(e *jsonStream, t *diagnose.Throughput) {
	e.open('{')
	e.key("query")
	e.str(t.Query)
	e.key("origin")
	e.str(t.Origin)
	e.key("unit")
	e.str(t.Unit)
	e.key("range")
	streamPtr(e, t.Range, streamMetricRange)
	e.key("samples")
	streamSlice(e, t.Samples, streamMetricSample)
	e.key("current")
	e.floatPtr(t.Current)
	e.key("baseline")
	e.floatPtr(t.Baseline)
	e.key("onset")
	e.timePtr(t.Onset)
	e.key("verdict")
	e.str(string(t.Verdict))
	if t.OnsetRevision != "" {
		e.key("onsetRevision")
		e.str(t.OnsetRevision)
	}
	if t.Backlog != nil {
		e.key("backlog")
		streamBacklog(e, t.Backlog)
	}
	if t.Capacity != nil {
		e.key("capacity")
		streamCapacity(e, t.Capacity)
	}
	e.close('}')
}

func streamMetricRange(e *jsonStream, r *diagnose.MetricRange) {
	e.open('{')
	e.key("start")
	e.time(r.Start)
	e.key("end")
	e.time(r.End)
	e.key("stepSeconds")
	e.float(r.StepSeconds)
	e.close('}')
}

func streamMetricSample(e *jsonStream, s *diagnose.MetricSample) {
	e.open('{')
	e.key("time")
	e.time(s.Time)
	e.key("value")
	e.float(s.Value)
	e.close('}')
}

func streamBacklog(e *jsonStream, b *diagnose.Backlog) {
	e.open('{')
	e.key("query")
	e.str(b.Query)
	e.key("origin")
	e.str(b.Origin)
	e.key("unit")
	e.str(b.Unit)
	e.key("range")
	streamPtr(e, b.Range, streamMetricRange)
	e.key("samples")
	streamSlice(e, b.Samples, streamMetricSample)
	e.key("current")
	e.floatPtr(b.Current)
	e.key("rising")
	e.bool(b.Rising)
	e.close('}')
}

func streamCapacity(e *jsonStream, c *diagnose.Capacity) {
	e.open('{')
	e.key("from")
	e.float(c.From)
	e.key("to")
	e.float(c.To)
	e.key("overSeconds")
	e.int(c.OverSeconds)
	e.key("message")
	e.str(c.Message)
	e.close('}')
}

func streamTimelineEntry(e *jsonStream, t *diagnose.TimelineEntry) {
	e.open('{')
	e.key("at")
	e.time(t.At)
	e.key("kind")
	e.str(string(t.Kind))
	e.key("message")
	e.str(t.Message)
	e.key("object")
	e.str(t.Object)
	if t.ServingFrom != nil {
		e.key("servingFrom")
		e.int(int64(*t.ServingFrom))
	}
	if t.ServingTo != nil {
		e.key("servingTo")
		e.int(int64(*t.ServingTo))
	}
	e.close('}')
}

package diagnose

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// The throughput rules' thresholds; docs/schema.md states them.
const (
	// FallFraction: throughput at or below this fraction of its level before the onset has
	// fallen (a drop to half or less). Zero is always fallen.
	FallFraction = 0.5
	// minLowSamples is how many consecutive low samples, ending at the reference time, a fall
	// needs, so one slow scrape is not a verdict.
	minLowSamples = 3
	// RolloutTie is how long before the onset a new revision may have been created for the
	// fall to be tied to it: the new copies must start, become Ready and take traffic, and a
	// rate lags its window.
	RolloutTie = 5 * time.Minute
	// BacklogRiseFraction: a backlog has risen when it grew over the range by at least this
	// fraction of where it started (or from zero to anything) with a positive trend.
	BacklogRiseFraction = 0.2
)

// ThroughputVerdict says what the throughput series shows.
type ThroughputVerdict string

// The throughput verdicts.
const (
	// VerdictSteady: not fallen.
	VerdictSteady ThroughputVerdict = "steady"
	// VerdictZero: zero now, for at least minLowSamples samples.
	VerdictZero ThroughputVerdict = "zero"
	// VerdictFell: above zero but at or below FallFraction of its level before the onset.
	VerdictFell ThroughputVerdict = "fell"
	// VerdictNoData: no throughput query found a series.
	VerdictNoData ThroughputVerdict = "no-data"
)

// SourceMetrics marks evidence read from the workload's own metrics.
const SourceMetrics EvidenceSource = "metrics"

// MetricSample is one point of a series in the report.
type MetricSample struct {
	Time  time.Time `json:"time"`
	Value float64   `json:"value"`
}

// MetricRange is a range query's span and resolution.
type MetricRange struct {
	Start       time.Time `json:"start"`
	End         time.Time `json:"end"`
	StepSeconds float64   `json:"stepSeconds"`
}

// Throughput is the workload's own output as its query measured it, and its backlog.
type Throughput struct {
	// Query is the PromQL sent; Origin says where it came from (annotation, config, default).
	Query   string         `json:"query"`
	Origin  string         `json:"origin"`
	Unit    string         `json:"unit"`
	Range   *MetricRange   `json:"range"`
	Samples []MetricSample `json:"samples"`
	// Current is the newest sample; Baseline the level before the onset (the 75th percentile
	// of the samples before it), nil without a fall.
	Current  *float64          `json:"current"`
	Baseline *float64          `json:"baseline"`
	Onset    *time.Time        `json:"onset"`
	Verdict  ThroughputVerdict `json:"verdict"`
	// OnsetRevision is the revision created up to RolloutTie before the onset, when one was.
	OnsetRevision string    `json:"onsetRevision,omitempty"`
	Backlog       *Backlog  `json:"backlog,omitempty"`
	Capacity      *Capacity `json:"capacity,omitempty"`
}

// Backlog is work waiting for the workload (queue depth, consumer lag).
type Backlog struct {
	Query   string         `json:"query"`
	Origin  string         `json:"origin"`
	Unit    string         `json:"unit"`
	Range   *MetricRange   `json:"range"`
	Samples []MetricSample `json:"samples"`
	Current *float64       `json:"current"`
	Rising  bool           `json:"rising"`
}

// Capacity is the finding that the workload falls behind at full count: its backlog rises
// while every declared copy serves. It is not a failure shape: nothing is lost, it is too
// little.
type Capacity struct {
	From        float64 `json:"from"`
	To          float64 `json:"to"`
	OverSeconds int64   `json:"overSeconds"`
	Message     string  `json:"message"`
}

// throughputRead is what the throughput rules concluded for one workload.
type throughputRead struct {
	report *Throughput
	// changedShape is set when the rules turned a healthy workload live-but-idle.
	changedShape bool
	// tied is the revision the fall is tied to; prev the one it replaced.
	tied, prev *revision
	// gap is set when the workload is behind a Service and no query measured it.
	gap bool
}

// readThroughput applies the throughput rules: a fall while the copies are Ready makes a
// healthy workload live-but-idle; a rising backlog at full count is a capacity finding. It
// adds its evidence to w.Evidence. Nil when no metrics source was configured.
func readThroughput(s *snapshot.Snapshot, w *workload) *throughputRead {
	if s.Metrics == nil {
		return nil
	}
	tr := &throughputRead{}
	ts := s.MetricsFor(w.Kind, w.Namespace, w.Name, snapshot.RoleThroughput)
	bs := s.MetricsFor(w.Kind, w.Namespace, w.Name, snapshot.RoleBacklog)
	if ts == nil {
		tr.gap = len(w.Services) > 0 && !metricsUnread(s)
		if bs == nil {
			return tr
		}
		tr.report = &Throughput{Verdict: VerdictNoData, Samples: []MetricSample{}}
	} else {
		tr.report = seriesReport(ts)
		judgeFall(w, ts, tr)
	}
	if bs != nil {
		tr.report.Backlog = backlogReport(bs)
		judgeBacklog(w, bs, tr)
	}
	return tr
}

// metricsUnread reports whether the metrics source could not be read at all.
func metricsUnread(s *snapshot.Snapshot) bool {
	for _, v := range s.Visibility {
		if v.Kind == "Prometheus" && v.Namespace == "" {
			return true
		}
	}
	return false
}

func seriesReport(m *snapshot.MetricSeries) *Throughput {
	t := &Throughput{Query: m.Query, Origin: string(m.Origin), Unit: m.Unit, Range: rangeOf(m), Samples: samplesOf(m), Verdict: VerdictSteady}
	if n := len(m.Samples); n > 0 {
		t.Current = ptr(m.Samples[n-1].Value)
	}
	return t
}

func backlogReport(m *snapshot.MetricSeries) *Backlog {
	b := &Backlog{Query: m.Query, Origin: string(m.Origin), Unit: m.Unit, Range: rangeOf(m), Samples: samplesOf(m)}
	if n := len(m.Samples); n > 0 {
		b.Current = ptr(m.Samples[n-1].Value)
	}
	return b
}

func rangeOf(m *snapshot.MetricSeries) *MetricRange {
	return &MetricRange{Start: m.Start.UTC(), End: m.End.UTC(), StepSeconds: m.Step.Seconds()}
}

func samplesOf(m *snapshot.MetricSeries) []MetricSample {
	out := make([]MetricSample, len(m.Samples))
	for i, p := range m.Samples {
		out[i] = MetricSample{Time: p.Time.UTC(), Value: p.Value}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// fallOnset finds the longest run of samples, ending with the newest, that are all at or below
// FallFraction of the level before it, and returns the run's first index and that level; -1
// when there is no such run of at least minLowSamples. The level is the 75th percentile of the
// samples before the run, so a rate's ramp-up or a rollout's transition does not drag it down
// as a mean would. A series that is zero throughout returns 0 and a zero level.
func fallOnset(v []snapshot.Sample) (int, float64) {
	n := len(v)
	if n < minLowSamples {
		return -1, 0
	}
	tailMax := make([]float64, n+1)
	tailMax[n] = math.Inf(-1)
	for i := n - 1; i >= 0; i-- {
		tailMax[i] = math.Max(tailMax[i+1], v[i].Value)
	}
	if tailMax[0] <= 0 {
		return 0, 0
	}
	headMax := 0.0
	for k := 1; k <= n-minLowSamples; k++ {
		headMax = math.Max(headMax, v[k-1].Value)
		// The percentile is at most the maximum: most k fail this cheap test first.
		if tailMax[k] > FallFraction*headMax {
			continue
		}
		if level := percentile75(v[:k]); level > 0 && tailMax[k] <= FallFraction*level {
			return k, level
		}
	}
	return -1, 0
}

// percentile75 is the 75th percentile of the samples' values, nearest rank.
func percentile75(v []snapshot.Sample) float64 {
	xs := make([]float64, len(v))
	for i, p := range v {
		xs[i] = p.Value
	}
	slices.Sort(xs)
	return xs[(len(xs)*3+3)/4-1]
}

// judgeFall reads the throughput series; a healthy workload whose output fell becomes
// live-but-idle. Without a level before the fall (zero throughout the range), a default query
// is not enough: a common request counter at zero may only mean no client called.
func judgeFall(w *workload, m *snapshot.MetricSeries, tr *throughputRead) {
	k, base := fallOnset(m.Samples)
	if k < 0 {
		return
	}
	t := tr.report
	cur := m.Samples[len(m.Samples)-1].Value
	t.Verdict = VerdictFell
	if cur <= 0 {
		t.Verdict = VerdictZero
	}
	onset := m.Samples[k].Time.UTC()
	since := m.End.Sub(onset)
	msg := fmt.Sprintf("%s for %s", withUnit(cur, m.Unit), humanDuration(since))
	if t.Verdict == VerdictFell {
		msg = fmt.Sprintf("%s (at most %s of before) for %s", withUnit(cur, m.Unit), percent(FallFraction), humanDuration(since))
	}
	if k > 0 {
		t.Baseline, t.Onset = ptr(base), &onset
		tr.tied, tr.prev = rolloutAt(w, onset)
		if tr.tied != nil {
			t.OnsetRevision = strconv.FormatInt(tr.tied.Number, 10)
			msg += fmt.Sprintf("; %s before revision %d", withUnit(base, m.Unit), tr.tied.Number)
		} else {
			msg += fmt.Sprintf("; %s before %s, with no rollout", withUnit(base, m.Unit), onset.Format("15:04:05 UTC"))
		}
	} else {
		msg = fmt.Sprintf("%s for the whole range read (%s)", withUnit(cur, m.Unit), humanDuration(m.End.Sub(m.Start)))
	}
	msg += fmt.Sprintf(" (query from %s: %s)", m.Origin, m.Query)
	kind := "ThroughputFell"
	if t.Verdict == VerdictZero {
		kind = "ThroughputZero"
	}
	w.Evidence = append(w.Evidence, Evidence{
		Kind: kind, Message: msg, Source: SourceMetrics, Objects: []string{w.object()},
		Count: int32(len(m.Samples) - k),
	})
	if w.Shape == ShapeHealthy && (k > 0 || m.Origin != snapshot.OriginDefault) {
		w.Shape = ShapeLiveButIdle
		tr.changedShape = true
	}
}

// rolloutAt returns the revision created within RolloutTie before the onset that replaced an
// earlier one, and that earlier one; nil when there is none. The first revision is not a
// rollout: nothing changed, the workload was created.
func rolloutAt(w *workload, onset time.Time) (*revision, *revision) {
	revs := w.cls.Revisions
	for i := len(revs) - 1; i >= 1; i-- {
		c := revs[i].Created
		if !c.After(onset) && onset.Sub(c) <= RolloutTie {
			return revs[i], revs[i-1]
		}
	}
	return nil, nil
}

// judgeBacklog records a capacity finding: the backlog rose while every declared copy served.
func judgeBacklog(w *workload, m *snapshot.MetricSeries, tr *throughputRead) {
	v := m.Samples
	if len(v) < minLowSamples {
		return
	}
	first, last := v[0].Value, v[len(v)-1].Value
	grew := last-first > 0 && (first <= 0 || (last-first) >= BacklogRiseFraction*first)
	if !grew || slope(v) <= 0 {
		return
	}
	tr.report.Backlog.Rising = true
	c := w.Counts
	if c.Declared == 0 || c.Serving < c.Declared {
		// Too few copies serve: the backlog is a symptom of that, not of capacity.
		return
	}
	over := v[len(v)-1].Time.Sub(v[0].Time)
	msg := fmt.Sprintf("backlog %s → %s over %s while %d of %d copies serve: at full count it falls behind; it needs more copies or faster ones, not a fix",
		number(first), withUnit(last, m.Unit), humanDuration(over), c.Serving, c.Declared)
	tr.report.Capacity = &Capacity{From: first, To: last, OverSeconds: int64(over.Seconds()), Message: msg}
	w.Evidence = append(w.Evidence, Evidence{
		Kind: "BacklogRising", Message: msg + fmt.Sprintf(" (query from %s: %s)", m.Origin, m.Query), Source: SourceMetrics,
		Objects: []string{w.object()}, Count: int32(len(v)),
	})
}

// slope is the least-squares trend of a series, per second.
func slope(v []snapshot.Sample) float64 {
	t0 := v[0].Time
	var sx, sy, sxx, sxy float64
	for _, p := range v {
		x := p.Time.Sub(t0).Seconds()
		sx += x
		sy += p.Value
		sxx += x * x
		sxy += x * p.Value
	}
	n := float64(len(v))
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

// settle completes a diagnosis the throughput rules changed: the cause from the onset's
// revision, the headline and fix in the output's terms; and it attaches the report section and
// the signal gap.
func (tr *throughputRead) settle(w *workload, d *Diagnosis) {
	if tr == nil {
		return
	}
	d.Throughput = tr.report
	if tr.gap {
		svc := w.Services[0].Name
		d.SignalGaps = append(d.SignalGaps, SignalGap{
			Object: w.object(), Path: "metadata.annotations[" + annotationThroughput + "]",
			Message: fmt.Sprintf("served through Service %s, but no throughput query (annotation, metrics config or the common request counters) finds a series: the count is all anyone gets", svc),
		})
	}
	if !tr.changedShape {
		return
	}
	t := tr.report
	ref := shellQuote(strings.ToLower(w.Kind) + "/" + w.Name)
	ns := ""
	if w.Namespace != "" {
		ns = " -n " + shellQuote(w.Namespace)
	}
	c := w.Counts
	why := "every copy is Ready, but its output "
	if t.Verdict == VerdictZero {
		why += "is zero"
	} else {
		why += "fell to " + withUnit(*t.Current, t.Unit)
	}
	tr.blame(w, d)
	switch {
	case tr.tied != nil:
		d.Cause = CauseSpec
		why += fmt.Sprintf(" since revision %d rolled out (%s before it)", tr.tied.Number, withUnit(*t.Baseline, t.Unit))
		d.Fix = fmt.Sprintf("kubectl rollout undo %s --to-revision=%d%s", ref, tr.prev.Number, ns)
		if len(d.Suspects) > 0 && d.Suspects[0].Path != nil && w.Kind != "ReplicaSet" {
			d.Fix += "; or set " + d.Suspects[0].Path.String() + " back to " + rules.QuoteValue(d.Suspects[0].PreviousValue)
		}
	case t.Baseline != nil:
		d.Cause = CauseDependency
		why += fmt.Sprintf(" since %s with no rollout (%s before)", t.Onset.Format("15:04:05 UTC"), withUnit(*t.Baseline, t.Unit))
		d.Fix = fmt.Sprintf("look outside the spec first: the output of %s stopped with no change to its spec; check what feeds it (its upstream, queue or input)", ref)
	default:
		d.Cause = CauseUnknown
		why += " for the whole range read"
		d.Fix = fmt.Sprintf("kubectl describe %s%s; then check that its input reaches it", ref, ns)
	}
	d.Headline = fmt.Sprintf("%d of %d copies exist · %d serving — %s", c.Existing, c.Declared, c.Serving, why)
}

// blame replaces the suspects of a workload the throughput rules made live-but-idle: the
// signal rules' suspects answer another question (a three-day-old OOMKill is not why the
// output stopped now). A fall tied to a revision blames what that revision changed, and the
// revision before it becomes the last that served; a fall with no rollout blames no field.
func (tr *throughputRead) blame(w *workload, d *Diagnosis) {
	d.Suspects = []Suspect{}
	if tr.tied == nil || tr.tied.Template == nil || tr.prev.Template == nil {
		return
	}
	prev, cur := templateWithout(tr.prev.Template, podTemplateHashLabel), templateWithout(tr.tied.Template, podTemplateHashLabel)
	root := w.TemplatePath
	if root == nil {
		root = field.NewPath("spec", "template")
	}
	changes := diffTemplates(root, prev, cur)
	t := tr.report
	paths := []string{}
	for _, c := range changes {
		d.Suspects = append(d.Suspects, Suspect{
			Rule: rules.RuleChangedField, Object: w.object(), Path: c.Path, Segments: fieldpath.Of(c.Path), Value: c.Current, PreviousValue: c.Previous,
			Confidence: ConfidenceMedium,
			Reason: fmt.Sprintf("revision %d changed it; the output fell from %s to %s after it rolled out",
				tr.tied.Number, withUnit(*t.Baseline, t.Unit), withUnit(*t.Current, t.Unit)),
		})
		paths = append(paths, c.Path.String())
	}
	slices.SortStableFunc(d.Suspects, func(a, b Suspect) int { return strings.Compare(a.Path.String(), b.Path.String()) })
	last, current := strconv.FormatInt(tr.prev.Number, 10), strconv.FormatInt(tr.tied.Number, 10)
	if d.Revisions != nil {
		current = d.Revisions.Current
	}
	d.Revisions = &Revisions{Current: current, LastServing: last, ChangedPaths: paths}
	if d.Detail != nil {
		d.Detail.LastServingRevision, d.Detail.Changes = last, changes
	}
}

// annotationThroughput is the annotation the signal gap names (internal/metrics reads it).
const annotationThroughput = "kubediagnose.dev/throughput"

// withUnit writes a value with its unit: "1,240 readings/s", "12/s".
func withUnit(v float64, unit string) string {
	switch {
	case unit == "":
		return number(v)
	case strings.HasPrefix(unit, "/"):
		return number(v) + unit
	default:
		return number(v) + " " + unit
	}
}

// number writes a reading for a person: thousands separated, at most three significant
// decimals below 10, none from 100 up.
func number(v float64) string {
	neg := v < 0
	v = math.Abs(v)
	var s string
	switch {
	case v >= 100:
		s = strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	case v >= 10:
		s = strconv.FormatFloat(v, 'f', 1, 64)
	default:
		s = strconv.FormatFloat(v, 'f', 2, 64)
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func percent(f float64) string { return strconv.FormatFloat(f*100, 'f', -1, 64) + "%" }

package diagnose

import (
	"encoding/json"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Shape classifies a workload by what its copies actually do.
type Shape string

// The shapes, in the closed vocabulary of the report.
const (
	ShapeHealthy       Shape = "healthy"
	ShapeProgressing   Shape = "progressing"
	ShapeNeverStarts   Shape = "never-starts"
	ShapeStartsAndDies Shape = "starts-and-dies"
	ShapeLiveButIdle   Shape = "live-but-idle"
	ShapeUnknown       Shape = "unknown"
	// ShapeNoEligibleNodes: a DaemonSet no node may run because the node label it selects is
	// on no node, and is no near miss of one that is: a pool that does not exist yet.
	ShapeNoEligibleNodes Shape = "no-eligible-nodes"
	// ShapeSuspended: a CronJob or Job whose spec.suspend holds its runs back.
	ShapeSuspended Shape = "suspended"
)

// Shapes lists every shape, worst first; front ends sort and colour by this order. The
// intended states (Intended) come after progressing: nothing fails, the spec holds them.
var Shapes = []Shape{ShapeNeverStarts, ShapeStartsAndDies, ShapeLiveButIdle, ShapeUnknown, ShapeProgressing, ShapeNoEligibleNodes, ShapeSuspended, ShapeHealthy}

// Severity orders shapes: lower is worse.
func (s Shape) Severity() int {
	for i, x := range Shapes {
		if x == s {
			return i
		}
	}
	return len(Shapes)
}

// Broken reports whether the shape is a failure (never-starts, starts-and-dies, live-but-idle).
func (s Shape) Broken() bool {
	return s == ShapeNeverStarts || s == ShapeStartsAndDies || s == ShapeLiveButIdle
}

// Intended reports whether the shape is a state the spec asks for that runs nothing
// (no-eligible-nodes, suspended): not a failure, shown apart from broken and healthy.
func (s Shape) Intended() bool {
	return s == ShapeNoEligibleNodes || s == ShapeSuspended
}

// Cause says where the fault lies.
type Cause string

// The causes.
const (
	// CauseSpec: the failing revision changed an implicated field, or the fault is in the spec itself.
	CauseSpec Cause = "spec"
	// CauseDependency: the spec is unchanged since the workload last served; something outside fails.
	CauseDependency Cause = "dependency"
	CauseUnknown    Cause = "unknown"
)

// Confidence grades a suspect.
type Confidence string

// The confidences.
const (
	ConfidenceHigh   Confidence = "high"
	ConfidenceMedium Confidence = "medium"
	ConfidenceLow    Confidence = "low"
)

// EvidenceSource says where a signal was read.
type EvidenceSource string

// The evidence sources.
const (
	SourcePodStatus        EvidenceSource = "pod-status"
	SourceEvent            EvidenceSource = "event"
	SourceLog              EvidenceSource = "log"
	SourceRevisionHistory  EvidenceSource = "revision-history"
	SourceService          EvidenceSource = "service"
	SourceControllerStatus EvidenceSource = "controller-status"
	// SourceVisibility marks evidence about what the source could not read.
	SourceVisibility EvidenceSource = "visibility"
)

// APIVersion and ReportKind identify the report document.
const (
	APIVersion = "kubediagnose.dev/v1alpha1"
	ReportKind = "Report"
)

// Report is the engine's answer for a whole snapshot. Its JSON form is the documented report schema.
type Report struct {
	APIVersion    string                `json:"apiVersion"`
	Kind          string                `json:"kind"`
	ReferenceTime time.Time             `json:"referenceTime"`
	Source        snapshot.SourceInfo   `json:"source"`
	Visibility    []snapshot.Visibility `json:"visibility"`
	Summary       map[Shape]int         `json:"summary"`
	// SharedDependencies are the targets several broken workloads fail to reach at once.
	SharedDependencies []SharedDependency `json:"sharedDependencies"`
	Workloads          []Diagnosis        `json:"workloads"`
}

// Counts are the numbers behind a diagnosis. Declared is spec.replicas (default 1; a DaemonSet's
// status.desiredNumberScheduled). Existing is copies of any revision that are neither
// terminating nor finished (Succeeded/Failed, e.g. evicted), as the controllers count them.
// Serving is copies that are Ready and, when a Service is meant for the workload, ready endpoints
// of it on a port a container exposes. Restarts sums the existing copies' restart counts.
type Counts struct {
	Declared int32 `json:"declared"`
	Existing int32 `json:"existing"`
	Serving  int32 `json:"serving"`
	Restarts int32 `json:"restarts"`
}

// Diagnosis is the verdict on one workload.
type Diagnosis struct {
	Kind                string `json:"kind"`
	Namespace           string `json:"namespace"`
	Name                string `json:"name"`
	Shape               Shape  `json:"shape"`
	Counts              Counts `json:"counts"`
	YoungestCopySeconds *int64 `json:"youngestCopySeconds"`
	OldestCopySeconds   *int64 `json:"oldestCopySeconds"`
	Headline            string `json:"headline"`
	Cause               Cause  `json:"cause"`
	// Argument is the case for the cause: the winning hypothesis on its facts, and why the
	// other was rejected; null for shapes that are not failures.
	Argument   *Argument   `json:"argument"`
	Suspects   []Suspect   `json:"suspects"`
	Evidence   []Evidence  `json:"evidence"`
	Revisions  *Revisions  `json:"revisions"`
	SignalGaps []SignalGap `json:"signalGaps"`
	Fix        string      `json:"fix"`
	// Throughput is the workload's own output and backlog; absent without a metrics source.
	Throughput *Throughput `json:"throughput,omitempty"`
	// Timeline lists the moments the snapshot can date, oldest first.
	Timeline []TimelineEntry `json:"timeline"`
	// Waived is the waiver the workload's kubediagnose.dev/waive annotation grants this
	// verdict; nil when none applies. A waived workload is shown, marked, and not counted by
	// --fail-on.
	Waived *Waiver `json:"waived"`
	Detail *Detail `json:"-"`
}

// Detail carries what front ends show beyond the report schema.
type Detail struct {
	// CurrentRevision and LastServingRevision are the pod templates' revision names.
	CurrentRevision, LastServingRevision string
	// Changes lists the fields that differ between the last serving and the current template.
	Changes []Change
	// observations holds what Observations returns, copies what Copies returns.
	observations obsLog
	copies       copyList
	// target is where the workload's failing connections go; beforeShared its verdict before
	// the shared pass wrote on it (shared.go).
	target       *depTarget
	beforeShared *sharedVerdict
}

// Observations returns the workload's facts as the engine read them, once: what classified it,
// what the evidence cites (Evidence.Observations and Suspect.Observations are indexes into this
// list) and what the suspect rules read. The list is written out on each call from what it
// was read from (the copies, events, controller conditions, revisions and log tails the report
// keeps): a report of 100,000 copies held a 120-byte observation per status, condition, event
// and log line, and building them in a list of their own was a third of what diagnosing them
// allocated.
func (d *Detail) Observations() []Observation { return d.observations.list() }

// Copy is one pod of a workload as a person reads it.
type Copy struct {
	Name     string
	Revision string
	Phase    string
	Ready    bool
	Serving  bool
	Restarts int32
	// AgeSeconds is nil when the copy's creation time is not set: kubectl prints <unknown>.
	// A creation time after the reference time leaves it negative: kubectl prints <invalid>.
	AgeSeconds *int64
	// Reason is the most telling waiting/terminated reason or condition, e.g. CrashLoopBackOff.
	Reason  string
	Message string
	Node    string
}

// Change is one field that differs between two pod templates.
type Change = rules.Change

// Suspect is a spec field that probably causes the failure.
type Suspect struct {
	Rule   RuleID      `json:"rule"`
	Object string      `json:"object"`
	Path   *field.Path `json:"-"`
	// Segments are Path's steps, read once by the engine so that no front end parses the
	// path again (Steps).
	Segments      []fieldpath.Segment `json:"-"`
	Value         string              `json:"value"`
	PreviousValue string              `json:"previousValue"`
	Confidence    Confidence          `json:"confidence"`
	Reason        string              `json:"reason"`
	// Score ranks suspects: higher first, then by path.
	Score int `json:"-"`
	// Observations are the indexes in Detail.Observations of the facts the rule read to name
	// the field; empty for a rule that reads the spec alone.
	Observations []int32 `json:"-"`
	// Element names the list element Path indexes where the index alone says little: the
	// variable of env[i], the ConfigMap or Secret an envFrom[i] reads, the volume of
	// volumes[i] or volumeMounts[i]; "" otherwise. Front ends name the suspect by it
	// (`env LEDGER_DB_ADDR`, not `env[0]`) without reopening the snapshot.
	Element string `json:"element"`
	// Variable is the variable an env-var-unset suspect says the program lacks, for short
	// names and the fix; the reason says it too.
	Variable string `json:"-"`
}

// Steps are the steps of the suspect's path: Segments, or, for a suspect made outside the
// engine without them, the path read by fieldpath.
func (s *Suspect) Steps() []fieldpath.Segment {
	if s.Segments != nil || s.Path == nil {
		return s.Segments
	}
	return fieldpath.Of(s.Path)
}

// MarshalJSON writes the path in field.Path notation.
func (s Suspect) MarshalJSON() ([]byte, error) {
	path := ""
	if s.Path != nil {
		path = s.Path.String()
	}
	return json.Marshal(struct {
		Rule          RuleID     `json:"rule"`
		Object        string     `json:"object"`
		Path          string     `json:"path"`
		Value         string     `json:"value"`
		PreviousValue string     `json:"previousValue"`
		Element       string     `json:"element"`
		Confidence    Confidence `json:"confidence"`
		Reason        string     `json:"reason"`
	}{s.Rule, s.Object, path, s.Value, s.PreviousValue, s.Element, s.Confidence, s.Reason})
}

// Evidence is one signal behind a verdict.
type Evidence struct {
	Kind    string         `json:"kind"`
	Message string         `json:"message"`
	Source  EvidenceSource `json:"source"`
	// Objects names the copies (or other objects) the signal covers.
	Objects []string `json:"objects"`
	// Count is how often the signal was seen: copies showing it for pod status, the events'
	// own counts summed for events, matching lines for logs.
	Count int32 `json:"count"`
	// LastSeen is when the signal was last recorded; nil for a state that holds now.
	LastSeen *time.Time `json:"lastSeen"`
	// Observations are the indexes in Detail.Observations of the facts the item was read
	// from; empty for items the engine derives (revision history, visibility).
	Observations []int32 `json:"-"`
}

// Revisions names the current revision, the last that served, and what changed between them.
type Revisions struct {
	Current      string   `json:"current"`
	LastServing  string   `json:"lastServing"`
	ChangedPaths []string `json:"changedPaths"`
}

// SignalGap is something the spec leaves the platform unable to see.
type SignalGap struct {
	Object  string `json:"object"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

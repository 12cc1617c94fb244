package rules

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Input is all a suspect rule reads of a workload: its classified signals and copies, its pod
// template and the objects it refers to. The engine fills it once per workload; a detector
// reads it and records through a Sink, and never sees the workload or the snapshot.
type Input struct {
	// Object is the workload as suspects name it, Kind/name.
	Object                string
	Kind, Namespace, Name string
	// Declared is the count of copies the workload declares (spec.replicas and the like).
	Declared int32
	Shape    Shape
	// RollingUpdate says the workload replaces its copies by a rolling update, which starts a
	// new copy while an old one still runs (a Deployment whose strategy is not Recreate).
	RollingUpdate bool

	// Template is the current pod template, at TemplatePath in the workload (spec.template
	// when nil); ClaimTemplates are a StatefulSet's volumeClaimTemplates.
	Template       *corev1.PodTemplateSpec
	TemplatePath   *field.Path
	ClaimTemplates []corev1.PersistentVolumeClaim
	// SpecPath is TemplatePath.Child("spec"), built once where many workloads share it.
	SpecPath *field.Path

	// Signals are the failure messages of the failing copies, the controller and the claims,
	// each classified once.
	Signals []*Signal
	// Copies are the workload's copies as classified, every revision's, in the order the
	// signals' lines number them (LogLine.Copy). A rule never sees the pods themselves.
	Copies []Copy
	// OwnHosts are the copies' pod and node IPs: a port on them is the copy itself.
	OwnHosts map[string]bool

	// Changes are the fields the revision that fails changed since the last that served;
	// OwnChanges those the current revision changed from the one before it.
	Changes, OwnChanges                  []Change
	CurrentRevision, LastServingRevision string
	// Served says a revision of the workload served, or the current one served early on.
	Served bool
	// Batch says the workload is a Job or CronJob, whose containers are meant to end.
	Batch bool
	// Nowhere says why no node can run a copy, "" when some can; Excluded then counts the
	// nodes the template excludes, and how.
	Nowhere  string
	Excluded NodeExclusion
	// Schedule is a CronJob's due run that started no Job; nil when none.
	Schedule *Schedule

	// Services select the template's labels; UnmatchedServices were written for the workload
	// but select none of its pods; NearbyServices are every Service the index offered.
	Services, UnmatchedServices, NearbyServices []*corev1.Service
	// Claims are the PersistentVolumeClaims the copies mount or the claim templates name;
	// ClaimEvents are the events on them, oldest first, Normal ones included (the PV
	// controller's FailedBinding, ProvisioningFailed, ExternalProvisioning...).
	Claims      []*corev1.PersistentVolumeClaim
	ClaimEvents []*corev1.Event
	// Volumes are the cluster's PersistentVolumes; VolumesUnread says why they are not known
	// ("" when they were read). Both are filled only for a workload with claims or claim
	// templates.
	Volumes       []*corev1.PersistentVolume
	VolumesUnread string
	// Nodes are the cluster's nodes; NodeIndex looks one up by name (nil: none known).
	Nodes     []*corev1.Node
	NodeIndex NodeIndex

	// Paths memoizes the String of the paths the rules and the engine ask about.
	Paths *Paths
}

// NodeIndex finds a node by name (the snapshot's index).
type NodeIndex interface {
	Node(name string) *corev1.Node
}

// Node is the node of that name, nil when none is known.
func (in *Input) Node(name string) *corev1.Node {
	if in.NodeIndex == nil {
		return nil
	}
	return in.NodeIndex.Node(name)
}

// Shape is the workload's shape as diagnose.Shape words it; the rules tell only these apart.
type Shape string

// The shapes a rule reads.
const (
	ShapeLiveButIdle   Shape = "live-but-idle"
	ShapeStartsAndDies Shape = "starts-and-dies"
)

// NodeExclusion counts the nodes a pod spec excludes: by its node selector and affinity, and
// by taints it does not tolerate (Taints lists them, sorted).
type NodeExclusion struct {
	Selector, Taint int
	Taints          []string
}

// Change is a field that differs between two revisions of the pod template.
type Change struct {
	Path     *field.Path
	Previous string
	Current  string
}

// Schedule is a CronJob's run that should have started and did not: the field that kept it
// from starting and what it says.
type Schedule struct {
	Rule    RuleID
	Path    *field.Path
	Message string
}

// Copy is one copy of the workload as the rules read it.
type Copy struct {
	// Name is the pod's name; Node the node it is bound to, "" while it waits for one.
	Name, Node string
	// Current: the copy belongs to the current revision; Active: it is not finished or
	// being deleted; Ready: its Ready condition is True.
	Current, Active, Ready bool
	// SchedulerAnswered says the copy has a PodScheduled condition: a scheduler answered for
	// it, placing it or not.
	SchedulerAnswered bool
	// OwnExits are the containers that restarted after ending with an exit code of their own:
	// not 0, and not the 137 or 143 of a kill (which is what a failing liveness probe does).
	OwnExits []string
	// Dies names the copy's start-and-die signal, "" when it has none.
	Dies string
	// Age is the copy's age at the reference time.
	Age time.Duration
	// Terminated says a container of the copy terminated; LastTerminated is its newest
	// termination.
	Terminated     bool
	LastTerminated Termination
}

// Termination is a container's termination as the rules read it.
type Termination struct {
	Container string
	Init      bool
	ExitCode  int32
	Reason    string
}

// Paths memoizes field.Path.String per path: the rules look the same paths up, record them and
// compare them with the changes many times over. Paths are never changed once built, so the
// pointer is the key.
type Paths struct {
	m map[*field.Path]string
}

// String is p.String(), written once per path.
func (ps *Paths) String(p *field.Path) string {
	if p == nil {
		return p.String()
	}
	if s, ok := ps.m[p]; ok {
		return s
	}
	s := p.String()
	ps.Know(p, s)
	return s
}

// Know files s as p's String, written by a walk.
func (ps *Paths) Know(p *field.Path, s string) {
	if ps.m == nil {
		ps.m = map[*field.Path]string{}
	}
	ps.m[p] = s
}

// Sink is where a detector records suspects. It answers what it already holds: the previous
// value of a template field, and whether a suspect is recorded.
type Sink interface {
	// Template records a template field as a suspect; base is the rule's score before the
	// changed-field bonus.
	Template(rule RuleID, path *field.Path, base int, reason string)
	// TemplateFinding is the finding Template records, for a rule that adds to it and then
	// records it.
	TemplateFinding(rule RuleID, path *field.Path, base int, reason string) Finding
	// Workload records a field of the workload's own object outside its template (path from
	// its root: spec.replicas, spec.strategy.type).
	Workload(rule RuleID, path *field.Path, base int, reason string)
	// Object records a field of another object (a Service, a claim, a node); obj is the typed
	// object the path is rooted at.
	Object(rule RuleID, object string, obj any, path *field.Path, base int, reason string)
	// Record records a finding as it is.
	Record(f Finding)
	// Read says the rule reads signal s as one line, the first it was seen on; ReadAll says it
	// reads sigs together, every line of each. A suspect recorded next cites them.
	Read(s *Signal)
	ReadAll(sigs []*Signal)
	// Previous is a template field's value in the last revision that served and whether the
	// field (or one beneath or above it) changed since.
	Previous(path *field.Path) (string, bool)
	// Recorded reports whether a suspect of the rule is recorded.
	Recorded(rule RuleID) bool
	// Covers reports whether a suspect recorded on object lies at, beneath or above the field
	// whose path.String() is path.
	Covers(object, path string) bool
}

// Finding is a suspect as a rule records it, before the engine gives it a confidence and
// its citations.
type Finding struct {
	Rule          RuleID
	Object        string
	Path          *field.Path
	Value         string
	PreviousValue string
	Reason        string
	Score         int
	// Variable is the variable an env-var-unset finding says the program lacks.
	Variable string
}

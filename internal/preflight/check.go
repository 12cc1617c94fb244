package preflight

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// CheckID names a check; IDs are stable: scripts read them from -o json.
type CheckID string

// Result is a check's verdict on one workload.
type Result string

// The results, best first.
const (
	ResultPass    Result = "pass"
	ResultSkipped Result = "skipped"
	ResultWarn    Result = "warn"
	ResultFail    Result = "fail"
)

// rank orders results from best to worst.
func (r Result) rank() int {
	switch r {
	case ResultFail:
		return 3
	case ResultWarn:
		return 2
	case ResultSkipped:
		return 1
	}
	return 0
}

// Finding is one check's verdict on one workload, with the field it is about.
type Finding struct {
	Check  CheckID `json:"check"`
	Result Result  `json:"result"`
	// Path is the manifest field the finding is about, when one is.
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

// Change is a field the manifest changes against the live object, ranked by risk.
type Change struct {
	Path          string              `json:"path"`
	Value         string              `json:"value"`
	PreviousValue string              `json:"previousValue"`
	Risk          diagnose.Confidence `json:"risk"`
	// Shape is the failure shape that would implicate the field most; empty when none would.
	Shape diagnose.Shape `json:"shape,omitempty"`
}

// WorkloadReport is every check's verdict on one workload of the manifests.
type WorkloadReport struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Origin is the file and line the manifest starts at.
	Origin string `json:"origin"`
	// Live says the cluster holds the workload already: Changes are against it.
	Live bool `json:"live"`
	// Result is the worst of the findings.
	Result   Result    `json:"result"`
	Findings []Finding `json:"checks"`
	// Changes are the fields that differ from the live current revision, riskiest first.
	Changes []Change `json:"changes"`
	// SignalGaps are what the new spec leaves the platform unable to see.
	SignalGaps []diagnose.SignalGap `json:"signalGaps"`
}

// Report is the answer of a preflight run.
type Report struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// CheckReferences says ConfigMap and Secret references were checked, by metadata only.
	CheckReferences bool `json:"checkReferences"`
	// Summary counts the findings by result.
	Summary   map[Result]int   `json:"summary"`
	Workloads []WorkloadReport `json:"workloads"`
	// Skipped counts the objects of the manifests that are not checked, by kind.
	Skipped map[string]int `json:"skipped,omitempty"`
}

// ReportKind is the kind of the document -o json prints.
const ReportKind = "PreflightReport"

// Failed reports whether any check failed.
func (r *Report) Failed() bool { return r.Summary[ResultFail] > 0 }

// check is one check: its ID, what it verifies (for the help and the README) and its detector.
type check struct {
	ID    CheckID
	Title string
	run   func(s *subject) []Finding
}

// subject is one workload with what the checks read about it.
type subject struct {
	w  *Workload
	m  *Manifests
	f  *Facts
	nf *NamespaceFacts
	// live is the live counterpart, nil when the cluster holds none or it could not be read.
	live *Live
	// pod is the template as a pod, the way the controller would create it.
	pod *corev1.Pod
	// eligible counts the nodes a copy fits on, filled by the node-fit check; -1 unknown.
	eligible int
}

var specPath = field.NewPath("spec", "template", "spec")

func (s *subject) finding(id CheckID, r Result, p *field.Path, format string, args ...any) Finding {
	f := Finding{Check: id, Result: r, Message: fmt.Sprintf(format, args...)}
	if p != nil {
		f.Path = p.String()
	}
	return f
}

// Checks lists the check IDs with their titles, in the order they run.
func Checks() [][2]string {
	out := make([][2]string, 0, len(checks))
	for _, c := range checks {
		out = append(out, [2]string{string(c.ID), c.Title})
	}
	return out
}

// Check runs every check on every workload of the manifests against the facts.
func Check(m *Manifests, f *Facts) *Report {
	r := &Report{
		APIVersion: diagnose.APIVersion, Kind: ReportKind, CheckReferences: f.CheckReferences,
		Summary: map[Result]int{}, Workloads: []WorkloadReport{},
	}
	if len(m.Skipped) > 0 {
		r.Skipped = m.Skipped
	}
	for _, w := range m.Workloads {
		s := newSubject(w, m, f)
		wr := WorkloadReport{
			Kind: w.Kind, Namespace: w.Namespace, Name: w.Name, Origin: w.Origin,
			Live: s.live != nil && s.live.Object != nil, Result: ResultPass,
			Findings: []Finding{}, Changes: changes(s), SignalGaps: signalGaps(s),
		}
		for _, c := range checks {
			wr.Findings = append(wr.Findings, c.run(s)...)
		}
		for _, fd := range wr.Findings {
			r.Summary[fd.Result]++
			if fd.Result.rank() > wr.Result.rank() {
				wr.Result = fd.Result
			}
		}
		r.Workloads = append(r.Workloads, wr)
	}
	sort.SliceStable(r.Workloads, func(i, j int) bool {
		a, b := r.Workloads[i], r.Workloads[j]
		if a.Result.rank() != b.Result.rank() {
			return a.Result.rank() > b.Result.rank()
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Name < b.Name
	})
	return r
}

func newSubject(w *Workload, m *Manifests, f *Facts) *subject {
	nf := f.namespace(w.Namespace)
	s := &subject{w: w, m: m, f: f, nf: nf, eligible: -1}
	if l := nf.Live[Key(w.Kind, w.Name)]; l != nil {
		s.live = l
	}
	s.pod = &corev1.Pod{ObjectMeta: *w.Template.ObjectMeta.DeepCopy(), Spec: *w.Template.Spec.DeepCopy()}
	s.pod.Namespace = w.Namespace
	if w.Kind == "DaemonSet" {
		addDaemonTolerations(s.pod)
	}
	return s
}

// servicesAfterApply are the namespace's Services with those of the manifests put in place.
func (s *subject) servicesAfterApply() []*corev1.Service {
	byName := map[string]*corev1.Service{}
	for _, svc := range s.nf.Services {
		byName[svc.Name] = svc
	}
	for _, svc := range s.m.Services {
		if svc.Namespace == s.w.Namespace {
			byName[svc.Name] = svc
		}
	}
	out := make([]*corev1.Service, 0, len(byName))
	for _, svc := range byName {
		out = append(out, svc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// namespaceAfterApply is the namespace as the manifests leave it: theirs when they hold it.
func (s *subject) namespaceAfterApply() *corev1.Namespace {
	for _, n := range s.m.Namespaces {
		if n.Name == s.w.Namespace {
			return n
		}
	}
	return s.nf.Namespace
}

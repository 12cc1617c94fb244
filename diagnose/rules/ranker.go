package rules

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Scores of the suspect rules. A specific rule that reads an unambiguous message scores
// scoreCertain; a changed field adds scoreChanged, so a changed field that the evidence
// implicates ranks above an unchanged one with the same evidence.
const (
	scoreCertain    = 90
	scoreLikely     = 60
	scorePossible   = 30
	scoreChanged    = 40
	scoreUnnamed    = 15 // changed, but nothing names it
	highThreshold   = 80
	mediumThreshold = 45
)

// The scores the engine adds and reads: the changed-field bonus, a change nothing names, and
// the thresholds of high and medium confidence.
const (
	ScoreChanged    = scoreChanged
	ScoreUnnamed    = scoreUnnamed
	HighThreshold   = highThreshold
	MediumThreshold = mediumThreshold
)

// ranker is what a detector runs on: the input it reads and the sink it records to, and the
// family running, which it holds to the rules the family owns.
type ranker struct {
	in       *Input
	out      Sink
	tplPath  *field.Path // spec.template
	specPath *field.Path // spec.template.spec
	// running is the family whose detector runs; strays counts suspects it recorded of rules
	// it does not own, which the catalogue test holds at zero.
	running *family
	strays  []RuleID
}

// Runner runs the families; the engine keeps one beside each workload's sink, so a run
// allocates nothing of its own.
type Runner struct {
	r ranker
}

// Run applies every rule family to in, in catalogue order, recording to out. It returns the
// rules detectors recorded that their family does not own (none, or the catalogue drifted).
func (run *Runner) Run(in *Input, out Sink) (strays []RuleID) {
	tp := in.TemplatePath
	if tp == nil {
		tp = field.NewPath("spec", "template")
	}
	if in.Paths == nil {
		in.Paths = &Paths{}
	}
	sp := in.SpecPath
	if sp == nil {
		sp = tp.Child("spec")
	}
	run.r = ranker{in: in, out: out, tplPath: tp, specPath: sp}
	r := &run.r
	for _, f := range families() {
		r.running = f
		out.ReadAll(nil)
		f.detect(r)
	}
	out.ReadAll(nil)
	return r.strays
}

// holds notes a rule the running family does not own.
func (r *ranker) holds(rule RuleID) {
	if r.running != nil && !r.running.owns(rule) {
		r.strays = append(r.strays, rule)
	}
}

func (r *ranker) read(s *Signal)            { r.out.Read(s) }
func (r *ranker) readAll(sigs []*Signal)    { r.out.ReadAll(sigs) }
func (r *ranker) recorded(rule RuleID) bool { return r.out.Recorded(rule) }
func (r *ranker) covers(object, ps string) bool {
	return r.out.Covers(object, ps)
}

// suspectTemplate records a template field as a suspect. base is the rule's score before the
// changed-field bonus.
func (r *ranker) suspectTemplate(rule RuleID, path *field.Path, base int, reason string) {
	r.holds(rule)
	r.out.Template(rule, path, base, reason)
}

// templateSuspect is the finding suspectTemplate records, for a rule that adds to it.
func (r *ranker) templateSuspect(rule RuleID, path *field.Path, base int, reason string) Finding {
	return r.out.TemplateFinding(rule, path, base, reason)
}

// record records a finding as it is.
func (r *ranker) record(f Finding) {
	r.holds(f.Rule)
	r.out.Record(f)
}

// suspectWorkload records a field of the workload's own object outside its template.
func (r *ranker) suspectWorkload(rule RuleID, path *field.Path, base int, reason string) {
	r.holds(rule)
	r.out.Workload(rule, path, base, reason)
}

// suspectObject records a field of another object (a Service, a claim, a node) as a suspect;
// obj is the typed object the path is rooted at.
func (r *ranker) suspectObject(rule RuleID, object string, obj any, path *field.Path, base int, reason string) {
	r.holds(rule)
	r.out.Object(rule, object, obj, path, base, reason)
}

// previous returns the field's value in the last revision that served and whether the field
// (or a field beneath or above it) changed since.
func (r *ranker) previous(path *field.Path) (string, bool) { return r.out.Previous(path) }

func (r *ranker) pathString(p *field.Path) string  { return r.in.Paths.String(p) }
func (r *ranker) knowPath(p *field.Path, s string) { r.in.Paths.Know(p, s) }

// containerRef is a container of the template with its path.
type containerRef struct {
	c    *corev1.Container
	path *field.Path
}

// containers lists the template's init and regular containers with their paths.
func (r *ranker) containers() []containerRef {
	spec := &r.in.Template.Spec
	var out []containerRef
	for i := range spec.InitContainers {
		out = append(out, containerRef{&spec.InitContainers[i], r.specPath.Child("initContainers").Index(i)})
	}
	for i := range spec.Containers {
		out = append(out, containerRef{&spec.Containers[i], r.specPath.Child("containers").Index(i)})
	}
	return out
}

// containersOf returns the container a signal came from, or every container when the signal
// does not say.
func (r *ranker) containersOf(s *Signal) []containerRef {
	all := r.containers()
	if s.Container != "" {
		for _, c := range all {
			if c.c.Name == s.Container {
				return []containerRef{c}
			}
		}
	}
	return all
}

// copiesOf says which copies the signals were seen on, every line of a log signal counted,
// for reasons.
func (r *ranker) copiesOf(sigs []*Signal) string {
	pods := map[string]bool{}
	var logged []bool
	for _, s := range sigs {
		if s.Lines != nil {
			if logged == nil {
				logged = make([]bool, len(r.in.Copies))
			}
			for _, h := range s.Lines {
				logged[h.Copy] = true
			}
			continue
		}
		if s.Pod != "" {
			pods[s.Pod] = true
		}
	}
	for i, ok := range logged {
		if ok {
			pods[r.in.Copies[i].Name] = true
		}
	}
	switch len(pods) {
	case 0:
		return ""
	case 1:
		return " (1 copy)"
	default:
		return fmt.Sprintf(" (%d copies)", len(pods))
	}
}

package diagnose

import (
	"fmt"
	"sort"

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

// rankSuspects names the spec fields most likely responsible for the workload's failure,
// best first. Order is deterministic: score, then object and path.
func rankSuspects(w *workload) []Suspect {
	if w == nil || w.Template == nil || w.Shape == ShapeHealthy ||
		w.Shape == ShapeProgressing && w.cls.failingWhileProgressing == "" {
		return nil
	}
	r := newRanker(w)
	r.run()
	// After every family: it reranks the changed fields when nothing could name one.
	r.changesByFailureLook()
	if w.Shape.Broken() {
		w.cls.target = r.dependencyTarget()
	}
	return r.ranked()
}

// ranker gathers suspects for one workload.
type ranker struct {
	// paths holds the String of each path the rules asked about (pathString).
	paths map[*field.Path]string
	// w is the engine's side of the workload, for recording; a detector reads in only.
	w        *workload
	in       ruleInput
	object   string
	tplPath  *field.Path // spec.template
	specPath *field.Path // spec.template.spec
	found    map[string]*Suspect
	// fields remembers each template field's current and previous value once looked up: the
	// rules suggest the same field for every copy's signal, and the lookup walks the template.
	fields map[string]*fieldFacts
	// running is the family whose detector runs; strays counts suspects it recorded of rules
	// it does not own, which the catalogue test holds at zero.
	running *family
	strays  []RuleID
	// reading is the signals the running rule reads: a suspect it records cites their
	// observations. one holds a single signal without allocating; single says the rule reads
	// it as one line (read), not all of its lines (readAll).
	reading []*signal
	one     [1]*signal
	single  bool
	// ordObs is the observation of each place among a signal per line, ordCount a count by
	// place (citations).
	ordObs, ordCount []int32
}

// read says the rule reads signal s as one line, the first it was seen on: a rule that reads
// signals one by one decides the same on every line of a text (what it reads is the text,
// reason, container and exit code, which the lines share), so its suspects cite the first.
func (r *ranker) read(s *signal) {
	r.one[0] = s
	r.reading = r.one[:]
	r.single = true
}

// readAll says the rule reads sigs together, every line of each.
func (r *ranker) readAll(sigs []*signal) {
	r.reading = sigs
	r.single = false
}

// run applies every rule family in catalogue order.
func (r *ranker) run() {
	for _, f := range families() {
		r.running = f
		r.readAll(nil)
		f.detect(r)
	}
	r.readAll(nil)
	r.running = nil
}

// fieldFacts is what the ranker knows of one template field.
type fieldFacts struct {
	value, previous string
	changed         bool
}

func newRanker(w *workload) *ranker {
	r := &ranker{w: w, in: newRuleInput(w, collectSignals(w)), found: map[string]*Suspect{}}
	r.object, r.tplPath, r.specPath = r.in.Object, r.in.TemplatePath, specOf(r.in.TemplatePath)
	return r
}

// suspectTemplate records a template field as a suspect. base is the rule's score before the
// changed-field bonus.
func (r *ranker) suspectTemplate(rule RuleID, path *field.Path, base int, reason string) {
	r.record(r.templateSuspect(rule, path, base, reason))
}

// templateSuspect is the suspect suspectTemplate records, for a rule that adds to it.
func (r *ranker) templateSuspect(rule RuleID, path *field.Path, base int, reason string) Suspect {
	f := r.field(path)
	score := base
	if f.changed {
		score += scoreChanged
	}
	return Suspect{Rule: rule, Object: r.object, Path: path, Value: f.value, PreviousValue: f.previous, Reason: reason, Score: score}
}

// field looks a template field up once per ranker.
func (r *ranker) field(path *field.Path) *fieldFacts {
	key := r.pathString(path)
	if f, ok := r.fields[key]; ok {
		return f
	}
	f := &fieldFacts{}
	f.value, _ = valueAtText(r.tplPath, r.in.Template, key)
	f.previous, f.changed = r.lookupPrevious(key)
	if h := &r.w.cls.history; !f.changed && h.LastServing != nil && h.LastServing == h.Current {
		// The revision that served is the current one: it held this very value.
		f.previous = f.value
	}
	if r.fields == nil {
		r.fields = map[string]*fieldFacts{}
	}
	r.fields[key] = f
	return f
}

// suspectObject records a field of another object (the workload itself outside its template,
// or a Service) as a suspect; obj is the typed object the path is rooted at.
func (r *ranker) suspectObject(rule RuleID, object string, obj any, path *field.Path, base int, reason string) {
	value, _ := valueAt(nil, obj, path)
	r.record(Suspect{Rule: rule, Object: object, Path: path, Value: value, Reason: reason, Score: base})
}

// recorded reports whether a suspect of the rule is recorded.
func (r *ranker) recorded(rule RuleID) bool {
	for _, s := range r.found {
		if s.Rule == rule {
			return true
		}
	}
	return false
}

// covers reports whether a suspect recorded on object lies at, beneath or above the field
// whose path.String() is ps.
func (r *ranker) covers(object, ps string) bool {
	for _, s := range r.found {
		if sp := r.pathString(s.Path); s.Object == object && (pathHasPrefix(sp, ps) || pathHasPrefix(ps, sp)) {
			return true
		}
	}
	return false
}

// pathString is p.String(), written once per path a workload's rules ask about: the rules
// look the same paths up, record them and compare them with the changes many times over.
// Paths are never changed once built, so the pointer is the key.
func (r *ranker) pathString(p *field.Path) string {
	if p == nil {
		return p.String()
	}
	if s, ok := r.paths[p]; ok {
		return s
	}
	s := p.String()
	r.knowPath(p, s)
	return s
}

// knowPath files s as p's String, written by a walk.
func (r *ranker) knowPath(p *field.Path, s string) {
	if r.paths == nil {
		r.paths = map[*field.Path]string{}
	}
	r.paths[p] = s
}

func (r *ranker) record(s Suspect) {
	if r.running != nil && !r.running.owns(s.Rule) {
		r.strays = append(r.strays, s.Rule)
	}
	key := s.Object + " " + r.pathString(s.Path)
	if old, ok := r.found[key]; ok {
		if old.Score >= s.Score {
			return
		}
	}
	s.Confidence = confidenceOf(s.Score)
	s.Observations = r.citations()
	if r.found == nil {
		r.found = map[string]*Suspect{}
	}
	r.found[key] = &s
}

// citations are the observations the signals being read were read from, in the order a
// signal per log line would cite them: by ord, which the reading lists (built in the order of
// r.signals) follow, a signal listed twice citing each of its lines twice in a row.
func (r *ranker) citations() []int32 {
	var out []int32
	grouped := false
	for _, sg := range r.reading {
		grouped = grouped || len(sg.lines) > 1
	}
	if r.single || !grouped {
		for _, sg := range r.reading {
			if sg.obs >= 0 {
				out = append(out, int32(sg.obs))
			}
		}
		return out
	}
	// Each place counted, then read in order: ords are dense, and sorting cost more.
	if r.ordObs == nil {
		n := 0
		for _, sg := range r.in.Signals {
			n = max(n, int(sg.ord)+1)
			for _, h := range sg.lines {
				n = max(n, int(h.ord)+1)
			}
		}
		r.ordObs, r.ordCount = r.w.texts.ordRoom(n)
		for _, sg := range r.in.Signals {
			r.ordObs[sg.ord] = int32(sg.obs)
			for _, h := range sg.lines {
				r.ordObs[h.ord] = h.obs
			}
		}
	}
	cited := 0
	for _, sg := range r.reading {
		if sg.lines == nil {
			r.ordCount[sg.ord]++
			cited++
			continue
		}
		for _, h := range sg.lines {
			r.ordCount[h.ord]++
		}
		cited += len(sg.lines)
	}
	out = make([]int32, 0, cited)
	for ord, c := range r.ordCount {
		if c == 0 {
			continue
		}
		r.ordCount[ord] = 0
		if obs := r.ordObs[ord]; obs >= 0 {
			for ; c > 0; c-- {
				out = append(out, obs)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// previous returns the field's value in the last revision that served and whether the field
// (or a field beneath or above it) changed since.
func (r *ranker) previous(path *field.Path) (string, bool) {
	f := r.field(path)
	return f.previous, f.changed
}

// lookupPrevious reads the previous value and the change from the revision diff of the field
// whose path.String() is ps.
func (r *ranker) lookupPrevious(ps string) (string, bool) {
	changed, prev, exact := false, "", false
	for _, c := range r.w.Changes {
		if c.Path == nil {
			continue
		}
		cs := r.pathString(c.Path)
		if pathHasPrefix(cs, ps) || pathHasPrefix(ps, cs) {
			changed = true
		}
		if cs == ps {
			prev, exact = c.Previous, true
		}
	}
	if !exact && r.w.PreviousTemplate != nil {
		prev, _ = valueAtText(r.tplPath, r.w.PreviousTemplate, ps)
	}
	return prev, changed
}

func confidenceOf(score int) Confidence {
	switch {
	case score >= highThreshold:
		return ConfidenceHigh
	case score >= mediumThreshold:
		return ConfidenceMedium
	default:
		return ConfidenceLow
	}
}

func (r *ranker) ranked() []Suspect {
	out := make([]Suspect, 0, len(r.found))
	for _, s := range r.found {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		if out[i].Object != out[j].Object {
			return out[i].Object < out[j].Object
		}
		return out[i].Path.String() < out[j].Path.String()
	})
	return out
}

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
func (r *ranker) containersOf(s *signal) []containerRef {
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
func (r *ranker) copiesOf(sigs []*signal) string {
	pods := map[string]bool{}
	var logged []bool
	for _, s := range sigs {
		if s.lines != nil {
			if logged == nil {
				logged = make([]bool, len(r.in.Pods))
			}
			for _, h := range s.lines {
				logged[h.copy] = true
			}
			continue
		}
		if s.Pod != "" {
			pods[s.Pod] = true
		}
	}
	for i, ok := range logged {
		if ok {
			pods[r.in.Pods[i].Name] = true
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

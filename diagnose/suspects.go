package diagnose

import (
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
)

// The scores the engine adds and reads, as the rules define them.
const (
	scoreChanged    = rules.ScoreChanged
	scoreUnnamed    = rules.ScoreUnnamed
	highThreshold   = rules.HighThreshold
	mediumThreshold = rules.MediumThreshold
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

// ranker gathers suspects for one workload: it is the sink the rule families record to
// (rules.Sink), and it ranks what they found.
type ranker struct {
	// paths holds the String of each path the rules asked about (pathString).
	paths rules.Paths
	// w is the engine's side of the workload, for recording; the detectors read in only.
	w        *workload
	in       rules.Input
	object   string
	tplPath  *field.Path // spec.template
	specPath *field.Path // spec.template.spec
	found    map[string]*Suspect
	// fields remembers each template field's current and previous value once looked up: the
	// rules suggest the same field for every copy's signal, and the lookup walks the template.
	fields map[string]*fieldFacts
	// strays are the rules detectors recorded that their family does not own, which the
	// catalogue test holds at none.
	strays []RuleID
	// runner runs the families on in, recording here.
	runner rules.Runner
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
	r.in.Paths = &r.paths
	r.strays = r.runner.Run(&r.in, r)
}

// fieldFacts is what the ranker knows of one template field.
type fieldFacts struct {
	value, previous string
	changed         bool
}

func newRanker(w *workload) *ranker {
	r := w.texts.rankRoom()
	*r = ranker{w: w, in: newRuleInput(w, collectSignals(w)), found: map[string]*Suspect{}}
	r.object, r.tplPath, r.specPath = r.in.Object, r.in.TemplatePath, r.in.SpecPath
	return r
}

// Template records a template field as a suspect (rules.Sink).
func (r *ranker) Template(rule RuleID, path *field.Path, base int, reason string) {
	r.suspectTemplate(rule, path, base, reason)
}

// TemplateFinding is the finding Template records (rules.Sink).
func (r *ranker) TemplateFinding(rule RuleID, path *field.Path, base int, reason string) rules.Finding {
	s := r.templateSuspect(rule, path, base, reason)
	return rules.Finding{Rule: s.Rule, Object: s.Object, Path: s.Path, Value: s.Value, PreviousValue: s.PreviousValue, Reason: s.Reason, Score: s.Score}
}

// Workload records a field of the workload's own object as a suspect (rules.Sink).
func (r *ranker) Workload(rule RuleID, path *field.Path, base int, reason string) {
	r.suspectObject(rule, r.object, r.w.Object, path, base, reason)
}

// Object records a field of another object as a suspect (rules.Sink).
func (r *ranker) Object(rule RuleID, object string, obj any, path *field.Path, base int, reason string) {
	r.suspectObject(rule, object, obj, path, base, reason)
}

// Record records a finding as it is (rules.Sink).
func (r *ranker) Record(f rules.Finding) {
	r.record(Suspect{
		Rule: f.Rule, Object: f.Object, Path: f.Path, Value: f.Value, PreviousValue: f.PreviousValue,
		Reason: f.Reason, Score: f.Score, Variable: f.Variable,
	})
}

// Read says the rule reads s as one line (rules.Sink).
func (r *ranker) Read(s *signal) { r.read(s) }

// ReadAll says the rule reads sigs together (rules.Sink).
func (r *ranker) ReadAll(sigs []*signal) { r.readAll(sigs) }

// Previous is a template field's value in the last revision that served and whether it
// changed since (rules.Sink).
func (r *ranker) Previous(path *field.Path) (string, bool) { return r.previous(path) }

// Recorded reports whether a suspect of the rule is recorded (rules.Sink).
func (r *ranker) Recorded(rule RuleID) bool { return r.recorded(rule) }

// Covers reports whether a recorded suspect on object overlaps the field at ps (rules.Sink).
func (r *ranker) Covers(object, ps string) bool { return r.covers(object, ps) }

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
	f.value, _ = fieldpath.ValueAtText(r.tplPath, r.in.Template, key)
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
	value, _ := fieldpath.ValueAt(nil, obj, path)
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
		if sp := r.pathString(s.Path); s.Object == object && (fieldpath.HasPrefix(sp, ps) || fieldpath.HasPrefix(ps, sp)) {
			return true
		}
	}
	return false
}

// pathString is p.String(), written once per path a workload's rules ask about.
func (r *ranker) pathString(p *field.Path) string { return r.paths.String(p) }

func (r *ranker) record(s Suspect) {
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
		grouped = grouped || len(sg.Lines) > 1
	}
	if r.single || !grouped {
		for _, sg := range r.reading {
			if sg.Obs >= 0 {
				out = append(out, int32(sg.Obs))
			}
		}
		return out
	}
	// Each place counted, then read in order: ords are dense, and sorting cost more.
	if r.ordObs == nil {
		n := 0
		for _, sg := range r.in.Signals {
			n = max(n, int(sg.Ord)+1)
			for _, h := range sg.Lines {
				n = max(n, int(h.Ord)+1)
			}
		}
		r.ordObs, r.ordCount = r.w.texts.ordRoom(n)
		for _, sg := range r.in.Signals {
			r.ordObs[sg.Ord] = int32(sg.Obs)
			for _, h := range sg.Lines {
				r.ordObs[h.Ord] = h.Obs
			}
		}
	}
	cited := 0
	for _, sg := range r.reading {
		if sg.Lines == nil {
			r.ordCount[sg.Ord]++
			cited++
			continue
		}
		for _, h := range sg.Lines {
			r.ordCount[h.Ord]++
		}
		cited += len(sg.Lines)
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
		if fieldpath.HasPrefix(cs, ps) || fieldpath.HasPrefix(ps, cs) {
			changed = true
		}
		if cs == ps {
			prev, exact = c.Previous, true
		}
	}
	if !exact && r.w.PreviousTemplate != nil {
		prev, _ = fieldpath.ValueAtText(r.tplPath, r.w.PreviousTemplate, ps)
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

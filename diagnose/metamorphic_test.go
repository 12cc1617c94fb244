package diagnose

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
	"github.com/kubediagnose/kubectl-diagnose/test/metamorph"
)

// Metamorphic relations (issue 37): transformations of every scenario's and fixture's
// snapshot that keep what each workload's failure means must keep its shape, its top suspect
// and its cause; the one that moves a single-revision failure after a long serving episode
// must turn its cause to dependency. The relations compare the engine with itself, on the
// snapshot as loaded and as transformed, so a new fixture is covered as soon as it is added.

// mmVerdict is what a relation compares of a diagnosis.
type mmVerdict struct {
	Shape   Shape
	Cause   Cause
	Suspect string // object and path of the top suspect, map keys read as fields; "" for none
}

func mmVerdictOf(d *Diagnosis) mmVerdict {
	v := mmVerdict{Shape: d.Shape, Cause: d.Cause}
	if len(d.Suspects) > 0 {
		v.Suspect = d.Suspects[0].Object + " " + mmFieldPath(pathString(d.Suspects[0]))
	}
	return v
}

func (v mmVerdict) String() string {
	s := v.Suspect
	if s == "" {
		s = "no suspect"
	}
	return fmt.Sprintf("%s/%s/%s", v.Shape, v.Cause, s)
}

// mmFieldPath writes a path's map keys as fields, as the verdict files compare them.
func mmFieldPath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		j := strings.IndexByte(p[i:], ']')
		if p[i] != '[' || j < 0 || strings.Trim(p[i+1:i+j], "0123456789") == "" {
			b.WriteByte(p[i])
			continue
		}
		b.WriteString("." + p[i+1:i+j])
		i += j
	}
	return b.String()
}

// mmDifferences lists how got differs from want, one "field: before -> after" each.
func mmDifferences(want, got mmVerdict) []string {
	var out []string
	if want.Shape != got.Shape {
		out = append(out, fmt.Sprintf("shape: %s -> %s", want.Shape, got.Shape))
	}
	if want.Cause != got.Cause {
		out = append(out, fmt.Sprintf("cause: %s -> %s", want.Cause, got.Cause))
	}
	if want.Suspect != got.Suspect {
		out = append(out, fmt.Sprintf("top suspect: %s -> %s", mmOrNone(want.Suspect), mmOrNone(got.Suspect)))
	}
	return out
}

func mmOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// mmRelation judges one workload's diagnosis after a transformation against the one before it;
// s is the snapshot before.
type mmRelation func(s *snapshot.Snapshot, w metamorph.Workload, before, after *Diagnosis) []string

// mmUnchanged holds shape, top suspect and cause to what they were.
func mmUnchanged(_ *snapshot.Snapshot, _ metamorph.Workload, before, after *Diagnosis) []string {
	return mmDifferences(mmVerdictOf(before), mmVerdictOf(after))
}

// mmLogsRemoved is the relation of a snapshot without logs. Where no log line was evidence, the
// verdict stands whole. Where one was, the shape stands, the cause may become unknown but
// never the other cause, and the top suspect stays, or becomes one of the fields the current
// revision changed where it changed any, or, where it changed none, may go.
func mmLogsRemoved(s *snapshot.Snapshot, w metamorph.Workload, before, after *Diagnosis) []string {
	b, a := mmVerdictOf(before), mmVerdictOf(after)
	if !mmLogEvidence(before) {
		return mmDifferences(b, a)
	}
	if mmOnlyLogsShowIdle(before) && a.Shape == ShapeHealthy && len(after.Suspects) == 0 {
		// Ready copies that do no work are seen in their logs alone: without the logs they
		// serve, and nothing is left to suspect.
		return nil
	}
	var out []string
	if b.Shape != a.Shape {
		out = append(out, fmt.Sprintf("shape: %s -> %s", b.Shape, a.Shape))
	}
	if a.Cause != b.Cause && a.Cause != CauseUnknown {
		out = append(out, fmt.Sprintf("cause: %s -> %s (only unknown may replace a cause a log line carried)", b.Cause, a.Cause))
	}
	if a.Suspect == b.Suspect {
		return out
	}
	changed := metamorph.ChangedFields(s, w)
	self := w.Kind + "/" + w.Name
	if len(changed) == 0 {
		if a.Suspect != "" {
			out = append(out, fmt.Sprintf("top suspect: %s -> %s (the revision changed no field)", mmOrNone(b.Suspect), a.Suspect))
		}
		return out
	}
	if len(after.Suspects) > 0 && after.Suspects[0].Object == self {
		for _, c := range changed {
			if metamorph.Related(pathString(after.Suspects[0]), c) {
				return out
			}
		}
	}
	return append(out, fmt.Sprintf("top suspect: %s -> %s, not one of the fields the revision changed: %s",
		mmOrNone(b.Suspect), mmOrNone(a.Suspect), strings.Join(changed, ", ")))
}

// mmOnlyLogsShowIdle reports a diagnosis whose copies that do not serve are all Ready copies
// whose logs keep failing to reach their own endpoint (ConnectFailing).
func mmOnlyLogsShowIdle(d *Diagnosis) bool {
	idle := 0
	for _, c := range d.Detail.Copies() {
		if c.Serving {
			continue
		}
		if c.Reason != "ConnectFailing" {
			return false
		}
		idle++
	}
	return idle > 0
}

func mmLogEvidence(d *Diagnosis) bool {
	for _, e := range d.Evidence {
		if e.Source == SourceLog {
			return true
		}
	}
	return false
}

// mmVariant is one transformation of a whole snapshot and the relation it must keep.
type mmVariant struct {
	name     string
	make     func(s *snapshot.Snapshot) (*snapshot.Snapshot, error)
	relation mmRelation
	// logs marks the transformations of the log tails alone.
	logs bool
}

// stretchBy is how much longer the copies of a revision failing from its start were Ready:
// the several minutes a filling buffer or a patient retry loop gives them.
const stretchBy = 10 * time.Minute

// servedFor is how long a single revision served before its failure in the variant that must
// flip its cause.
const servedFor = 6 * 24 * time.Hour

func mmVariants() []mmVariant {
	vs := []mmVariant{
		{"logs-removed", metamorph.WithoutLogs, mmLogsRemoved, true},
	}
	for _, l := range []string{"error", "warn", ""} {
		name := "level-" + l
		if l == "" {
			name = "level-none"
		}
		vs = append(vs, mmVariant{name, func(s *snapshot.Snapshot) (*snapshot.Snapshot, error) { return metamorph.Relevel(s, l) }, mmUnchanged, true})
	}
	for i := range 2 {
		vs = append(vs, mmVariant{fmt.Sprintf("reworded-%d", i), func(s *snapshot.Snapshot) (*snapshot.Snapshot, error) { return metamorph.Reword(s, i) }, mmUnchanged, true})
	}
	for _, enc := range []metamorph.Encoding{metamorph.JSON, metamorph.Logfmt, metamorph.Plain} {
		vs = append(vs, mmVariant{"encoded-" + enc.String(), func(s *snapshot.Snapshot) (*snapshot.Snapshot, error) { return metamorph.Reencode(s, enc) }, mmUnchanged, true})
	}
	// A whole number of days keeps daily cron schedules true to their runs; 35 days from the
	// fixtures' late November crosses a year's end.
	vs = append(vs, mmVariant{"shifted-35d", func(s *snapshot.Snapshot) (*snapshot.Snapshot, error) {
		return metamorph.Shift(s, 35*24*time.Hour), nil
	}, mmUnchanged, false})
	vs = append(vs, mmVariant{"renamed", func(s *snapshot.Snapshot) (*snapshot.Snapshot, error) {
		c, _, err := metamorph.Rename(s)
		return c, err
	}, mmUnchanged, false})
	return vs
}

// mmDumps holds each verdict directory's snapshot as loaded, read by every metamorphic test
// and never changed: transformations clone it, and it is diagnosed only as a clone (the
// engine indexes what it reads).
var mmDumps sync.Map

func mmLoad(t *testing.T, vd verdictDir) (*snapshot.Snapshot, expected) {
	t.Helper()
	type loaded struct {
		s *snapshot.Snapshot
		e expected
	}
	if l, ok := mmDumps.Load(vd.Dir); ok {
		return l.(loaded).s, l.(loaded).e
	}
	e := loadExpected(t, vd.Dir)
	s := loadDump(t, vd.Dir, e)
	mmDumps.Store(vd.Dir, loaded{s, e})
	return s, e
}

func mmWorkloadOf(d *Diagnosis) metamorph.Workload {
	return metamorph.Workload{Kind: d.Kind, Namespace: d.Namespace, Name: d.Name}
}

// mmCheckRelation diagnoses the transformed snapshot and holds each of the workloads (all of
// the report's when only is nil) to rel, and to the story checker's snapshot oracles.
func mmCheckRelation(t *testing.T, s, got *snapshot.Snapshot, before *Report, only *metamorph.Workload, rel mmRelation) {
	t.Helper()
	after := Diagnose(got)
	for i := range before.Workloads {
		b := &before.Workloads[i]
		w := mmWorkloadOf(b)
		if only != nil && w != *only {
			continue
		}
		a := after.Find(b.Kind, b.Namespace, b.Name)
		if a == nil {
			t.Errorf("%s: no diagnosis after the transformation", w)
			continue
		}
		for _, d := range rel(s, w, b, a) {
			t.Errorf("%s %s: %s", b.Kind, b.Name, d)
		}
		// A variant is a snapshot like any other: the story checker's oracles hold for it too,
		// and a stretched Ready period is where "served" is claimed wrongly.
		for _, d := range servedContradictions(got, a) {
			t.Errorf("%s %s: one story: %s", b.Kind, b.Name, d)
		}
		if why, ok := progressingInFact(got, w); ok && strings.Contains(a.Fix, "rollout undo") {
			t.Errorf("%s %s: one story: a rollback advised for a rollout that is progressing (%s): %s", b.Kind, b.Name, why, a.Fix)
		}
	}
}

// TestMetamorphic holds every scenario and fixture to the relations that keep the verdict:
// logs removed, failing lines re-levelled, reworded and re-encoded, every time shifted, the
// copies renamed, and the Ready period of a revision failing from its start stretched. A
// transformation with nothing to change in a snapshot is left out, with its reason logged.
func TestMetamorphic(t *testing.T) {
	variants := mmVariants()
	for _, vd := range verdictDirs(t) {
		t.Run(vd.ID, func(t *testing.T) {
			t.Parallel()
			s, _ := mmLoad(t, vd)
			before := Diagnose(metamorph.Clone(s))
			for _, v := range variants {
				got, err := v.make(s)
				if errors.Is(err, metamorph.ErrNotApplicable) {
					t.Logf("%s: %v", v.name, err)
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", v.name, err)
				}
				t.Run(v.name, func(t *testing.T) { mmCheckRelation(t, s, got, before, nil, v.relation) })
			}
			for i := range before.Workloads {
				w := mmWorkloadOf(&before.Workloads[i])
				got, err := metamorph.StretchReady(s, w, stretchBy)
				if errors.Is(err, metamorph.ErrNotApplicable) {
					t.Logf("ready-stretched %s %s: %v", w.Kind, w.Name, err)
					continue
				}
				if err != nil {
					t.Fatalf("ready-stretched %s: %v", w, err)
				}
				t.Run("ready-stretched/"+w.Kind+"/"+w.Name, func(t *testing.T) { mmCheckRelation(t, s, got, before, &w, mmUnchanged) })
				// The stretched history read through each log transformation: the relations
				// compose, and a long Ready period is where a reading of the logs that leans on
				// one wording, one level or one format decides "served".
				for _, v := range variants {
					if !v.logs {
						continue
					}
					both, err := v.make(got)
					if errors.Is(err, metamorph.ErrNotApplicable) {
						continue
					}
					if err != nil {
						t.Fatalf("ready-stretched+%s %s: %v", v.name, w, err)
					}
					t.Run("ready-stretched+"+v.name+"/"+w.Kind+"/"+w.Name, func(t *testing.T) { mmCheckRelation(t, s, both, before, &w, v.relation) })
				}
			}
		})
	}
}

// unfaithfulFlips are the spec-caused single-revision Deployments ServeThenFail could turn,
// but not faithfully: the snapshot holds a fact that rules out the constructed serving
// episode. Keyed "<scenario or fixture id> <Kind>/<name>".
var unfaithfulFlips = map[string]string{
	"fixtures/insufficient-cpu Deployment/video-transcoder": "the nodes, which the construction dates as old as the episode, have 8 vCPUs: a copy requesting 12 cannot have run on them",
	"fixtures/node-selector Deployment/image-resizer":       "every node, as old as the episode, is amd64: a copy selecting arm64 cannot have run on them",
}

// mmFlipCase is a spec-caused workload of a verdict file and the variant built from it.
type mmFlipCase struct {
	key  string
	w    metamorph.Workload
	s    *snapshot.Snapshot
	flip *snapshot.Snapshot
	// reason says why there is no variant: ServeThenFail's, or unfaithfulFlips'.
	reason string
}

func mmFlipCases(t *testing.T) []mmFlipCase {
	t.Helper()
	var out []mmFlipCase
	for _, vd := range verdictDirs(t) {
		s, e := mmLoad(t, vd)
		for _, want := range e.Workloads {
			if want.Cause != CauseSpec {
				continue
			}
			c := mmFlipCase{
				key: vd.ID + " " + want.Kind + "/" + want.Name, s: s,
				w: metamorph.Workload{Kind: want.Kind, Namespace: want.Namespace, Name: want.Name},
			}
			if want.Suspect != nil && want.Suspect.Object != want.Kind+"/"+want.Name {
				c.reason = "the suspect is on " + want.Suspect.Object + ": the workload's own serving episode says nothing of that object's spec"
				out = append(out, c)
				continue
			}
			flip, err := metamorph.ServeThenFail(s, c.w, servedFor)
			switch {
			case errors.Is(err, metamorph.ErrNotApplicable):
				c.reason = err.Error()
			case err != nil:
				t.Fatalf("%s: %v", c.key, err)
			case unfaithfulFlips[c.key] != "":
				c.reason = unfaithfulFlips[c.key]
			default:
				c.flip = flip
			}
			out = append(out, c)
		}
	}
	return out
}

// TestMetamorphicServeThenFail moves every spec-caused single-revision failure after a long
// serving episode of the same revision: the same failure, begun long after the revision
// served with its spec unchanged, came from outside, so the cause must be dependency, with the
// shape and the top suspect as they were.
func TestMetamorphicServeThenFail(t *testing.T) {
	turned := 0
	for _, c := range mmFlipCases(t) {
		if c.flip == nil {
			t.Logf("%s: not turned: %s", c.key, c.reason)
			continue
		}
		turned++
		t.Run(c.key, func(t *testing.T) {
			before := Diagnose(metamorph.Clone(c.s)).Find(c.w.Kind, c.w.Namespace, c.w.Name)
			after := Diagnose(c.flip).Find(c.w.Kind, c.w.Namespace, c.w.Name)
			if before == nil || after == nil {
				t.Fatalf("no diagnosis of %s before or after", c.w)
			}
			want := mmVerdictOf(before)
			want.Cause = CauseDependency
			for _, d := range mmDifferences(want, mmVerdictOf(after)) {
				t.Errorf("%s (constructed: served %s, then the same failure)", d, servedFor)
			}
		})
	}
	if turned < 5 {
		t.Errorf("only %d spec-caused workloads could be turned; the variant needs a few to mean anything", turned)
	}
}

// TestMetamorphicFlipTableIsCurrent keeps unfaithfulFlips to cases that exist and that the
// construction would otherwise turn, so a stated reason cannot outlive its case.
func TestMetamorphicFlipTableIsCurrent(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range mmFlipCases(t) {
		if _, listed := unfaithfulFlips[c.key]; !listed {
			continue
		}
		seen[c.key] = true
		if _, err := metamorph.ServeThenFail(c.s, c.w, servedFor); err != nil {
			t.Errorf("%s is listed as unfaithful, but the construction does not apply to it anyway: %v", c.key, err)
		}
	}
	for k := range unfaithfulFlips {
		if !seen[k] {
			t.Errorf("%s is listed as unfaithful, but no verdict file has it as a spec-caused workload", k)
		}
	}
}

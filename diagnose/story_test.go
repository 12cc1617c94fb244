package diagnose

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
	"github.com/kubediagnose/kubectl-diagnose/test/metamorph"
)

// One story, never two: the cause, the last serving revision, the diff, the headline and the fix
// must agree. These tests walk every scenario, fixture and golden report.

// storyContradictions lists what a diagnosis says twice and differently, from its report fields
// alone (so it also reads golden JSON).
func storyContradictions(d *Diagnosis) []string {
	var out []string
	self := d.Kind + "/" + d.Name
	var top *Suspect
	if len(d.Suspects) > 0 {
		top = &d.Suspects[0]
	}
	served := d.Revisions != nil && d.Revisions.LastServing != ""
	unchanged := served && d.Revisions.LastServing == d.Revisions.Current
	if d.Cause == CauseSpec && top != nil && top.Object == self && unchanged {
		out = append(out, "cause spec on a suspect of the workload's own spec, which is unchanged since its current revision served")
	}
	if d.Cause == CauseDependency {
		if strings.Contains(d.Fix, "rollout undo") || strings.HasPrefix(d.Fix, "set ") || strings.HasPrefix(d.Fix, "change ") || strings.Contains(d.Fix, " back to ") {
			out = append(out, "cause dependency, but the fix changes the spec: "+d.Fix)
		}
	}
	if d.Cause == CauseSpec && unchanged && top == nil {
		out = append(out, "cause spec with no suspect on a spec unchanged since it served")
	}
	for _, s := range d.Suspects {
		if d.Cause == CauseDependency && unchanged && s.Object == self && s.Value != "" && s.PreviousValue == "" {
			out = append(out, "previous value unset for "+pathString(s)+" although the serving revision is the current one")
		}
	}
	if unchanged && (strings.Contains(d.Headline, "no copy ever starts") || strings.Contains(d.Headline, "never starts a copy")) {
		out = append(out, "headline says no copy ever started, beside a current revision that served: "+d.Headline)
	}
	if !served && strings.Contains(d.Fix, "the last one that pulled") {
		out = append(out, "fix speaks of the last value that pulled, but no revision served: "+d.Fix)
	}
	out = append(out, servingStoryContradictions(d)...)
	for _, e := range d.Evidence {
		m := strings.TrimSpace(e.Message)
		if strings.HasSuffix(m, " since") || strings.HasSuffix(m, ";") || strings.HasSuffix(m, ":") {
			out = append(out, "an evidence sentence stops short: "+m)
		}
		if d.Cause == CauseSpec && e.Kind == "UnchangedSinceServing" && top != nil && top.Object == self {
			out = append(out, "cause spec beside evidence that the spec is unchanged since it served")
		}
	}
	return out
}

// servedBecauseReady is a claim that a revision served because a copy is Ready now.
var servedBecauseReady = regexp.MustCompile(`served \(copy \S+ is Ready\)`)

// servingStoryContradictions are issue 37's: one meaning of "serve" (SERVING 0 is not
// "served" by a Ready copy), no rollback advised for a rollout that is progressing, and a cause
// on another object named in the statement of the cause.
func servingStoryContradictions(d *Diagnosis) []string {
	var out []string
	if d.Counts.Serving == 0 {
		texts := []string{d.Headline, d.Fix}
		for _, e := range d.Evidence {
			texts = append(texts, e.Message)
		}
		for _, e := range d.Timeline {
			texts = append(texts, e.Message)
		}
		for _, text := range texts {
			if m := servedBecauseReady.FindString(text); m != "" {
				out = append(out, "SERVING 0 beside \""+m+"\": "+text)
			}
		}
	}
	if d.Shape == ShapeProgressing && strings.Contains(d.Fix, "rollout undo") {
		out = append(out, "a rollback advised for a progressing workload: "+d.Fix)
	}
	self := d.Kind + "/" + d.Name
	if len(d.Suspects) > 0 && d.Suspects[0].Object != self && (d.Cause == CauseSpec || d.Cause == CauseDependency) {
		other := d.Suspects[0].Object
		if st := causeStatement(d); !strings.Contains(st, other) {
			out = append(out, "cause "+string(d.Cause)+" on "+other+", but the statement of the cause does not name it: "+strconv.Quote(st))
		}
	}
	return out
}

// causeStatement is what the diagnosis says of its cause: today the revision-history evidence,
// where the engine argues spec against dependency. When the cause gets fields of its own (the
// winning and the rejected hypothesis), this is where the checker reads them.
func causeStatement(d *Diagnosis) string {
	var parts []string
	if a := d.Argument; a != nil {
		parts = append(parts, a.Object, a.For, a.Against)
	}
	for _, e := range d.Evidence {
		if e.Source == SourceRevisionHistory {
			parts = append(parts, e.Message)
		}
	}
	return strings.Join(parts, "; ")
}

func pathString(s Suspect) string {
	if s.Path == nil {
		return ""
	}
	return s.Path.String()
}

// previousContradictions checks every suspect on the workload's template against the template of
// the revision the diagnosis names as the last that served: its previous value is that
// revision's, never unset where that revision held the field.
func previousContradictions(s *snapshot.Snapshot, d *Diagnosis) []string {
	if d.Revisions == nil || d.Revisions.LastServing == "" {
		return nil
	}
	// A CronJob's revisions are its Jobs, by name; the other kinds' are numbered.
	n, err := strconv.ParseInt(d.Revisions.LastServing, 10, 64)
	if err != nil && d.Kind != "CronJob" {
		return []string{"lastServing is not a number: " + d.Revisions.LastServing}
	}
	var out []string
	for _, w := range collectWorkloads(s) {
		if w.Kind != d.Kind || w.Namespace != d.Namespace || w.Name != d.Name {
			continue
		}
		for _, rev := range w.cls.Revisions {
			named := rev.Job != nil && rev.Name == d.Revisions.LastServing
			if (rev.Number != n && !named) || (rev.Job != nil && !named) || rev.Template == nil {
				continue
			}
			for _, sp := range d.Suspects {
				if sp.Object != w.Kind+"/"+w.Name || sp.Path == nil || !strings.HasPrefix(sp.Path.String(), w.TemplatePath.String()+".") {
					continue
				}
				held, _ := fieldpath.ValueAt(w.TemplatePath, rev.Template, sp.Path)
				if held != "" && sp.PreviousValue != held {
					out = append(out, "previous value of "+sp.Path.String()+" is "+strconv.Quote(sp.PreviousValue)+
						", but revision "+d.Revisions.LastServing+", the last that served, held "+strconv.Quote(held))
				}
			}
		}
	}
	return out
}

func TestOneStoryInEveryScenarioAndFixture(t *testing.T) {
	for _, vd := range verdictDirs(t) {
		t.Run(vd.ID, func(t *testing.T) {
			e := loadExpected(t, vd.Dir)
			s := loadDump(t, vd.Dir, e)
			r := Diagnose(s)
			for i := range r.Workloads {
				d := &r.Workloads[i]
				bad := storyContradictions(d)
				bad = append(bad, previousContradictions(s, d)...)
				bad = append(bad, servedContradictions(s, d)...)
				if why, ok := progressingInFact(s, metamorph.Workload{Kind: d.Kind, Namespace: d.Namespace, Name: d.Name}); ok && strings.Contains(d.Fix, "rollout undo") {
					bad = append(bad, "a rollback advised for a rollout that is progressing ("+why+"): "+d.Fix)
				}
				if len(d.Suspects) > 0 && d.Cause == CauseSpec {
					top := d.Suspects[0]
					// A spec cause needs the change set to hold the suspect, or a rule that says
					// the field is wrong in itself, or another object's spec.
					if top.Object == d.Kind+"/"+d.Name && ruleInfo(top.Rule).Outside && d.Revisions != nil && len(d.Revisions.ChangedPaths) == 0 {
						bad = append(bad, "cause spec with an empty change set and no intrinsically wrong field ("+string(top.Rule)+")")
					}
				}
				for _, b := range bad {
					t.Errorf("%s %s/%s: %s", d.Kind, d.Namespace, d.Name, b)
				}
			}
		})
	}
}

// TestOneStoryInEveryGoldenReport reads the golden JSON reports (the engine's and the printers')
// and holds them to the same story.
func TestOneStoryInEveryGoldenReport(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.json")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../internal/report/testdata/TestPrint/json.golden")
	if len(files) < 20 {
		t.Fatalf("found %d golden reports", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				Workloads []struct {
					Diagnosis
					Suspects []struct {
						Object        string `json:"object"`
						Path          string `json:"path"`
						Value         string `json:"value"`
						PreviousValue string `json:"previousValue"`
					} `json:"suspects"`
				} `json:"workloads"`
			}
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			for _, w := range r.Workloads {
				d := w.Diagnosis
				d.Suspects = nil
				for _, s := range w.Suspects {
					d.Suspects = append(d.Suspects, Suspect{Object: s.Object, Path: p(s.Path), Value: s.Value, PreviousValue: s.PreviousValue})
				}
				for _, bad := range storyContradictions(&d) {
					t.Errorf("%s %s/%s: %s", d.Kind, d.Namespace, d.Name, bad)
				}
			}
		})
	}
}

// TestStoryContradictionsAreCaught feeds the checker the contradictions issue 7 lists, so a
// checker that finds nothing cannot pass for one that found everything consistent.
func TestStoryContradictionsAreCaught(t *testing.T) {
	env := p("spec.template.spec.containers[0].env[0].value")
	secretRef := p("spec.template.spec.containers[0].env[1].valueFrom.secretKeyRef.name")
	served := &Revisions{Current: "1", LastServing: "1"}
	for _, tt := range []struct {
		name string
		d    Diagnosis
	}{
		{"spec beside an unchanged spec (a deleted Secret)", Diagnosis{
			Kind: "Deployment", Name: "billing", Cause: CauseSpec, Revisions: served,
			Suspects: []Suspect{{Object: "Deployment/billing", Path: secretRef, Value: "billing-db", PreviousValue: "billing-db"}},
		}},
		{"dependency whose fix changes the spec", Diagnosis{
			Kind: "Deployment", Name: "ingest", Cause: CauseDependency, Revisions: served,
			Fix: `change Deployment/ingest spec.template.spec.containers[0].env[0].value (now "x")`,
		}},
		{"dependency with a previous value unset where the serving revision held it", Diagnosis{
			Kind: "Deployment", Name: "ingest", Cause: CauseDependency, Revisions: served,
			Suspects: []Suspect{{Object: "Deployment/ingest", Path: env, Value: "ingest.internal:9443"}},
		}},
		{"never started beside a revision that served", Diagnosis{
			Kind: "Deployment", Name: "notifier", Cause: CauseDependency, Revisions: served,
			Headline: "3 of 3 copies exist · 0 serving — no copy ever starts: ImagePullBackOff on all 3 copies",
		}},
		{"the last one that pulled, where none served", Diagnosis{
			Kind: "Deployment", Name: "web", Cause: CauseSpec, Revisions: &Revisions{Current: "1"},
			Fix: "change Deployment/web spec.template.spec.containers[0].image: Correct the image tag or digest; the previous value is the last one that pulled.",
		}},
		{"a sentence that stops at running since", Diagnosis{
			Kind: "Deployment", Name: "checkout", Evidence: []Evidence{{Kind: "OOMKilled", Message: "last terminated 3d ago: OOMKilled (exit code 137); running since"}},
		}},
		{"SERVING 0 beside served by a Ready copy", Diagnosis{
			Kind: "Deployment", Name: "search-api", Counts: Counts{Declared: 3, Existing: 3, Serving: 0},
			Timeline: []TimelineEntry{{Kind: "revision", Message: "revision 1 rolled out; served (copy search-api-86b54dcc48-77hfb is Ready)"}},
		}},
		{"a rollback advised for a progressing workload", Diagnosis{
			Kind: "Deployment", Name: "media", Shape: ShapeProgressing, Counts: Counts{Serving: 2},
			Fix: "kubectl rollout undo deployment/media",
		}},
		{"a cause on a Service that the cause does not name", Diagnosis{
			Kind: "Deployment", Name: "search-api", Cause: CauseSpec, Counts: Counts{Serving: 3},
			Suspects: []Suspect{{Object: "Service/search-api", Path: p("spec.ports[0].targetPort"), Value: "8000"}},
			Evidence: []Evidence{{Kind: "UnchangedSinceServing", Source: SourceRevisionHistory, Message: "revision 1 is current and served: the spec is unchanged since it served"}},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := storyContradictions(&tt.d); len(got) == 0 {
				t.Error("no contradiction found")
			}
		})
	}
}

// TestPreviousValueCheckIsLive tampers with a correct diagnosis: the previous value the serving
// revision held, dropped, must be caught.
func TestPreviousValueCheckIsLive(t *testing.T) {
	c := newCluster()
	d := c.deployment("ingest", 2, 2, "", 10*24*time.Hour)
	d.Spec.Template.Spec.Containers[0].Env[0].Value = "upstream.internal:9443"
	c.replicaSet(d, 1, 0, 10*24*time.Hour, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Env[0].Value = "upstream.internal:8443" })
	cur := c.replicaSet(d, 2, 2, 5*time.Minute, nil)
	c.pod(cur, "a", 5*time.Minute, running(false))
	c.pod(cur, "b", 5*time.Minute, running(false))
	dg := c.diagnoseOne("ingest")
	if dg == nil || len(dg.Suspects) == 0 || dg.Revisions == nil || dg.Revisions.LastServing != "1" {
		t.Fatalf("want a suspect and revision 1 as the last serving: %+v", dg)
	}
	if bad := previousContradictions(c.s, dg); len(bad) > 0 {
		t.Fatalf("a correct diagnosis is called contradictory: %v", bad)
	}
	for i := range dg.Suspects {
		dg.Suspects[i].PreviousValue = ""
	}
	if bad := previousContradictions(c.s, dg); len(bad) == 0 {
		t.Error("previous values dropped, and nothing was caught")
	}
}

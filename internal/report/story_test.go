package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
)

// TestExplainTellsOneStory prints every workload of every scenario, fixture and the demo as
// explain does and holds the screen to one story: a dependency never reads as a wrong spec, a
// spec cause never sits beside "the spec has not changed since it last served", and a revision
// that served is never said to have had no copy that ever ran.
func TestExplainTellsOneStory(t *testing.T) {
	var dirs []string
	for _, pattern := range []string{"../../testdata/scenarios/*/expected.yaml", "../../testdata/fixtures/*/expected.yaml", "../demo/expected.yaml"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if st, err := os.Stat(filepath.Join(filepath.Dir(f), "dump")); err == nil && st.IsDir() {
				dirs = append(dirs, filepath.Dir(f))
			}
		}
	}
	if len(dirs) < 30 {
		t.Fatalf("found %d scenario and fixture directories", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(dir, "expected.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var e struct {
				ReferenceTime string `json:"reference_time"`
			}
			if err := yaml.Unmarshal(b, &e); err != nil {
				t.Fatal(err)
			}
			s, err := dump.Read(filepath.Join(dir, "dump"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if s.ReferenceTime, err = time.Parse(time.RFC3339, e.ReferenceTime); err != nil {
				t.Fatal(err)
			}
			r := diagnose.Diagnose(s)
			for i := range r.Workloads {
				d := &r.Workloads[i]
				var buf bytes.Buffer
				if err := PrintExplain(&buf, d); err != nil {
					t.Fatal(err)
				}
				for _, bad := range explainContradictions(d, buf.String()) {
					t.Errorf("%s %s/%s: %s", d.Kind, d.Namespace, d.Name, bad)
				}
			}
		})
	}
}

func explainContradictions(d *diagnose.Diagnosis, screen string) []string {
	var out []string
	has := func(s string) bool { return strings.Contains(screen, s) }
	if d.Cause == diagnose.CauseDependency {
		for _, w := range []string{"the spec is wrong", "changing it fixes", "rollout undo", "set back"} {
			if has(w) {
				out = append(out, "cause dependency, but the screen says "+w)
			}
		}
	}
	if d.Cause == diagnose.CauseSpec && has("the spec has not changed since it last served") && len(d.Suspects) > 0 &&
		d.Suspects[0].Object == d.Kind+"/"+d.Name {
		out = append(out, "cause spec beside 'the spec has not changed since it last served'")
	}
	if (has("ever ran") || has("no copy ever starts")) && has("is current and served") {
		out = append(out, "a revision that served beside 'no copy ever ran'")
	}
	if d.Shape == diagnose.ShapeProgressing && has("no failure evidence") && len(d.Suspects) > 0 {
		out = append(out, "'no failure evidence' above suspects of a failure")
	}
	if has("unchanged since it last served") && (d.Revisions == nil || d.Revisions.LastServing == "") {
		out = append(out, "'unchanged since it last served' for a workload with no revision that served")
	}
	if has("previous:  (unset)") && d.Revisions != nil && d.Revisions.LastServing != "" && d.Revisions.LastServing == d.Revisions.Current {
		out = append(out, "previous (unset) although the serving revision is the current one")
	}
	return out
}

func TestExplainContradictionsAreCaught(t *testing.T) {
	d := &diagnose.Diagnosis{
		Kind: "Deployment", Name: "billing", Cause: diagnose.CauseDependency,
		Revisions: &diagnose.Revisions{Current: "1", LastServing: "1"},
	}
	if got := explainContradictions(d, "Cause:     dependency\n  the spec is wrong: changing it fixes the workload\n     previous:  (unset)\n"); len(got) != 3 {
		t.Errorf("found %d contradictions, want 3: %v", len(got), got)
	}
	d.Revisions.LastServing = ""
	if got := explainContradictions(d, "Cause:     dependency (the spec is unchanged since it last served: something it depends on fails)\n"); len(got) != 1 {
		t.Errorf("found %d contradictions, want 1: %v", len(got), got)
	}
}

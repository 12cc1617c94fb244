package diagnose

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.json from the current engine")

// expected is the verdict file of a scenario or fixture (testdata/*/<id>/expected.yaml).
type expected struct {
	ReferenceTime string             `json:"reference_time"`
	Workloads     []expectedWorkload `json:"workloads"`
	// SharedDependencies, when the file lists the key, are exactly the report's (none for
	// []): each target with its object and members.
	SharedDependencies *[]expectedShared `json:"shared_dependencies"`
}

// expectedShared is one SharedDependency of a verdict file.
type expectedShared struct {
	Target    string   `json:"target"`
	Object    string   `json:"object"`
	Pull      bool     `json:"pull"`
	Workloads []string `json:"workloads"`
}

type expectedWorkload struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Shape     Shape  `json:"shape"`
	Cause     Cause  `json:"cause"`
	Suspect   *struct {
		Object       string   `json:"object"`
		Path         string   `json:"path"`
		Alternatives []string `json:"alternatives"`
	} `json:"suspect"`
	Why string `json:"why"`
}

// verdictDir is one directory holding dump/ and expected.yaml.
type verdictDir struct {
	ID, Dir string
}

// verdictDirs lists the shared scenarios, our own fixtures and the demo's dump.
func verdictDirs(t testing.TB) []verdictDir {
	t.Helper()
	var out []verdictDir
	for _, pattern := range []string{"../testdata/scenarios/*/expected.yaml", "../testdata/fixtures/*/expected.yaml", "../internal/demo/expected.yaml"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			dir := filepath.Dir(f)
			// A fixture is complete once its dump is written next to its verdict.
			if st, err := os.Stat(filepath.Join(dir, "dump")); err != nil || !st.IsDir() {
				continue
			}
			out = append(out, verdictDir{ID: filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir), Dir: dir})
		}
	}
	return out
}

func loadExpected(t testing.TB, dir string) expected {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "expected.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var e expected
	if err := yaml.UnmarshalStrict(b, &e); err != nil {
		t.Fatalf("%s/expected.yaml: %v", dir, err)
	}
	return e
}

// loadDump reads a dump as the command does, with the reference time the verdict was written
// for.
func loadDump(t testing.TB, dir string, e expected) *snapshot.Snapshot {
	t.Helper()
	s, err := dump.Read(filepath.Join(dir, "dump"), nil)
	if err != nil {
		t.Fatalf("read dump: %v", err)
	}
	if e.ReferenceTime != "" {
		ref, err := time.Parse(time.RFC3339, e.ReferenceTime)
		if err != nil {
			t.Fatalf("reference_time: %v", err)
		}
		s.ReferenceTime = ref
	}
	return s
}

// TestScenarios holds the engine to every expected verdict: shape, cause and the top suspect
// (its object and path, or one of the listed alternatives) of every listed workload.
func TestScenarios(t *testing.T) {
	dirs := verdictDirs(t)
	if len(dirs) < 11 {
		t.Fatalf("found %d scenario directories, want at least the 11 shared scenarios", len(dirs))
	}
	for _, vd := range dirs {
		t.Run(vd.ID, func(t *testing.T) {
			e := loadExpected(t, vd.Dir)
			r := Diagnose(loadDump(t, vd.Dir, e))
			if len(e.Workloads) == 0 {
				t.Fatal("expected.yaml lists no workloads")
			}
			for _, want := range e.Workloads {
				t.Run(want.Kind+"/"+want.Name, func(t *testing.T) {
					d := r.Find(want.Kind, want.Namespace, want.Name)
					if d == nil {
						t.Fatalf("no diagnosis for %s %s/%s", want.Kind, want.Namespace, want.Name)
					}
					if d.Shape != want.Shape {
						t.Errorf("shape = %s, want %s (headline %q)", d.Shape, want.Shape, d.Headline)
					}
					if d.Cause != want.Cause {
						t.Errorf("cause = %s, want %s", d.Cause, want.Cause)
					}
					checkSuspect(t, d, want)
				})
			}
			if e.SharedDependencies != nil {
				checkShared(t, r, *e.SharedDependencies)
			}
		})
	}
}

// checkShared holds the report's shared dependencies to the verdict file's, and each member
// to the evidence that tells it it is a victim.
func checkShared(t *testing.T, r *Report, want []expectedShared) {
	t.Helper()
	got := make([]expectedShared, 0, len(r.SharedDependencies))
	for _, sd := range r.SharedDependencies {
		got = append(got, expectedShared{Target: sd.Target, Object: sd.Object, Pull: sd.Pull, Workloads: sd.Workloads})
		for _, m := range sd.Workloads {
			kind, rest, _ := strings.Cut(m, "/")
			ns, name, _ := strings.Cut(rest, "/")
			d := r.Find(kind, ns, name)
			if d == nil || !slices.ContainsFunc(d.Evidence, func(e Evidence) bool { return e.Kind == EvidenceSharedDependency }) {
				t.Errorf("member %s carries no %s evidence", m, EvidenceSharedDependency)
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("shared dependencies = %+v, want %+v", got, want)
	}
}

func checkSuspect(t *testing.T, d *Diagnosis, want expectedWorkload) {
	t.Helper()
	if want.Suspect == nil {
		if len(d.Suspects) > 0 && !d.Shape.Broken() {
			t.Errorf("%s workload has suspects: %s %s", d.Shape, d.Suspects[0].Object, d.Suspects[0].Path)
		}
		return
	}
	if len(d.Suspects) == 0 {
		t.Fatalf("no suspects, want %s %s", want.Suspect.Object, want.Suspect.Path)
	}
	top := d.Suspects[0]
	got := ""
	if top.Path != nil {
		got = top.Path.String()
	}
	if top.Object != want.Suspect.Object {
		t.Errorf("top suspect object = %s, want %s", top.Object, want.Suspect.Object)
	}
	// The verdict files write a ResourceList key both ways (dev-thumbs limits.memory, the
	// fixtures requests[cpu]); both name the same field, so keys compare as fields.
	same := func(a, b string) bool { return keysAsFields(a) == keysAsFields(b) }
	ok := same(got, want.Suspect.Path)
	for _, alt := range want.Suspect.Alternatives {
		ok = ok || same(got, alt)
	}
	if !ok {
		t.Errorf("top suspect path = %s, want %s (or %v)", got, want.Suspect.Path, want.Suspect.Alternatives)
	}
}

// TestGolden compares the full JSON report of every scenario and fixture with
// testdata/golden/<id>.json; run with -update to rewrite them after a deliberate change.
func TestGolden(t *testing.T) {
	for _, vd := range verdictDirs(t) {
		t.Run(vd.ID, func(t *testing.T) {
			e := loadExpected(t, vd.Dir)
			r := Diagnose(loadDump(t, vd.Dir, e))
			got, err := json.MarshalIndent(r, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			file := filepath.Join("testdata", "golden", strings.ReplaceAll(vd.ID, "/", "_")+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test ./diagnose -run TestGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("report differs from %s; run with -update after checking the change:\n%s", file, firstDiff(string(want), string(got)))
			}
		})
	}
}

// firstDiff shows the first differing line with a little context.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n- " + w + "\n+ " + g
		}
	}
	return ""
}

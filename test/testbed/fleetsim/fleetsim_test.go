package fleetsim

import (
	"path/filepath"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// TestCloneKeepsEachCopysVerdict clones a scenario three times: every copy is its own
// workload, with the verdict of the original, so owner references and endpoints were renamed
// together.
func TestCloneKeepsEachCopysVerdict(t *testing.T) {
	s, err := dump.Read(filepath.Join("..", "..", "..", "testdata", "scenarios", "dev-mixed", "dump"), nil)
	if err != nil {
		t.Fatal(err)
	}
	orig := diagnose.Diagnose(s)
	c := Clone([]*snapshot.Snapshot{s}, 3*len(s.Pods))
	if len(c.Pods) != 3*len(s.Pods) || len(c.Nodes) != len(s.Nodes) {
		t.Fatalf("%d pods and %d nodes, want %d and %d", len(c.Pods), len(c.Nodes), 3*len(s.Pods), len(s.Nodes))
	}
	r := diagnose.Diagnose(c)
	if len(r.Workloads) != 3*len(orig.Workloads) {
		t.Fatalf("%d workloads, want %d", len(r.Workloads), 3*len(orig.Workloads))
	}
	want := map[string]diagnose.Diagnosis{}
	for _, d := range orig.Workloads {
		want[d.Kind+"/"+d.Name] = d
	}
	for _, d := range r.Workloads {
		o := want[d.Kind+"/"+d.Name]
		if d.Shape != o.Shape || d.Counts != o.Counts || d.Cause != o.Cause {
			t.Errorf("%s/%s/%s: %s %+v %s, the original %s %+v %s", d.Namespace, d.Kind, d.Name, d.Shape, d.Counts, d.Cause, o.Shape, o.Counts, o.Cause)
		}
	}
}

package dump

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// TestPodsNotInTheDump: a dump that holds controllers and no pod list says pods were not seen,
// so the engine does not read their absence as copies that do not exist; a pod list, even an
// empty one, is what the dump was asked for.
func TestPodsNotInTheDump(t *testing.T) {
	web := filepath.Join(scenarioDir, "dev-web", "dump", "dev-web")
	notInDump := snapshot.Visibility{Kind: "Pod", Reason: "not in the dump"}
	tests := []struct {
		name  string
		files map[string]string // file in the tree -> file of the dev-web dump
		want  bool
	}{
		{name: "deployments and replicasets only", files: map[string]string{"a/deployments.json": "deployments.json", "a/replicasets.json": "replicasets.json"}, want: true},
		{name: "deployments with their pods", files: map[string]string{"a/deployments.json": "deployments.json", "a/pods.json": "pods.json"}, want: false},
		{name: "pods only", files: map[string]string{"a/pods.json": "pods.json"}, want: false},
		{name: "services only: no controller to diagnose", files: map[string]string{"a/services.json": "services.json"}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree := map[string][]byte{}
			for dst, src := range tt.files {
				tree[dst] = mustRead(t, filepath.Join(web, src))
			}
			s, err := Read(writeTree(t, tree), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(s.Visibility, notInDump); got != tt.want {
				t.Errorf("visibility %+v: Pod not in the dump = %v, want %v", s.Visibility, got, tt.want)
			}
		})
	}

	// An empty PodList, as kubectl cluster-info dump writes for a namespace without pods.
	s, err := ReadBytes("empty-pods", []byte(`{"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "233"}, "items": null}`+"\n"+string(mustRead(t, filepath.Join(web, "deployments.json")))))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(s.Visibility, notInDump) {
		t.Errorf("an empty PodList reads as pods not in the dump: %+v", s.Visibility)
	}
}

// TestWritePodsNotRead: pods the source could not read are not written as an empty list, so
// the written dump still says they were not seen.
func TestWritePodsNotRead(t *testing.T) {
	web := filepath.Join(scenarioDir, "dev-web", "dump", "dev-web")
	s, err := Read(filepath.Join(web, "deployments.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Visibility = []snapshot.Visibility{{Kind: "Pod", Namespace: "dev-web", Reason: `forbidden: User "reader" cannot list resource "pods" in API group "" in the namespace "dev-web"`}}
	dir := filepath.Join(t.TempDir(), "out")
	if err := Write(dir, s, false); err != nil {
		t.Fatal(err)
	}
	again, err := Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(again.Visibility, snapshot.Visibility{Kind: "Pod", Reason: "not in the dump"}) {
		t.Errorf("written dump of unread pods reads back with visibility %+v, want Pod not in the dump", again.Visibility)
	}
}

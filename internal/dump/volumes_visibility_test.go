package dump

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// TestVolumesNotInTheDump: a dump with a Pending claim and no PersistentVolume list says, in the
// claim's namespace, that volumes were not seen, so the engine does not read their absence as a
// cluster without volumes; a volume list, even an empty one, is what the dump was asked for, and
// a dump whose claims are all bound needs none.
func TestVolumesNotInTheDump(t *testing.T) {
	const ns = "fixture-pvc-selector-no-pv"
	dir := filepath.Join("..", "..", "testdata", "fixtures", "pvc-selector-no-pv", "dump", ns)
	claims := string(mustRead(t, filepath.Join(dir, "persistentvolumeclaims.json")))
	notInDump := snapshot.Visibility{Kind: "PersistentVolume", Namespace: ns, Reason: "not in the dump"}
	const emptyVolumes = `{"kind": "PersistentVolumeList", "apiVersion": "v1", "metadata": {"resourceVersion": "233"}, "items": null}` + "\n"
	const boundClaims = `{"kind": "PersistentVolumeClaimList", "apiVersion": "v1", "items": [{"metadata": {"name": "data", "namespace": "shop"}, "spec": {"volumeName": "pv-1"}, "status": {"phase": "Bound"}}]}` + "\n"
	tests := []struct {
		name, dump string
		want       bool
	}{
		{name: "a Pending claim and no volume list", dump: claims, want: true},
		{name: "a Pending claim and an empty volume list", dump: emptyVolumes + claims, want: false},
		{name: "bound claims only", dump: boundClaims, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ReadBytes("claims", []byte(tt.dump))
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(s.Visibility, notInDump); got != tt.want {
				t.Errorf("visibility %+v: PersistentVolume not in the dump = %v, want %v", s.Visibility, got, tt.want)
			}
		})
	}
}

// TestWriteVolumesNotRead: volumes the source could not read are not written as an empty list
// (the dump reads back as not holding them); volumes it read, none included, are.
func TestWriteVolumesNotRead(t *testing.T) {
	const ns = "fixture-pvc-selector-no-pv"
	dir := filepath.Join("..", "..", "testdata", "fixtures", "pvc-selector-no-pv", "dump", ns)
	for _, forbidden := range []bool{true, false} {
		s, err := Read(filepath.Join(dir, "persistentvolumeclaims.json"), nil)
		if err != nil {
			t.Fatal(err)
		}
		s.Visibility = nil
		if forbidden {
			s.Visibility = []snapshot.Visibility{{Kind: "PersistentVolume", Reason: `forbidden: User "reader" cannot list resource "persistentvolumes" in API group "" at the cluster scope`}}
		}
		out := filepath.Join(t.TempDir(), "out")
		if err := Write(out, s, false); err != nil {
			t.Fatal(err)
		}
		again, err := Read(out, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Contains(again.Visibility, snapshot.Visibility{Kind: "PersistentVolume", Namespace: ns, Reason: "not in the dump"})
		if got != forbidden {
			t.Errorf("forbidden %v: written dump reads back with visibility %+v", forbidden, again.Visibility)
		}
	}
}

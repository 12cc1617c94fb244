package dump

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// perNS is the Deployments of each namespace of the tests' dumps.
const perNS = 20

// dirBytes is the size of the files under dir that a read opens (hidden ones, such as the
// dump's manifest, it does not); with top, only of the files directly in it.
func dirBytes(t *testing.T, dir string, top bool) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		if d.IsDir() {
			if top && p != dir {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		n += info.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReadNamespacesReadsOnlyTheirDirectories reads one namespace of three from a dump in the
// layout of kubectl cluster-info dump --output-directory. --max-dump-size counts every byte
// read, so a limit of exactly the namespace's directory and the files beside it (nodes.json)
// proves no other namespace's file was opened; one byte less fails.
func TestReadNamespacesReadsOnlyTheirDirectories(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dump")
	if err := Write(dir, scaleSnapshot(t, 3*perNS, perNS, 5), false); err != nil {
		t.Fatal(err)
	}
	const ns = "team-001"
	need := dirBytes(t, dir, true) + dirBytes(t, filepath.Join(dir, ns), false)
	if all := dirBytes(t, dir, false); need*2 > all {
		t.Fatalf("the namespace is %d of %d bytes; the test needs it to be a small part", need, all)
	}
	one, err := ReadContext(context.Background(), dir, nil, Options{Namespaces: []string{ns}, MaxDumpSize: need})
	if err != nil {
		t.Fatalf("read of %s within %d bytes: %v", ns, need, err)
	}
	if _, err := ReadContext(context.Background(), dir, nil, Options{Namespaces: []string{ns}, MaxDumpSize: need - 1}); err == nil || !strings.Contains(err.Error(), "--max-dump-size") {
		t.Fatalf("read within %d bytes = %v, want the dump size error", need-1, err)
	}
	whole, err := Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := whole.FilterNamespaces([]string{ns})
	got := one.FilterNamespaces([]string{ns})
	if len(got.Pods) != perNS*scaleCopies || len(got.Logs) != perNS {
		t.Fatalf("read %d pods and %d logs of %s, want %d and %d", len(got.Pods), len(got.Logs), ns, perNS*scaleCopies, perNS)
	}
	if diff := differences(want, got); len(diff) > 0 {
		t.Errorf("the namespace read alone differs from it read with the others in %v", diff)
	}
	if len(one.Nodes) == 0 || len(one.Nodes) != len(whole.Nodes) {
		t.Errorf("read %d nodes, want the dump's %d", len(one.Nodes), len(whole.Nodes))
	}
}

// TestReadNamespacesReadsOtherLayoutsWhole: the directories are skipped only when the dump is
// in the cluster-info layout and holds every namespace asked for.
func TestReadNamespacesReadsOtherLayoutsWhole(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dump")
	if err := Write(dir, scaleSnapshot(t, 2*perNS, perNS, 0), false); err != nil {
		t.Fatal(err)
	}
	// A directory named after a namespace but not of the layout, holding another's objects.
	pods, err := os.ReadFile(filepath.Join(dir, "team-000", "pods.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "extra", "team-001"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "extra", "team-001", "copy.json"), pods, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path string
		ns   []string
	}{
		{"a namespace the dump does not hold", dir, []string{"team-001", "absent"}},
		{"directories of another layout", filepath.Join(dir, "extra"), []string{"team-001"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ReadContext(context.Background(), tc.path, nil, Options{Namespaces: tc.ns})
			if err != nil {
				t.Fatal(err)
			}
			if !s.HasNamespace("team-000") {
				t.Errorf("namespaces read = %v, want team-000 among them", s.Namespaces)
			}
		})
	}
}

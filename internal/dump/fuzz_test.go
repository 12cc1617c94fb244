package dump

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// FuzzRead feeds one in-memory file to the reader. It must never panic; it returns either an
// error naming the file and no snapshot, or a snapshot of well-formed objects that Write writes
// and Read reads back unchanged. The seed corpus is in testdata/fuzz/FuzzRead.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadBytes("fuzz", data)
		if err != nil {
			if s != nil {
				t.Fatal("ReadBytes returned a snapshot with its error")
			}
			if !strings.HasPrefix(err.Error(), `read dump "fuzz": `) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		checkSnapshot(t, s)
		dir := filepath.Join(t.TempDir(), "out")
		if err := Write(dir, s, false); err != nil {
			if !strings.HasPrefix(err.Error(), "write dump") {
				t.Fatalf("Write error: %v", err)
			}
			return
		}
		again, err := Read(dir, nil)
		if err != nil {
			t.Fatalf("Read of what Write wrote: %v", err)
		}
		if diff := differences(s, again); len(diff) > 0 {
			t.Fatalf("written dump reads back differently in %v", diff)
		}
	})
}

func checkSnapshot(t *testing.T, s *snapshot.Snapshot) {
	t.Helper()
	var objs []metav1.Object
	for _, o := range s.Deployments {
		objs = append(objs, o)
	}
	for _, o := range s.Pods {
		objs = append(objs, o)
	}
	for _, o := range s.Events {
		objs = append(objs, o)
	}
	for _, o := range s.Services {
		objs = append(objs, o)
	}
	for _, o := range s.ReplicaSets {
		objs = append(objs, o)
	}
	for _, o := range s.ResourceQuotas {
		objs = append(objs, o)
	}
	total := len(s.Nodes) + len(s.StatefulSets) + len(s.DaemonSets) + len(s.ControllerRevisions) +
		len(s.PersistentVolumeClaims) + len(s.EndpointSlices) + len(objs)
	if total == 0 {
		t.Fatal("a snapshot without objects was returned without an error")
	}
	for _, o := range objs {
		if o.GetName() == "" || o.GetNamespace() == "" || o.GetManagedFields() != nil {
			t.Fatalf("object %s/%s: empty name or namespace, or managedFields kept", o.GetNamespace(), o.GetName())
		}
	}
	if !slices.IsSorted(s.Namespaces) || len(slices.Compact(slices.Clone(s.Namespaces))) != len(s.Namespaces) {
		t.Fatalf("Namespaces %v are not sorted and unique", s.Namespaces)
	}
	if s.Source.Type != snapshot.SourceDump {
		t.Fatalf("Source = %+v", s.Source)
	}
}

package dump

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

func TestWriteRoundTrip(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.id, func(t *testing.T) {
			orig := readScenario(t, sc.id)
			dir := filepath.Join(t.TempDir(), "out")
			if err := Write(dir, orig, false); err != nil {
				t.Fatalf("Write: %v", err)
			}
			again, err := Read(dir, nil)
			if err != nil {
				t.Fatalf("Read of written dump: %v", err)
			}
			if diff := differences(orig, again); len(diff) > 0 {
				t.Errorf("written dump reads back differently in %v", diff)
			}
			if countsOf(again) != sc.want {
				t.Errorf("counts = %+v, want %+v", countsOf(again), sc.want)
			}
		})
	}
}

// TestWriteLayout checks the files against what kubectl cluster-info dump writes.
func TestWriteLayout(t *testing.T) {
	s := readScenario(t, "dev-search")
	dir := filepath.Join(t.TempDir(), "out")
	if err := Write(dir, s, false); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{
		"nodes.json",
		"dev-search/events.json", "dev-search/replication-controllers.json", "dev-search/services.json",
		"dev-search/daemonsets.json", "dev-search/deployments.json", "dev-search/replicasets.json",
		"dev-search/pods.json", "dev-search/statefulsets.json", "dev-search/controllerrevisions.json",
		"dev-search/endpointslices.json", "dev-search/persistentvolumeclaims.json", "dev-search/resourcequotas.json",
		"dev-search/search-indexer-0/logs.txt",
	} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	// kubectl's JSON printer: kind then apiVersion, four-space indent, items without kind.
	pods := mustRead(t, filepath.Join(dir, "dev-search", "pods.json"))
	if !bytes.HasPrefix(pods, []byte("{\n    \"kind\": \"PodList\",\n    \"apiVersion\": \"v1\",\n")) || !bytes.HasSuffix(pods, []byte("}\n")) {
		t.Errorf("pods.json does not start like kubectl's: %.80q", pods)
	}
	if bytes.Contains(pods, []byte(`"kind": "Pod"`)) {
		t.Error("pods.json items carry their own kind; the API server's typed lists do not")
	}
	want := mustRead(t, filepath.Join(scenarioDir, "dev-search", "dump", "dev-search", "search-indexer-0", "logs.txt"))
	if got := mustRead(t, filepath.Join(dir, "dev-search", "search-indexer-0", "logs.txt")); !bytes.Equal(got, want) {
		t.Errorf("logs.txt = %q, want kubectl's %q", got, want)
	}
	if rc := mustRead(t, filepath.Join(dir, "dev-search", "replication-controllers.json")); !bytes.Contains(rc, []byte(`"items": null`)) {
		t.Errorf("an empty list is written as %s, kubectl writes \"items\": null", rc)
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fileMode
		if d.IsDir() {
			want = dirMode
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", p, info.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestWriteRefusesNonEmptyDirectory(t *testing.T) {
	s := readScenario(t, "dev-web")
	dir := t.TempDir()
	stale := filepath.Join(dir, "dev-web", "pods.json")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(dir, s, false)
	if err == nil || !strings.Contains(err.Error(), "not empty") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("Write into a non-empty directory = %v, want a refusal that mentions --force", err)
	}
	if got := mustRead(t, stale); string(got) != "old" {
		t.Error("the refused Write changed a file")
	}
	if err := Write(dir, s, true); err != nil {
		t.Fatalf("Write with force: %v", err)
	}
	info, err := os.Stat(stale)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != fileMode {
		t.Errorf("an overwritten file keeps mode %v, want %v", info.Mode().Perm(), fileMode)
	}
	if _, err := Read(dir, nil); err != nil {
		t.Errorf("Read after a forced Write: %v", err)
	}

	empty := t.TempDir()
	if err := Write(empty, s, false); err != nil {
		t.Errorf("Write into an existing empty directory: %v", err)
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(file, s, true); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Write onto a file = %v, want not a directory", err)
	}
}

func TestWriteRejectsNamesThatLeaveTheDirectory(t *testing.T) {
	for _, tt := range []struct {
		name string
		s    *snapshot.Snapshot
	}{
		{"pod name", &snapshot.Snapshot{Logs: []snapshot.ContainerLog{{Namespace: "n", Pod: "../../escape", Container: "c"}}}},
		{"namespace", &snapshot.Snapshot{Pods: []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Namespace: "..", Name: "p"}}}}},
		{"container with a space", &snapshot.Snapshot{Logs: []snapshot.ContainerLog{{Namespace: "n", Pod: "p", Container: "c of pod x"}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "a", "b")
			if err := Write(dir, tt.s, false); err == nil {
				t.Fatal("Write accepted the name")
			}
			entries, _ := os.ReadDir(root)
			if len(entries) != 1 || entries[0].Name() != "a" {
				t.Errorf("Write created %v outside its directory", entries)
			}
		})
	}
}

func TestWritePreviousLogs(t *testing.T) {
	s := readScenario(t, "dev-thumbs")
	pod := s.Pods[0]
	s.Logs = append(s.Logs, snapshot.ContainerLog{
		Namespace: pod.Namespace, Pod: pod.Name, Container: pod.Spec.Containers[0].Name, Previous: true,
		Lines: []string{"decoding IMG_2231.HEIC (48 MiB)"},
	})
	dir := filepath.Join(t.TempDir(), "out")
	if err := Write(dir, s, false); err != nil {
		t.Fatal(err)
	}
	again, err := Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := again.Log(pod.Namespace, pod.Name, pod.Spec.Containers[0].Name, true)
	if l == nil || len(l.Lines) != 1 || l.Lines[0] != "decoding IMG_2231.HEIC (48 MiB)" {
		t.Errorf("previous log read back as %+v", l)
	}
	if again.Log(pod.Namespace, pod.Name, pod.Spec.Containers[0].Name, false) == nil {
		t.Error("current log lost next to the previous one")
	}
}

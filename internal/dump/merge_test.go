package dump

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReadNamespaceAsKubectl(t *testing.T) {
	manifest := []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers: [{name: c, image: busybox}]\n---\n" +
		"apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n")
	for _, tt := range []struct{ flag, want string }{{"", "default"}, {"shop", "shop"}} {
		s, err := ReadContext(t.Context(), Stdin, bytes.NewReader(manifest), Options{Namespace: tt.flag})
		if err != nil {
			t.Fatalf("-n %q: %v", tt.flag, err)
		}
		if len(s.Pods) != 1 || s.Pods[0].Namespace != tt.want || len(s.Namespaces) != 1 || s.Namespaces[0] != tt.want {
			t.Errorf("-n %q: pod in %q, namespaces %v; want %q", tt.flag, s.Pods[0].Namespace, s.Namespaces, tt.want)
		}
		if len(s.Nodes) != 1 || s.Nodes[0].Namespace != "" {
			t.Errorf("-n %q: the node is not cluster-scoped: %+v", tt.flag, s.Nodes)
		}
	}
}

func TestReadDuplicates(t *testing.T) {
	deployments := mustRead(t, filepath.Join(scenarioDir, "dev-web", "dump", "dev-web", "deployments.json"))
	edited := bytes.Replace(deployments, []byte(`"replicas": 3,`), []byte(`"replicas": 7,`), 1)
	// The item's resourceVersion, not the list's, which comes first.
	itemRV := bytes.Index(edited, []byte(`"items"`))
	newerRV := append(bytes.Clone(edited[:itemRV]), bytes.Replace(edited[itemRV:], []byte(`"resourceVersion": "`), []byte(`"resourceVersion": "9`), 1)...)
	if bytes.Equal(edited, deployments) || bytes.Equal(newerRV, edited) {
		t.Fatal("fixture: replicas or resourceVersion not found in deployments.json")
	}
	tests := []struct {
		name         string
		second       []byte
		wantReplicas int32
		wantNote     string
	}{
		{"the same object twice reads once", deployments, 3, ""},
		{"a newer resourceVersion wins", newerRV, 7, "is in the dump twice with different content"},
		{"an edited copy of the same version keeps the first", edited, 3, "a/deployments.json is used"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, map[string][]byte{"a/deployments.json": deployments, "b/deployments.json": tt.second})
			s, err := Read(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Deployments) != 1 || *s.Deployments[0].Spec.Replicas != tt.wantReplicas {
				t.Fatalf("%d deployments, replicas %d; want one with %d", len(s.Deployments), *s.Deployments[0].Spec.Replicas, tt.wantReplicas)
			}
			var notes []string
			for _, v := range s.Visibility {
				if v.Kind == "Deployment" {
					notes = append(notes, v.Reason)
				}
			}
			switch {
			case tt.wantNote == "" && len(notes) > 0:
				t.Errorf("notes %q for an identical copy", notes)
			case tt.wantNote != "" && (len(notes) != 1 || !strings.Contains(notes[0], tt.wantNote) || !strings.Contains(notes[0], s.Deployments[0].Name)):
				t.Errorf("notes %q, want one naming %s with %q", notes, s.Deployments[0].Name, tt.wantNote)
			}
		})
	}
}

func TestReadMixedMoments(t *testing.T) {
	nodes := mustRead(t, filepath.Join(scenarioDir, "dev-web", "dump", "nodes.json"))
	s, err := ReadBytes("nodes.json", nodes)
	if err != nil {
		t.Fatal(err)
	}
	then := s.ReferenceTime
	// The same nodes dumped three hours later: heartbeats moved on.
	later := []byte(strings.ReplaceAll(string(nodes), then.Format("2006-01-02T15"), then.Add(3*time.Hour).Format("2006-01-02T15")))
	for _, n := range []string{"worker", "control"} {
		later = bytes.ReplaceAll(later, []byte(`"name": "`+n), []byte(`"name": "later-`+n))
	}
	dir := writeTree(t, map[string][]byte{"monday/nodes.json": nodes, "tuesday/nodes.json": later})
	s, err = Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, v := range s.Visibility {
		found = found || strings.Contains(v.Reason, "the dump mixes moments") && strings.Contains(v.Reason, "monday/nodes.json")
	}
	if !found {
		t.Errorf("no note of mixed moments in %+v", s.Visibility)
	}
	// One dump alone is one moment.
	s, _ = ReadBytes("nodes.json", nodes)
	for _, v := range s.Visibility {
		if strings.Contains(v.Reason, "mixes moments") {
			t.Errorf("one dump noted as mixed: %s", v.Reason)
		}
	}
}

func TestReadAtBeforeEveryObject(t *testing.T) {
	dir := filepath.Join(scenarioDir, "dev-web", "dump")
	early := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := ReadContext(t.Context(), dir, nil, Options{At: &early})
	if err != nil {
		t.Fatal(err)
	}
	if !s.ReferenceTime.Equal(early) {
		t.Errorf("ReferenceTime %s, want --at %s", s.ReferenceTime, early)
	}
	n := 0
	for _, v := range s.Visibility {
		if strings.Contains(v.Reason, "--at 2020-01-01T00:00:00Z is before every object") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("want one note of the early --at, got %+v", s.Visibility)
	}
	plain, err := Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	late := plain.ReferenceTime.Add(100 * 24 * time.Hour)
	s, _ = ReadContext(t.Context(), dir, nil, Options{At: &late})
	for _, v := range s.Visibility {
		if strings.Contains(v.Reason, "--at") {
			t.Errorf("a later --at is noted: %s", v.Reason)
		}
	}
}

// TestReadLargeYAMLList reads a YAML list larger than what is converted whole: its items are
// read one at a time and give what the JSON of the same list gives.
func TestReadLargeYAMLList(t *testing.T) {
	pod := strings.TrimSpace(string(mustRead(t, "testdata/get-dev-web.yaml")))
	items := pod[strings.Index(pod, "items:\n")+len("items:\n") : strings.Index(pod, "\nkind: List")]
	var b strings.Builder
	b.WriteString("apiVersion: v1\nitems:\n")
	for i := 0; b.Len() < yamlWhole+(1<<20); i++ {
		tag := "x" + string(rune('a'+i%26)) + strings.Repeat("y", i/26) + "-"
		copied := strings.ReplaceAll(items, "\n    name: ", "\n    name: "+tag)
		b.WriteString(strings.ReplaceAll(copied, "\n    uid: ", "\n    uid: "+tag))
		b.WriteString("\n")
	}
	b.WriteString("kind: List\nmetadata:\n  resourceVersion: \"\"\n")
	s, err := ReadBytes("big.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	small, err := ReadBytes("small.yaml", mustRead(t, "testdata/get-dev-web.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Pods) < 10*len(small.Pods) || len(s.Pods)%len(small.Pods) != 0 {
		t.Errorf("%d pods from the large list, %d from one copy", len(s.Pods), len(small.Pods))
	}
	// A broken item is placed at its line.
	broken := b.String()[:yamlWhole+(1<<20)] + "\n- metadata: [\n"
	if _, err := ReadBytes("broken.yaml", []byte(broken)); err == nil || !strings.Contains(err.Error(), "items[") {
		t.Errorf("broken large list = %v, want the item placed", err)
	}
}

func TestReadEditedNameSameUID(t *testing.T) {
	deployments := mustRead(t, filepath.Join(scenarioDir, "dev-web", "dump", "dev-web", "deployments.json"))
	renamed := bytes.Replace(deployments, []byte(`"name": "web-frontend",`), []byte(`"name": "web-frontend-copy",`), 1)
	if bytes.Equal(renamed, deployments) {
		t.Fatal("fixture: deployment name not found")
	}
	dir := writeTree(t, map[string][]byte{"a/deployments.json": deployments, "b/deployments.json": renamed})
	s, err := Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Deployments) != 1 {
		t.Errorf("%d deployments from two copies of one UID", len(s.Deployments))
	}
}

// TestReadLargeYAMLObject reads one YAML object larger than a list is kept whole for, but
// under the object limit.
func TestReadLargeYAMLObject(t *testing.T) {
	doc := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: shop\n  annotations:\n    big: " + strings.Repeat("x", yamlWhole+(1<<20)) + "\n"
	s, err := ReadBytes("pod.yaml", []byte(doc))
	if err != nil || len(s.Pods) != 1 || len(s.Pods[0].Annotations["big"]) != yamlWhole+(1<<20) {
		t.Fatalf("ReadBytes: %v", err)
	}
}

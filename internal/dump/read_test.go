package dump

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// writeTree writes files (path → content) under a new temporary directory.
func writeTree(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// clusterInfoStdout builds what `kubectl cluster-info dump --namespaces ID` prints without
// --output-directory: the lists in the order kubectl fetches them, then every pod's log blocks.
// With asYAML it is the -o yaml form: YAML documents, "---" before all but the first.
func clusterInfoStdout(t *testing.T, id string, asYAML bool) []byte {
	t.Helper()
	dump := filepath.Join(scenarioDir, id, "dump")
	var b bytes.Buffer
	add := func(path string) {
		data := mustRead(t, path)
		if !asYAML {
			b.Write(data)
			return
		}
		y, err := yaml.JSONToYAML(data)
		if err != nil {
			t.Fatal(err)
		}
		if b.Len() > 0 {
			b.WriteString("---\n")
		}
		b.Write(y)
	}
	add(filepath.Join(dump, "nodes.json"))
	for _, f := range []string{"events", "replication-controllers", "services", "daemonsets", "deployments", "replicasets", "pods"} {
		add(filepath.Join(dump, id, f+".json"))
	}
	logs, err := filepath.Glob(filepath.Join(dump, id, "*", "logs.txt"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no logs in %s: %v", dump, err)
	}
	for _, l := range logs {
		b.Write(mustRead(t, l))
	}
	return b.Bytes()
}

const multiDocYAML = `# kubectl get -o yaml of single objects, joined by hand
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  uid: 0b1c
  creationTimestamp: "2026-11-24T10:00:00Z"
  managedFields:
  - manager: kubectl-client-side-apply
    operation: Update
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
---
---
# an empty document above and a comment-only one here
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  namespace: shop
data:
  a: b
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
  creationTimestamp: "2026-11-24T10:05:00Z"
spec:
  selector:
    app: web
  ports:
  - port: 80
    targetPort: 8080
`

func TestReadForms(t *testing.T) {
	webDir := filepath.Join(scenarioDir, "dev-web", "dump", "dev-web")
	podList := mustRead(t, filepath.Join(webDir, "pods.json"))
	getJSON := mustRead(t, "testdata/get-dev-web.json")
	// One object as `kubectl get pod NAME -o json` prints it: apiVersion and kind included.
	var pods corev1.PodList
	if err := jsonUnmarshal(podList, &pods); err != nil {
		t.Fatal(err)
	}
	onePod := jsonMarshalPod(t, &pods.Items[0])
	unknown := []byte(`{"apiVersion":"v1","kind":"List","items":[
		{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"x"}},
		{"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"b","namespace":"x"}},
		{"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"c","namespace":"x"}},
		{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":"d","namespace":"x"}},
		{"apiVersion":"apps/v1beta2","kind":"Deployment","metadata":{"name":"e","namespace":"x"}}
	]}` + "\n" + string(onePod))

	tests := []struct {
		name        string
		files       map[string][]byte // written to a temporary directory; path is relative to it
		path        string
		stdin       []byte
		want        counts
		wantNS      []string
		wantSkipped map[string]int
	}{
		{
			name:  "single object",
			files: map[string][]byte{"pod.json": onePod}, path: "pod.json",
			want: counts{Pods: 1}, wantNS: []string{"dev-web"},
		},
		{
			name:  "typed list as cluster-info dump writes it",
			files: map[string][]byte{"pods.json": podList}, path: "pods.json",
			want: counts{Pods: 3}, wantNS: []string{"dev-web"},
		},
		{
			name:  "kubectl get deploy,rs,pods,events,svc -o json",
			files: map[string][]byte{"all.json": getJSON}, path: "all.json",
			want: counts{Deployments: 1, ReplicaSets: 1, Pods: 3, Events: 22, Services: 1}, wantNS: []string{"dev-web"},
		},
		{
			name:  "kubectl get deploy,rs,pods,events,svc -o yaml",
			files: map[string][]byte{"all.yaml": mustRead(t, "testdata/get-dev-web.yaml")}, path: "all.yaml",
			want: counts{Deployments: 1, ReplicaSets: 1, Pods: 3, Events: 22, Services: 1}, wantNS: []string{"dev-web"},
		},
		{
			name:  "multi-document YAML with empty and comment-only documents",
			files: map[string][]byte{"objs.yml": []byte(multiDocYAML)}, path: "objs.yml",
			want: counts{Deployments: 1, Services: 1}, wantNS: []string{"shop"}, wantSkipped: map[string]int{"ConfigMap": 1},
		},
		{
			name:  "kind is read from content, not from the file name",
			files: map[string][]byte{"deployments.json": podList}, path: "deployments.json",
			want: counts{Pods: 3}, wantNS: []string{"dev-web"},
		},
		{
			name: "stdin", path: "-", stdin: getJSON,
			want: counts{Deployments: 1, ReplicaSets: 1, Pods: 3, Events: 22, Services: 1}, wantNS: []string{"dev-web"},
		},
		{
			name: "cluster-info dump on stdout: JSON documents and log blocks one after another",
			path: "-", stdin: clusterInfoStdout(t, "dev-mixed", false),
			want: counts{Deployments: 3, ReplicaSets: 4, Pods: 8, Events: 40, Services: 2, Nodes: 3, Logs: 8}, wantNS: []string{"dev-mixed"},
		},
		{
			name: "cluster-info dump -o yaml on stdout: YAML documents and log blocks",
			path: "-", stdin: clusterInfoStdout(t, "dev-mixed", true),
			want: counts{Deployments: 3, ReplicaSets: 4, Pods: 8, Events: 40, Services: 2, Nodes: 3, Logs: 8}, wantNS: []string{"dev-mixed"},
		},
		{
			name: "nested directories, other files ignored",
			files: map[string][]byte{
				"a/b/web/pods.json":      podList,
				"a/c/d/e/all.yaml":       []byte(multiDocYAML),
				"a/notes.md":             []byte("# not a dump\n"),
				"a/.hidden/pods.json":    []byte("not read"),
				"a/b/web/x/logs.txt":     []byte("==== START logs for container web of pod dev-web/x ====\nhello\n==== END logs for container web of pod dev-web/x ====\n"),
				"a/b/web/x/previous.log": []byte("==== START logs for container web of pod dev-web/x (previous) ====\nbye\n==== END logs for container web of pod dev-web/x (previous) ====\n"),
			},
			path: "a",
			want: counts{Deployments: 1, Services: 1, Pods: 3, Logs: 2}, wantNS: []string{"dev-web", "shop"}, wantSkipped: map[string]int{"ConfigMap": 1},
		},
		{
			name:  "the same object twice is read once",
			files: map[string][]byte{"1/pods.json": podList, "2/pods.json": podList}, path: ".",
			want: counts{Pods: 3}, wantNS: []string{"dev-web"},
		},
		{
			name:  "events.k8s.io/v1 events",
			files: map[string][]byte{"ev.yaml": mustRead(t, "testdata/events-k8s-io-dev-search.yaml")}, path: "ev.yaml",
			want: counts{Events: 5}, wantNS: []string{"dev-search"},
		},
		{
			name:  "kinds it does not model are skipped and counted",
			files: map[string][]byte{"mixed.json": unknown}, path: "mixed.json",
			want: counts{Pods: 1}, wantNS: []string{"dev-web"},
			wantSkipped: map[string]int{"ConfigMap": 1, "ReplicationController": 2, "Ingress": 1, "Deployment": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path
			if tt.files != nil {
				path = filepath.Join(writeTree(t, tt.files), tt.path)
			}
			var stdin io.Reader
			if tt.stdin != nil {
				stdin = bytes.NewReader(tt.stdin)
			}
			s, err := Read(path, stdin)
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if got := countsOf(s); got != tt.want {
				t.Errorf("counts = %+v, want %+v", got, tt.want)
			}
			if strings.Join(s.Namespaces, ",") != strings.Join(tt.wantNS, ",") {
				t.Errorf("Namespaces = %v, want %v", s.Namespaces, tt.wantNS)
			}
			if len(s.Source.Skipped) != len(tt.wantSkipped) {
				t.Errorf("Skipped = %v, want %v", s.Source.Skipped, tt.wantSkipped)
			}
			for k, n := range tt.wantSkipped {
				if s.Source.Skipped[k] != n {
					t.Errorf("Skipped[%s] = %d, want %d", k, s.Source.Skipped[k], n)
				}
			}
			if s.Source.Type != snapshot.SourceDump || s.Source.Path != path {
				t.Errorf("Source = %+v, want dump %s", s.Source, path)
			}
			for _, d := range s.Deployments {
				if d.ManagedFields != nil {
					t.Errorf("deployment %s keeps its managedFields", d.Name)
				}
			}
		})
	}
}

// TestReadEquivalentForms reads the same objects in different forms and expects the same objects.
func TestReadEquivalentForms(t *testing.T) {
	fromJSON, err := Read("testdata/get-dev-web.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	fromYAML, err := Read("testdata/get-dev-web.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	fromDir := readScenario(t, "dev-web")
	for name, s := range map[string]*snapshot.Snapshot{"yaml": fromYAML, "cluster-info dump": fromDir} {
		if !apiequality.Semantic.DeepEqual(fromJSON.Pods, s.Pods) || !apiequality.Semantic.DeepEqual(fromJSON.Deployments, s.Deployments) ||
			!apiequality.Semantic.DeepEqual(fromJSON.ReplicaSets, s.ReplicaSets) || !apiequality.Semantic.DeepEqual(fromJSON.Services, s.Services) {
			t.Errorf("objects read from %s differ from those read from kubectl get -o json", name)
		}
		if len(fromJSON.Events) != len(s.Events) || !apiequality.Semantic.DeepEqual(fromJSON.Events, s.Events) {
			t.Errorf("events read from %s differ from those read from kubectl get -o json", name)
		}
	}

	dir := readScenario(t, "dev-mixed")
	dir.EndpointSlices = nil // endpointslices.json was added to the scenario dump; kubectl does not print them
	for _, asYAML := range []bool{false, true} {
		stdout, err := Read("-", bytes.NewReader(clusterInfoStdout(t, "dev-mixed", asYAML)))
		if err != nil {
			t.Fatal(err)
		}
		if diff := differences(stdout, dir); len(diff) > 0 {
			t.Errorf("cluster-info dump on stdout (yaml %v) reads differently from the same dump in a directory: %v", asYAML, diff)
		}
	}
}

// TestReadEventsK8sIO checks the conversion against the API server's: an events.k8s.io/v1 Event
// reads as the core/v1 Event the API server serves for the same object.
func TestReadEventsK8sIO(t *testing.T) {
	v1, err := Read("testdata/events-k8s-io-dev-search.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	core, err := Read(filepath.Join(scenarioDir, "dev-search", "dump", "dev-search", "events.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(v1.Events, core.Events) {
		for i := range core.Events {
			if !apiequality.Semantic.DeepEqual(v1.Events[i], core.Events[i]) {
				t.Errorf("event %s:\n got %+v\nwant %+v", core.Events[i].Name, v1.Events[i], core.Events[i])
			}
		}
	}
	var sched *corev1.Event
	for _, e := range v1.Events {
		if e.Reason == "FailedScheduling" {
			sched = e
		}
	}
	switch {
	case sched == nil:
		t.Fatal("no FailedScheduling event")
	case sched.Series == nil || sched.Series.Count != 2:
		t.Errorf("series = %+v, want count 2", sched.Series)
	case sched.ReportingController != "default-scheduler" || sched.Source.Component != "":
		t.Errorf("reporting %q, source %+v; want default-scheduler and an empty source", sched.ReportingController, sched.Source)
	case sched.InvolvedObject.Kind != "Pod" || sched.InvolvedObject.Name != "search-indexer-0":
		t.Errorf("involvedObject = %+v", sched.InvolvedObject)
	case sched.Count != 0 || !sched.LastTimestamp.IsZero() || sched.EventTime.IsZero():
		t.Errorf("count %d, lastTimestamp %v, eventTime %v; the API server leaves count and lastTimestamp empty", sched.Count, sched.LastTimestamp, sched.EventTime)
	case sched.Kind != "Event" || sched.APIVersion != "v1":
		t.Errorf("converted event is %s %s, want v1 Event", sched.APIVersion, sched.Kind)
	}
}

func TestSource(t *testing.T) {
	var src snapshot.Source = Source{Path: filepath.Join(scenarioDir, "dev-web", "dump")}
	s, err := src.Snapshot(t.Context())
	if err != nil || len(s.Pods) != 3 {
		t.Fatalf("Snapshot = %v pods, %v", s, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := src.Snapshot(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Snapshot on a cancelled context = %v, want context.Canceled", err)
	}
	s, err = Source{Path: "-", Stdin: bytes.NewReader(mustRead(t, "testdata/get-dev-web.json"))}.Snapshot(t.Context())
	if err != nil || len(s.Deployments) != 1 {
		t.Fatalf("Snapshot from stdin = %v, %v", s, err)
	}
}

// TestReadClusterInfoDumpYAML reads `kubectl cluster-info dump -o yaml --output-directory`, whose
// files are nodes.yaml, <ns>/pods.yaml and so on, and expects what the JSON layout gives.
func TestReadClusterInfoDumpYAML(t *testing.T) {
	src := filepath.Join(scenarioDir, "dev-shipper", "dump")
	files := map[string][]byte{}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data := mustRead(t, p)
		if strings.HasSuffix(rel, ".json") {
			if data, err = yaml.JSONToYAML(data); err != nil {
				return err
			}
			rel = strings.TrimSuffix(rel, ".json") + ".yaml"
		}
		files[rel] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fromYAML, err := Read(writeTree(t, files), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := differences(readScenario(t, "dev-shipper"), fromYAML); len(diff) > 0 {
		t.Errorf("the YAML layout reads differently from the JSON one in %v", diff)
	}
}

func TestReadMissingOwners(t *testing.T) {
	search := filepath.Join(scenarioDir, "dev-search", "dump", "dev-search")
	// What the real kubectl cluster-info dump writes: no statefulsets.json.
	noStatefulSets := writeTree(t, map[string][]byte{
		"dev-search/pods.json":   mustRead(t, filepath.Join(search, "pods.json")),
		"dev-search/events.json": mustRead(t, filepath.Join(search, "events.json")),
	})
	s, err := Read(noStatefulSets, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []snapshot.Visibility{{
		Kind: "StatefulSet", Namespace: "dev-search",
		Reason: "not in the dump, though objects in it are owned by StatefulSet search-indexer",
	}}
	if !slices.Equal(s.Visibility, want) {
		t.Errorf("Visibility = %+v, want %+v", s.Visibility, want)
	}

	s, err = Read(filepath.Join(scenarioDir, "dev-rollout", "dump", "dev-rollout", "replicasets.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	// A ReplicaSet list alone also holds no pod: both gaps are reported.
	if len(s.Visibility) != 2 || s.Visibility[0].Kind != "Deployment" || !strings.HasSuffix(s.Visibility[0].Reason, "Deployment orders") ||
		s.Visibility[1] != (snapshot.Visibility{Kind: "Pod", Reason: "not in the dump"}) {
		t.Errorf("Visibility of ReplicaSets without their Deployment = %+v", s.Visibility)
	}
}

package live

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// listKinds are the list kinds the source reads, by the resource in the request path, so the
// fuzzed server answers every list but the fuzzed one as a real, empty one.
var listKinds = map[string][2]string{
	"deployments":            {"apps/v1", "DeploymentList"},
	"statefulsets":           {"apps/v1", "StatefulSetList"},
	"daemonsets":             {"apps/v1", "DaemonSetList"},
	"replicasets":            {"apps/v1", "ReplicaSetList"},
	"controllerrevisions":    {"apps/v1", "ControllerRevisionList"},
	"jobs":                   {"batch/v1", "JobList"},
	"cronjobs":               {"batch/v1", "CronJobList"},
	"pods":                   {"v1", "PodList"},
	"events":                 {"v1", "EventList"},
	"services":               {"v1", "ServiceList"},
	"persistentvolumeclaims": {"v1", "PersistentVolumeClaimList"},
	"resourcequotas":         {"v1", "ResourceQuotaList"},
	"endpointslices":         {"discovery.k8s.io/v1", "EndpointSliceList"},
	"nodes":                  {"v1", "NodeList"},
	"persistentvolumes":      {"v1", "PersistentVolumeList"},
}

// decodeSeeds are the pods of a real dump as a v1.37 API server sends them, as JSON and as
// protobuf, each behind its content-type byte.
func decodeSeeds(tb testing.TB) (jsonBody, protoBody []byte, pods int) {
	tb.Helper()
	podsJSON, err := os.ReadFile(filepath.Join("..", "..", "testdata", "scenarios", "dev-web", "dump", "dev-web", "pods.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var list corev1.PodList
	if err := runtime.DecodeInto(scheme.Codecs.UniversalDecoder(corev1.SchemeGroupVersion), podsJSON, &list); err != nil {
		tb.Fatal(err)
	}
	list.ResourceVersion = "7"
	var pb bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(&list, &pb); err != nil {
		tb.Fatal(err)
	}
	return append([]byte{0}, podsJSON...), append([]byte{1}, pb.Bytes()...), len(list.Items)
}

// decodeServer is a source over a server whose pod list is the body set last, as JSON or (first
// byte odd) as protobuf; every other list is a real, empty one.
func decodeServer(tb testing.TB) (*Source, func([]byte)) {
	var mu sync.Mutex
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b := body
		mu.Unlock()
		resource := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		switch {
		case resource == "pods" && len(b) > 0:
			ct := "application/json"
			if b[0]%2 == 1 {
				ct = runtime.ContentTypeProtobuf
			}
			w.Header().Set("Content-Type", ct)
			_, _ = w.Write(b[1:])
		case resource == "log":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write(b)
		default:
			gv, ok := listKinds[resource]
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"kind":%q,"apiVersion":%q,"metadata":{"resourceVersion":"7"},"items":[]}`, gv[1], gv[0])
		}
	}))
	tb.Cleanup(srv.Close)
	return hostileSource(tb, srv), func(b []byte) {
		mu.Lock()
		body = b
		mu.Unlock()
	}
}

// TestDecodeServerServesRealPods holds the fuzz target's server to reading the seeds whole, so
// the fuzzer starts from reads that reach the engine rather than from errors.
func TestDecodeServerServesRealPods(t *testing.T) {
	jsonBody, protoBody, want := decodeSeeds(t)
	src, set := decodeServer(t)
	for name, b := range map[string][]byte{"json": jsonBody, "protobuf": protoBody} {
		set(b)
		snap, err := src.Snapshot(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(snap.Pods) != want || want == 0 {
			t.Errorf("%s: read %d pods, want %d", name, len(snap.Pods), want)
		}
	}
}

// FuzzLiveDecode runs the live read end to end, client-go's decoding included, on a server
// whose pod list is the fuzzed body, and then the engine on what was read: whatever a server
// sends, the read fails with a one-line error or gives a snapshot the engine diagnoses, never a
// panic or a hang.
func FuzzLiveDecode(f *testing.F) {
	jsonBody, protoBody, _ := decodeSeeds(f)
	f.Add(jsonBody)
	f.Add(protoBody)
	f.Add([]byte{0})
	f.Add([]byte("\x00" + `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"a","namespace":"telemetry","ownerReferences":[{"kind":"ReplicaSet","name":"x","controller":true}]},"status":{"containerStatuses":[{"name":"c","restartCount":-5,"state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}}]}`))
	src, set := decodeServer(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		set(in)
		snap, err := src.Snapshot(context.Background())
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a read error is one line, got %q", err)
			}
			return
		}
		diagnose.Diagnose(snap)
	})
}

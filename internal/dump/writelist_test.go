package dump

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// TestWriteListAsMarshalIndent: a list written an item at a time is byte for byte what
// json.MarshalIndent writes of the whole list, for every kind, empty and nil lists included.
func TestWriteListAsMarshalIndent(t *testing.T) {
	s := scaleSnapshot(t, 3, 1, 0)
	s.Pods[0].Annotations = map[string]string{"html": "<a href=\"x\">&amp;</a>", "unicode": "é\u2028"}
	lists := map[string]k8sruntime.Object{
		"PodList":           &corev1.PodList{Items: derefs(s.Pods)},
		"EventList":         &corev1.EventList{Items: derefs(s.Events)},
		"ServiceList":       &corev1.ServiceList{Items: derefs(s.Services)},
		"NodeList":          &corev1.NodeList{Items: derefs(s.Nodes)},
		"DeploymentList":    &appsv1.DeploymentList{Items: derefs(s.Deployments)},
		"ReplicaSetList":    &appsv1.ReplicaSetList{Items: derefs(s.ReplicaSets)},
		"EndpointSliceList": &discoveryv1.EndpointSliceList{Items: derefs(s.EndpointSlices)},
		"DaemonSetList":     &appsv1.DaemonSetList{},
		"StatefulSetList":   &appsv1.StatefulSetList{Items: []appsv1.StatefulSet{}},
		// What Write writes: a kind's items, held as any.
		"PodList as items":            &itemList{Items: derefs(s.Pods)},
		"EventList as items":          &itemList{Items: derefs(s.Events)},
		"JobList as items, none":      &itemList{Items: []batchv1.Job(nil)},
		"CronJobList as items, empty": &itemList{Items: []batchv1.CronJob{}},
	}
	for name, list := range lists {
		t.Run(name, func(t *testing.T) {
			kind, _, _ := strings.Cut(name, " ")
			list.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: kind})
			want, err := json.MarshalIndent(list, "", "    ")
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, '\n')
			var got bytes.Buffer
			if err := writeList(&got, list); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				i := 0
				for i < min(got.Len(), len(want)) && got.Bytes()[i] == want[i] {
					i++
				}
				t.Fatalf("differs from json.MarshalIndent at byte %d of %d: %q", i, len(want), got.Bytes()[max(0, i-40):min(got.Len(), i+40)])
			}
		})
	}
}

// TestWriteListWritesAnItemAtATime: what Write hands writeList (a kind's items as any) is
// written an item at a time, never the whole list in one piece.
func TestWriteListWritesAnItemAtATime(t *testing.T) {
	s := scaleSnapshot(t, 20, 1, 0)
	biggest := 0
	for _, p := range s.Pods {
		data, err := json.MarshalIndent(p, "        ", "    ")
		if err != nil {
			t.Fatal(err)
		}
		biggest = max(biggest, len(data))
	}
	list := &itemList{Items: snapshot.Kinds[kindIndex(t, "Pod")].Items(s, func(metav1.Object) bool { return true })}
	list.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "PodList"})
	var w writeSizes
	if err := writeList(&w, list); err != nil {
		t.Fatal(err)
	}
	if len(s.Pods) < 20 || w.largest > biggest {
		t.Errorf("%d pods written in %d writes, the largest %d bytes; want none larger than a pod's %d", len(s.Pods), w.writes, w.largest, biggest)
	}
}

// writeSizes counts the writes made to it and the largest.
type writeSizes struct{ writes, largest int }

func (w *writeSizes) Write(p []byte) (int, error) {
	w.writes++
	w.largest = max(w.largest, len(p))
	return len(p), nil
}

func kindIndex(t *testing.T, kind string) int {
	t.Helper()
	for i := range snapshot.Kinds {
		if snapshot.Kinds[i].Kind == kind {
			return i
		}
	}
	t.Fatalf("no kind %s", kind)
	return -1
}

func derefs[T any](ps []*T) []T {
	out := make([]T, 0, len(ps))
	for _, p := range ps {
		out = append(out, *p)
	}
	return out
}

// BenchmarkWriteScale writes the 20,000-pod snapshot in one namespace, the worst case for a
// writer that holds a list's text, and reports the peak of the heap above the snapshot's.
func BenchmarkWriteScale(b *testing.B) {
	scaleRoot(b) // as heavy as the read benchmarks, and run with them
	s := scaleSnapshot(b, scaleDeployments, scaleDeployments, 0)
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak uint64
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
				metrics.Read(s)
				mu.Lock()
				peak = max(peak, s[0].Value.Uint64())
				mu.Unlock()
			}
		}
	}()
	for b.Loop() {
		if err := Write(filepath.Join(b.TempDir(), "dump"), s, false); err != nil {
			b.Fatal(err)
		}
	}
	close(done)
	mu.Lock()
	b.ReportMetric(float64(peak-min(peak, base))/1e6, "MB-peak-above-snapshot")
	b.ReportMetric(float64(base)/1e6, "MB-snapshot")
	mu.Unlock()
}

package live

import (
	"context"
	goruntime "runtime"
	"testing"
	"weak"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestAProtobufListReadsAsTheTypedClientReadsIt: the pods of a real dump, served as protobuf
// and as JSON, read into the same objects as the typed client decodes them (managedFields
// dropped), page after page.
func TestAProtobufListReadsAsTheTypedClientReadsIt(t *testing.T) {
	jsonBody, protoBody, n := decodeSeeds(t)
	var want corev1.PodList
	if err := runtime.DecodeInto(scheme.Codecs.UniversalDecoder(corev1.SchemeGroupVersion), protoBody[1:], &want); err != nil {
		t.Fatal(err)
	}
	src, set := decodeServer(t)
	for _, body := range [][]byte{protoBody, jsonBody, protoBody} {
		set(body)
		snap, err := src.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Pods) != n {
			t.Fatalf("read %d pods, want %d", len(snap.Pods), n)
		}
		for i, got := range snap.Pods {
			w := want.Items[i].DeepCopy()
			w.ManagedFields = nil
			if !equality.Semantic.DeepEqual(got, w) {
				t.Errorf("pod %s read differently from the typed client's decoding:\n got %+v\nwant %+v", w.Name, got, w)
			}
		}
	}
}

// The pods of a protobuf list are allocations of their own: a watch keeps the first read's
// pods, and a pod the informers have replaced must be collectable while the others are kept,
// not held by one array of the read's pods.
func TestPodsReadFromAProtobufListAreCollectedApart(t *testing.T) {
	_, protoBody, n := decodeSeeds(t)
	if n < 2 {
		t.Fatalf("the seed has %d pods, want 2 or more", n)
	}
	src, set := decodeServer(t)
	set(protoBody)
	snap, err := src.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	kept, replaced := snap.Pods[0], weak.Make(snap.Pods[1])
	snap = nil
	goruntime.GC()
	goruntime.GC()
	if replaced.Value() != nil {
		t.Error("a pod no one holds is kept alive by another pod of its list")
	}
	if kept.Name == "" {
		t.Error("the kept pod has no name")
	}
}

package live

import (
	"bytes"
	"context"
	goruntime "runtime"
	"testing"
	"weak"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// TestAProtobufListReadsAsTheTypedClientReadsIt: the pods of a real dump, served as protobuf
// and as JSON, read into the same objects as the typed client decodes them (managedFields
// dropped), page after page of reused buffers.
func TestAProtobufListReadsAsTheTypedClientReadsIt(t *testing.T) {
	jsonBody, protoBody, n := decodeSeeds(t)
	var want corev1.PodList
	if err := runtime.DecodeInto(scheme.Codecs.UniversalDecoder(corev1.SchemeGroupVersion), protoBody[1:], &want); err != nil {
		t.Fatal(err)
	}
	if _, ok := protoListBytes(protoBody[1:], "PodList"); !ok {
		t.Fatal("the seed's protobuf PodList would be asked for again, not decoded in place")
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

// TestProtoListBytesTakesOnlyAnUncompressedListOfItsKind: anything but a protobuf list of the
// kind asked for goes to the typed client, which words its failure as ever.
func TestProtoListBytesTakesOnlyAnUncompressedListOfItsKind(t *testing.T) {
	var pb bytes.Buffer
	list := &corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, ListMeta: metav1.ListMeta{ResourceVersion: "7"}, Items: []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "web-1"}}}}
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(list, &pb); err != nil {
		t.Fatal(err)
	}
	raw, ok := protoListBytes(pb.Bytes(), "PodList")
	if !ok {
		t.Fatal("a protobuf PodList was not taken")
	}
	var got corev1.PodList
	if err := got.Unmarshal(raw); err != nil || got.ResourceVersion != "7" || len(got.Items) != 1 || got.Items[0].Name != "web-1" {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	unknown := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Raw: raw, ContentEncoding: "gzip"}
	gz, err := unknown.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	status := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1", Kind: "Status"}, Raw: []byte{}}
	st, err := status.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"another kind":   pb.Bytes(),
		"compressed":     append(append([]byte(nil), protoMagic...), gz...),
		"a Status":       append(append([]byte(nil), protoMagic...), st...),
		"cut short":      pb.Bytes()[:pb.Len()-3],
		"JSON":           []byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[]}`),
		"the magic only": protoMagic,
		"empty":          nil,
	} {
		kind := "PodList"
		if name == "another kind" {
			kind = "NodeList"
		}
		if _, ok := protoListBytes(b, kind); ok {
			t.Errorf("%s: taken as a protobuf %s", name, kind)
		}
	}
}

// TestListOptionsMakeTheQueryVersionedParamsMakes: the same URL for every option a read sends
// (the pager's limit and continue, the watch cache's resourceVersion, -l, --field-selector, a
// timeout), and VersionedParams itself for any other.
func TestListOptionsMakeTheQueryVersionedParamsMakes(t *testing.T) {
	rc, err := rest.RESTClientFor(&rest.Config{
		Host: "https://example.invalid", APIPath: "/api",
		ContentConfig: rest.ContentConfig{GroupVersion: &corev1.SchemeGroupVersion, NegotiatedSerializer: scheme.Codecs.WithoutConversion()},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []metav1.ListOptions{
		{},
		{ResourceVersion: "0", Limit: 500},
		{ResourceVersion: "0", Limit: 500, Continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDF9", LabelSelector: "app in (web, api),tier!=db", FieldSelector: "metadata.name=web-1"},
		{Limit: -1, TimeoutSeconds: ptr.To[int64](30)},
		{ResourceVersion: "41", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Limit: 500},
		{Watch: true, AllowWatchBookmarks: true, SendInitialEvents: ptr.To(true)},
	} {
		want := rc.Get().Namespace("shop").Resource("pods").VersionedParams(&opts, scheme.ParameterCodec).URL().String()
		got := withListOptions(rc.Get().Namespace("shop").Resource("pods"), opts).URL().String()
		if got != want {
			t.Errorf("%+v:\n got %s\nwant %s", opts, got, want)
		}
	}
}

// A list body larger than maxPooledBody is not kept for the next list: the pool would hold it
// through two more collections, counted as live heap (the pods of a 20k-pod namespace fill
// a buffer of a hundred MiB). One within the bound is reused.
func TestALargeListBodyIsLeftForTheCollector(t *testing.T) {
	big := bytes.NewBuffer(make([]byte, 0, 2*maxPooledBody))
	big.WriteString("k8s\x00")
	putBody(big)
	for range 8 {
		if b := bodies.Get().(*bytes.Buffer); b.Cap() > maxPooledBody {
			t.Fatalf("the pool handed out a buffer of %d bytes, over its bound of %d", b.Cap(), maxPooledBody)
		}
	}
	small := bytes.NewBuffer(make([]byte, 0, 1024))
	small.WriteString("k8s\x00")
	putBody(small)
	if small.Len() != 0 {
		t.Error("a buffer returned to the pool keeps its last body")
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

// A pod list decoded on several cores is the generated decoder's, pod for pod and in order; a
// pod that does not decode fails the whole list, wherever it lies.
func TestPodsDecodedApartOnEveryCoreAreTheListInOrder(t *testing.T) {
	raw := benchPodList(t, 3*minPodsAWorker+7)
	want := &corev1.PodList{}
	if err := want.Unmarshal(raw); err != nil {
		t.Fatal(err)
	}
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(4))
	got, ok, err := podsApart(raw)
	if !ok || err != nil {
		t.Fatalf("podsApart: ok %v, %v", ok, err)
	}
	l := got.(*metav1.List)
	if l.ResourceVersion != want.ResourceVersion || len(l.Items) != len(want.Items) {
		t.Fatalf("version %q, %d pods; want %q, %d", l.ResourceVersion, len(l.Items), want.ResourceVersion, len(want.Items))
	}
	for i, it := range l.Items {
		if p, _ := it.Object.(*corev1.Pod); p == nil || !equality.Semantic.DeepEqual(*p, want.Items[i]) {
			t.Fatalf("pod %d is not the list's %s", i, want.Items[i].Name)
		}
	}

	// The last pod's encoding cut short: the last worker's range.
	broken := append([]byte(nil), raw[:len(raw)-1]...)
	if _, ok, err := podsApart(broken); ok && err == nil {
		t.Error("a list whose last pod is cut short decoded")
	}
	// A pod in the middle whose metadata claims more bytes than the pod has.
	var mid []byte
	items := 0
	for b := raw; len(b) > 0; {
		field, _, n := protoTag(b)
		_, m := protoBytes(b[n:])
		if field == 2 {
			if items++; items == len(want.Items)/2 {
				mid = append(mid, 0x12, 2, 0x0a, 0x7f)
				b = b[n+m:]
				continue
			}
		}
		mid = append(mid, b[:n+m]...)
		b = b[n+m:]
	}
	if _, ok, err := podsApart(mid); !ok || err == nil {
		t.Errorf("a list with a pod that does not decode in the middle: ok %v, err %v; want its error", ok, err)
	}
}

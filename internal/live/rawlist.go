package live

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	goruntime "runtime"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/pager"
)

// protoList is a generated list type: it decodes itself from protobuf.
type protoList interface {
	runtime.Object
	Unmarshal(data []byte) error
}

// protoMagic opens every protobuf answer of a Kubernetes API server (runtime/serializer/protobuf).
var protoMagic = []byte("k8s\x00")

// bodies are the buffers list answers are read into, reused from list to list: the generated
// decoders copy every string and byte slice they keep, so a buffer is free again once its list
// is decoded.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBody bounds the buffers kept in bodies. A list answered from the API server's watch
// cache comes in one page however large (resourceVersion=0 ignores the limit), so a 20k-pod
// namespace's pods fill a buffer of a hundred MiB or more, read once per read. Kept in the pool
// it would stay reachable for two more collections, and the collector counts it as live heap:
// the first collection after a read set the heap's goal at twice the namespace plus its bodies
// (716 MiB where the watch held 250-310), and a console under churn grew to that goal before it
// collected again.
const maxPooledBody = 4 << 20

// putBody returns a buffer to bodies once its list is decoded, unless it is larger than
// maxPooledBody: then it is left for the next collection.
func putBody(buf *bytes.Buffer) {
	if buf.Cap() > maxPooledBody {
		return
	}
	buf.Reset()
	bodies.Put(buf)
}

// fastPageFunc lists one page of a kind as the typed client does, without its two copies of
// each answer: client-go reads the body with io.ReadAll, which grows a new buffer from 512
// bytes for every list, and its protobuf decoder copies the list's bytes out of the envelope
// (runtime.Unknown) before decoding them. Here the body is read into a buffer reused from list
// to list and the list is decoded in place. A JSON answer is decoded as the typed client
// decodes it; anything else (a web page, an empty body) is asked for again through the typed
// client (slow), so that it fails exactly as the typed client words it: a Kubernetes API server
// answers every kind the tool reads in protobuf. Clients other than the source's own (a fake in
// tests) take slow.
func fastPageFunc[L any, PL interface {
	*L
	protoList
}](c kubernetes.Interface, group func(*groupsClient) rest.Interface, resource, listKind, ns string, slow pager.ListPageFunc,
) pager.ListPageFunc {
	gc, ok := c.(*groupsClient)
	if !ok {
		return slow
	}
	rc := group(gc)
	return func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		var timeout time.Duration
		if opts.TimeoutSeconds != nil {
			timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
		}
		body, err := withListOptions(rc.Get().NamespaceIfScoped(ns, ns != "").Resource(resource), opts).
			Timeout(timeout).Stream(ctx)
		if err != nil {
			return nil, err
		}
		buf := bodies.Get().(*bytes.Buffer)
		defer putBody(buf)
		_, err = buf.ReadFrom(body)
		_ = body.Close()
		if err != nil {
			// As client-go words a body cut off mid-answer; fatal recognises the cause.
			return nil, fmt.Errorf("unexpected error when reading response body. Please retry. Original error: %w", err)
		}
		list := PL(new(L))
		if raw, ok := protoListBytes(buf.Bytes(), listKind); ok {
			if listKind == "PodList" {
				if l, ok, err := podsApart(raw); ok {
					return l, err
				}
			}
			if err := list.Unmarshal(raw); err != nil {
				return nil, fmt.Errorf("decode %s: %w", listKind, err)
			}
			return list, nil
		}
		if !looksJSON(buf.Bytes()) {
			return slow(ctx, opts)
		}
		// As Result.Into decodes it: a Status that is no success is the server's error.
		out, _, err := jsonDecoder.Decode(buf.Bytes(), nil, list)
		if err != nil {
			return nil, err
		}
		if st, ok := out.(*metav1.Status); ok && out != runtime.Object(list) && st.Status != metav1.StatusSuccess {
			return nil, apierrors.FromObject(st)
		}
		return list, nil
	}
}

// podsApart decodes an encoded PodList into a list whose pods are each an allocation of their
// own, not items of one array: a watch stores the first read's very pods, and one array of a
// namespace's pods stayed reachable as long as any one of them was, and with it every field of
// the pods the informers had since replaced (a 20k-pod namespace: a 25 MB array holding up to
// 5 KB more for each pod changed since the read). ok is false for an encoding it does not take
// apart (a field not of the list's two), which the generated decoder then reads whole.
//
// The pods are decoded on every core: the pod list is the largest answer of a read and comes
// last (one page: resourceVersion=0 ignores the limit), so its decoding, half a second on one
// core at 20,000 pods, was the read's last step with the other core idle.
func podsApart(raw []byte) (runtime.Object, bool, error) {
	l := &metav1.List{}
	var items [][]byte
	for b := raw; len(b) > 0; {
		field, typ, n := protoTag(b)
		if n <= 0 || typ != 2 || (field != 1 && field != 2) {
			return nil, false, nil
		}
		b = b[n:]
		v, n := protoBytes(b)
		if n <= 0 {
			return nil, false, nil
		}
		b = b[n:]
		if field == 1 {
			if err := l.ListMeta.Unmarshal(v); err != nil {
				return nil, true, fmt.Errorf("decode PodList: %w", err)
			}
			continue
		}
		items = append(items, v)
	}
	l.Items = make([]runtime.RawExtension, len(items))
	errs := make([]error, len(items))
	decode := func(from, to int) {
		for i := from; i < to; i++ {
			p := new(corev1.Pod)
			if errs[i] = p.Unmarshal(items[i]); errs[i] != nil {
				return
			}
			l.Items[i].Object = p
		}
	}
	workers := min(goruntime.GOMAXPROCS(0), len(items)/minPodsAWorker)
	if workers <= 1 {
		decode(0, len(items))
	} else {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() { decode(w*len(items)/workers, (w+1)*len(items)/workers) })
		}
		wg.Wait()
	}
	for _, err := range errs {
		if err != nil {
			return nil, true, fmt.Errorf("decode PodList: %w", err)
		}
	}
	return l, true, nil
}

// minPodsAWorker is the fewest pods worth a goroutine of their own to decode (about 25 µs each).
const minPodsAWorker = 256

// jsonDecoder decodes a JSON answer as the typed clients' negotiator does.
var jsonDecoder = func() runtime.Decoder {
	d, err := runtime.NewClientNegotiator(scheme.Codecs.WithoutConversion(), schema.GroupVersion{}).Decoder(runtime.ContentTypeJSON, nil)
	if err != nil {
		panic("live: no JSON decoder: " + err.Error())
	}
	return d
}()

// looksJSON reports whether b opens a JSON object: an API server's answer in JSON, not a web
// page or an empty body, which the typed client words its own way.
func looksJSON(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// protoListBytes returns the encoded list inside a protobuf answer (the magic, then a
// runtime.Unknown: 1 typeMeta {1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding, 4 contentType),
// and false unless the answer is one, of kind, uncompressed.
func protoListBytes(b []byte, kind string) ([]byte, bool) {
	if !bytes.HasPrefix(b, protoMagic) {
		return nil, false
	}
	b = b[len(protoMagic):]
	var raw []byte
	gotKind := false
	for len(b) > 0 {
		field, typ, n := protoTag(b)
		if n <= 0 || typ != 2 { // every field of Unknown is length-delimited
			return nil, false
		}
		b = b[n:]
		v, n := protoBytes(b)
		if n <= 0 {
			return nil, false
		}
		b = b[n:]
		switch field {
		case 1:
			k, ok := typeMetaKind(v)
			if !ok || k != kind {
				return nil, false
			}
			gotKind = true
		case 2:
			raw = v
		case 3:
			if len(v) > 0 {
				return nil, false
			}
		}
	}
	return raw, gotKind && raw != nil
}

// typeMetaKind is the kind of an encoded runtime.TypeMeta.
func typeMetaKind(b []byte) (string, bool) {
	kind := ""
	for len(b) > 0 {
		field, typ, n := protoTag(b)
		if n <= 0 || typ != 2 {
			return "", false
		}
		b = b[n:]
		v, n := protoBytes(b)
		if n <= 0 {
			return "", false
		}
		b = b[n:]
		if field == 2 {
			kind = string(v)
		}
	}
	return kind, true
}

func protoTag(b []byte) (field uint64, typ uint64, n int) {
	v, n := binary.Uvarint(b)
	return v >> 3, v & 7, n
}

// protoBytes reads a length-delimited value; n is what it took, <= 0 when b is cut short.
func protoBytes(b []byte) ([]byte, int) {
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)-n) {
		return nil, 0
	}
	return b[n : n+int(l)], n + int(l)
}

// withListOptions sets the query of a list as VersionedParams(&opts, scheme.ParameterCodec)
// does, without its conversion by reflection (5% of a fleet's CPU), for the options a read
// sends; any other option takes VersionedParams.
func withListOptions(r *rest.Request, opts metav1.ListOptions) *rest.Request {
	other := opts
	other.LabelSelector, other.FieldSelector, other.ResourceVersion, other.Limit, other.Continue, other.TimeoutSeconds = "", "", "", 0, "", nil
	if other != (metav1.ListOptions{}) {
		return r.VersionedParams(&opts, scheme.ParameterCodec)
	}
	for _, p := range [...]struct{ name, value string }{
		{"labelSelector", opts.LabelSelector},
		{"fieldSelector", opts.FieldSelector},
		{"resourceVersion", opts.ResourceVersion},
		{"continue", opts.Continue},
	} {
		if p.value != "" {
			r = r.Param(p.name, p.value)
		}
	}
	if opts.Limit != 0 {
		r = r.Param("limit", strconv.FormatInt(opts.Limit, 10))
	}
	if opts.TimeoutSeconds != nil {
		r = r.Param("timeoutSeconds", strconv.FormatInt(*opts.TimeoutSeconds, 10))
	}
	return r
}

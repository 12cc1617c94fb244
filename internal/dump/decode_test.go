package dump

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// kindsRead are the kinds the reader keeps in a fixed order, for the fuzz targets to pick from.
func kindsRead() []schema.GroupVersionKind {
	out := []schema.GroupVersionKind{eventsGVK}
	for i := range snapshot.Kinds {
		out = append(out, snapshot.Kinds[i].GVK)
	}
	slices.SortFunc(out, func(a, b schema.GroupVersionKind) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// kindOf is the kind value reads the object as: its own apiVersion and kind over def's.
func kindOf(raw []byte, def schema.GroupVersionKind) (schema.GroupVersionKind, bool) {
	head, err := readHead(raw)
	if err != nil {
		return def, false
	}
	gvk := def
	if head.APIVersion != "" {
		gv, err := schema.ParseGroupVersion(head.APIVersion)
		if err != nil {
			return def, false
		}
		gvk.Group, gvk.Version = gv.Group, gv.Version
	}
	if head.Kind != "" {
		gvk.Kind = head.Kind
	}
	return gvk, gvk == eventsGVK || snapshot.KindFor(gvk) != nil
}

// sameDecode decodes raw both ways and reports how they differ, if they do.
func sameDecode(t *testing.T, raw []byte, gvk schema.GroupVersionKind) (decoded bool) {
	t.Helper()
	// The fast decode reads a copy that is overwritten afterwards, as the reader reuses item
	// buffers: what it returns must not point into its input.
	in := bytes.Clone(raw)
	fast, errFast := decodeObject(in, gvk)
	for i := range in {
		in[i] = '#'
	}
	slow, _, errSlow := decoder.Decode(raw, &gvk, nil)
	if (errFast == nil) != (errSlow == nil) {
		t.Fatalf("%s: decodeObject error %v, deserializer error %v\n%s", gvk, errFast, errSlow, raw)
	}
	if errFast != nil {
		if errFast.Error() != errSlow.Error() {
			t.Fatalf("%s: decodeObject error %q, deserializer error %q", gvk, errFast, errSlow)
		}
		return false
	}
	// The pool decodes the kinds compactKinds names from their text without line breaks and
	// indentation: same value, same error.
	if compactKinds[gvk] {
		compact, errCompact := decodeObject(appendCompact(nil, raw), gvk)
		if (errFast == nil) != (errCompact == nil) || (errFast != nil && errFast.Error() != errCompact.Error()) {
			t.Fatalf("%s: decodeObject error %v, of the compacted text %v\n%s", gvk, errFast, errCompact, raw)
		}
		if errFast == nil && !reflect.DeepEqual(fast, compact) {
			t.Fatalf("%s: the text and its compacted text decode differently\n%s", gvk, raw)
		}
	}
	// Text without a backslash takes the plain path (keys read in place, strings in shared
	// blocks); the same object with an escaped key it does not have takes the other one.
	if rest := bytes.TrimLeft(bytes.TrimLeft(raw, " \t\r\n")[1:], " \t\r\n"); bytes.IndexByte(raw, '\\') < 0 && len(rest) > 0 && rest[0] != '}' {
		escaped, err := decodeObject([]byte(`{"x\u0079":0,`+string(rest)), gvk)
		if err != nil {
			t.Fatalf("%s: decoded plain, not with an escaped key added: %v\n%s", gvk, err, raw)
		}
		if !reflect.DeepEqual(fast, escaped) {
			t.Fatalf("%s: the plain and the escaped paths decode differently\n%s", gvk, raw)
		}
	}
	// The fast decode skips managedFields where the reader drops them.
	snapshot.TrimManagedFields(fast)
	snapshot.TrimManagedFields(slow)
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%s: decodeObject and the deserializer decode differently\n%s", gvk, raw)
	}
	return true
}

// TestDecodeObjectAgreesWithDeserializer decodes every object of every dump in testdata (the
// scenarios, the fixtures, this package's own) both ways and requires the same Go values.
func TestDecodeObjectAgreesWithDeserializer(t *testing.T) {
	var files []string
	for _, root := range []string{filepath.Join("..", "..", "testdata"), "testdata"} {
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "fuzz" {
				return filepath.SkipDir
			}
			switch filepath.Ext(p) {
			case ".json", ".yaml", ".yml":
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	kinds := map[string]int{}
	for _, f := range files {
		data := mustRead(t, f)
		if filepath.Ext(f) != ".json" {
			var err error
			if data, err = sigsyaml.YAMLToJSON(data); err != nil {
				continue // a multi-document file or one not of objects: read elsewhere
			}
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		for {
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				break
			}
			var walk func(raw []byte, def schema.GroupVersionKind)
			walk = func(raw []byte, def schema.GroupVersionKind) {
				if firstByte(raw) != '{' {
					return
				}
				head, err := readHead(raw)
				if err != nil {
					return
				}
				if strings.HasSuffix(head.Kind, "List") {
					items, err := listItems(raw)
					if err != nil {
						return
					}
					gv, _ := schema.ParseGroupVersion(head.APIVersion)
					item := gv.WithKind(strings.TrimSuffix(head.Kind, "List"))
					for _, it := range items {
						walk(it.data, item)
					}
					return
				}
				if gvk, ok := kindOf(raw, def); ok && sameDecode(t, raw, gvk) {
					kinds[gvk.Kind]++
				}
			}
			walk(v, schema.GroupVersionKind{})
		}
	}
	t.Logf("%d files, objects decoded both ways: %v", len(files), kinds)
	for _, k := range []string{"Pod", "Deployment", "ReplicaSet", "Event", "Service", "EndpointSlice", "Node", "StatefulSet", "DaemonSet", "ControllerRevision", "PersistentVolumeClaim", "ResourceQuota", "PodDisruptionBudget", "PersistentVolume"} {
		if kinds[k] == 0 {
			t.Errorf("no %s in testdata was compared", k)
		}
	}
}

// TestDecodeObjectSkipsManagedFields: managedFields are not built where the reader drops them,
// and a Service, which keeps them, has them decoded.
func TestDecodeObjectSkipsManagedFields(t *testing.T) {
	mf := `"managedFields":[{"manager":"kubectl","operation":"Update","apiVersion":"v1","time":"2026-11-24T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:selector":{}}}}]`
	pod, err := decodeObject([]byte(`{"metadata":{"name":"p",`+mf+`}}`), schema.GroupVersionKind{Version: "v1", Kind: "Pod"})
	if err != nil {
		t.Fatal(err)
	}
	if got := pod.(*corev1.Pod).ManagedFields; got != nil {
		t.Errorf("pod's managedFields decoded: %+v", got)
	}
	svc, err := decodeObject([]byte(`{"metadata":{"name":"s",`+mf+`}}`), schema.GroupVersionKind{Version: "v1", Kind: "Service"})
	if err != nil {
		t.Fatal(err)
	}
	if got := svc.(*corev1.Service).ManagedFields; len(got) != 1 || got[0].Manager != "kubectl" || got[0].Time == nil || got[0].FieldsV1.GetRawString() != `{"f:spec":{"f:selector":{}}}` {
		t.Errorf("service's managedFields decoded as %+v", got)
	}
	if _, err := decodeObject([]byte(`{"metadata":{"name":"p","managedFields":[{"time":"now"}]}}`), schema.GroupVersionKind{Version: "v1", Kind: "Pod"}); err == nil {
		t.Error("a pod whose managedFields the deserializer refuses was decoded")
	}
}

// FuzzDecodeObject holds decodeObject to the universal deserializer it stands in for: on any
// input value hands it (an object read as one of the kinds a snapshot models), both decode the
// same Go value or both fail with the same error.
func FuzzDecodeObject(f *testing.F) {
	kinds := kindsRead()
	f.Add([]byte(`{"metadata":{"name":"p","namespace":"n","creationTimestamp":"2026-11-24T10:00:00Z"},"spec":{"containers":[{"name":"c","resources":{"limits":{"memory":"64Mi","cpu":0.5}},"ports":[{"containerPort":8080}],"livenessProbe":{"httpGet":{"port":"http"}}}]}}`), uint8(7))
	f.Add([]byte(`{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"r"},"data":{"spec":{"x":1.5e3}},"revision":2}`), uint8(0))
	f.Add([]byte(`{"Metadata":{"Name":"p"},"spec":{"replicas":"3"}}`), uint8(1))
	f.Add([]byte(`{"metadata":{"name":"\ud800x","annotations":{"a":"\u00e9\n"},"generation":1e2},"spec":{"template":{"spec":{"containers":[{"name":"c","ports":[{"containerPort":80.0}]}]}},"replicas":null},"metadata":{"name":"q"}}`), uint8(2))
	f.Add([]byte(`{"metadata":{"name":"n"},"status":{"capacity":{"cpu":"4","memory":"16Gi","pods":110}},"spec":{"taints":[{"key":"k","timeAdded":"2026-11-24T10:00:00+01:00"}]}}`), uint8(5))
	f.Add([]byte(`{"metadata":{"name":"p","labels":null,"uid":"\u00e9"},"status":{"conditions":[{"lastTransitionTime":null}]}}`), uint8(8))
	// The leaf decoders of timestamps and quantities: escapes, null, numbers, bad layouts,
	// white space, a value decoded twice.
	f.Add([]byte(`{"metadata":{"name":"p","creationTimestamp":"2026-11-24T10:00:0\u0030Z","deletionTimestamp":null},"status":{"startTime":"2026-11-24 10:00:00Z"}}`), uint8(7))
	f.Add([]byte(`{"metadata":{"name":"p","creationTimestamp":1700000000},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":" 250m ","memory":null},"limits":{"memory":"1Gi","memory":"1e3"}}}]}}`), uint8(7))
	f.Add([]byte(`{"metadata":{"name":"e"},"eventTime":"2026-11-24T10:00:00.123456Z","series":{"lastObservedTime":"2026-11-24T10:00:00Z"},"deprecatedFirstTimestamp":"2026-11-24T10:00:00.5+02:00"}`), uint8(0))
	f.Add([]byte(`{"metadata":{"name":"q"},"spec":{"hard":{"pods":"1\u0030","cpu":"4x"}},"status":{"used":{"pods":"-0"}}}`), uint8(9))
	// managedFields, skipped where the reader drops them: well formed, and each way the
	// deserializer refuses or takes an odd entry.
	f.Add([]byte(`{"metadata":{"name":"p","managedFields":[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1","time":"2026-11-24T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}}},"subresource":"status"}]}}`), uint8(7))
	f.Add([]byte(`{"metadata":{"name":"p","managedFields":[{"manager":7,"time":"yesterday"},null,{"Manager":1,"fieldsV1":"x","time":null}]}}`), uint8(7))
	f.Add([]byte(`{"metadata":{"name":"s","managedFields":{"manager":"m"}},"spec":{"ports":[{"port":80}]}}`), uint8(10))
	f.Add([]byte(`{"metadata":{"name":"p","managedFields":null,"managedFields":[{"operation":null,"time":"2026-11-24T10:00:00\u005a"}]}}`), uint8(3))
	// The plain path (no backslash anywhere): keys of large structs, a string past the
	// blocks' bound, null and empty strings, a repeated key, named string types, map keys.
	f.Add([]byte(`{"metadata":{"name":"p","namespace":"","uid":null,"labels":{"app":"a","":"x"},"annotations":{"k":"`+strings.Repeat("v", 600)+`"}},"spec":{"dnsPolicy":"ClusterFirst","dnsPolicy":"Default","containers":[{"name":"c","args":["a","",null],"imagePullPolicy":"Always"}]},"status":{"phase":"Running"}}`), uint8(7))
	f.Add([]byte(`{"metadata":{"name":"e"},"reason":7,"note":"x"}`), uint8(0))
	// Indented text, compacted for the pool: line breaks and runs of spaces between tokens,
	// around a value the deserializer refuses, around a string of spaces.
	f.Add([]byte("{\n    \"metadata\": {\n        \"name\": \"p  \\n  x\",\r\n\t\"labels\": {\n\n            \"a\": \"        \"\n        }\n    },\n    \"spec\": {\"priority\": [\n 1\n]}\n}\n"), uint8(7))
	f.Add([]byte("{\"metadata\":{\"name\":\"p\",\"creationTimestamp\":{\n  \"a\": 1\n}},\"spec\":{\"overhead\":{\"cpu\":[\n1]}}}"), uint8(7))
	f.Add([]byte(`{"metadata":{"name":"p","namespace":"n\u0061"},"spec":{"nodeName":"\/n"}}`), uint8(7))
	// Slices decoded at their exact length, into the array there for a key met twice; maps
	// with string keys filled from scratch values; IntOrString without its unmarshaler.
	f.Add([]byte(`{"metadata":{"name":"p","labels":{"a":"1","a":null,"b":"2"},"finalizers":["x","y","z"],"finalizers":["w"]},"spec":{"containers":[{"name":"a","image":"i","env":[{"name":"A","value":"1"},{"name":"B"}]},{"name":"b"}],"containers":[{"name":"c"}],"volumes":[],"tolerations":null},"status":{"conditions":[{"type":"A"},{"type":"B"},{"type":"C"},{"type":"D"},{"type":"E"}]}}`), uint8(3))
	f.Add([]byte(`{"metadata":{"name":"p","annotations":{}},"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"1","cpu":"2","memory":null},"requests":{}},"ports":[{"containerPort":80}],"livenessProbe":{"httpGet":{"port":"http"}},"readinessProbe":{"tcpSocket":{"port":8080}},"startupProbe":{"grpc":{"port":1},"httpGet":{"port":null}}}]}}`), uint8(3))
	f.Add([]byte(`{"metadata":{"name":"s"},"spec":{"ports":[{"port":80,"targetPort":80},{"port":83,"targetPort":-1},{"port":84,"targetPort":"http"},{"port":85,"targetPort":null},{"port":86,"targetPort":"h","targetPort":7}],"selector":{"app":"a"}}}`), uint8(5))
	for _, port := range []string{`80.0`, `1e2`, `2147483648`, `-2147483648`, `"h\u0074tp"`, `true`, `{}`, `-0`} {
		f.Add([]byte(`{"metadata":{"name":"s"},"spec":{"ports":[{"port":80,"targetPort":`+port+`}]}}`), uint8(5))
	}
	f.Add([]byte(`{"metadata":{"name":"d"},"spec":{"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":0,"maxSurge":null}},"selector":{"matchLabels":{"a":"b"},"matchExpressions":[{"key":"k","operator":"In","values":["1","2"]},{"key":"j","operator":"Exists","values":[]}]}}}`), uint8(8))
	f.Fuzz(func(t *testing.T, raw []byte, k uint8) {
		if firstByte(raw) != '{' || !json.Valid(raw) || !utf8.Valid(raw) {
			// value hands only objects the JSON decoder or the YAML converter produced, of
			// text the stream has checked is UTF-8 (json-iterator keeps a bad byte where the
			// deserializer puts U+FFFD, on main's path as on the plain one).
			return
		}
		if gvk, ok := kindOf(raw, kinds[int(k)%len(kinds)]); ok {
			sameDecode(t, raw, gvk)
		}
	})
}

// FuzzReadHead holds the scan of an object's apiVersion and kind to json.Unmarshal.
func FuzzReadHead(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`))
	f.Add([]byte(`{"KIND":"Pod","kind":"Node","apiVersion":null}`))
	f.Add([]byte(`{"spec":{"kind":"x"},"kind":"P\u006fd","items":[1,-2.5e3,true,"]}"]}`))
	f.Add([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","kind":"ReplicaSet","k\u0069nd":"Pod"}`))
	f.Add([]byte(`{"Kind":"Pod","apiversion":"v1","metadata":{"apiVersion":"x"},"kind":7}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		var want typeMeta
		errWant := json.Unmarshal(raw, &want)
		got, err := readHead(raw)
		if (err == nil) != (errWant == nil) || got != want {
			t.Fatalf("readHead = %+v, %v; json.Unmarshal = %+v, %v", got, err, want, errWant)
		}
		var head headScan
		if _, res := validValue(append(bytes.Clone(raw), ' '), &head); res == scanOK && head.ok && (errWant != nil || head.tm != want) {
			t.Fatalf("validValue's head = %+v; json.Unmarshal = %+v, %v", head.tm, want, errWant)
		}
	})
}

// FuzzValidValue holds the scan that splits list items to encoding/json: on valid JSON it
// finds the value's end; on anything else it never takes a value that json rejects.
func FuzzValidValue(f *testing.F) {
	f.Add([]byte(`{"a":[1,2,{"b":"c\"d"}],"e":-0.5E+3} `))
	f.Add([]byte(`[1,]`))
	f.Add([]byte(`"\ud800"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, res := validValue(b, nil)
		if res == scanOK && !json.Valid(b[:n]) {
			t.Fatalf("validValue took %q, which is not valid JSON", b[:n])
		}
		padded := append(bytes.Clone(b), ' ')
		if json.Valid(b) && firstByte(b) == b[0] {
			n, res := validValue(padded, nil)
			if res != scanOK || len(bytes.TrimSpace(padded[n:])) != 0 {
				t.Fatalf("validValue(%q) = %d, %d; it is valid JSON", padded, n, res)
			}
		}
	})
}

// TestSplitAgreesAtEveryCut cuts a pod list at many places and reads each cut whole and a byte
// at a time: the item split meets the end of its bytes at every point of the text, and hands
// over to the JSON decoder there; both reads must say the same, and never panic.
func TestSplitAgreesAtEveryCut(t *testing.T) {
	data := mustRead(t, filepath.Join(scenarioDir, "dev-web", "dump", "dev-web", "pods.json"))
	// Broken separators and values, which the split leaves to the decoder.
	edits := [][2]string{{"", ""}, {"},\n        {", "}\n        {"}, {"},\n        {", "},,\n        {"}, {"\"restartCount\": 0", "\"restartCount\": 0x"}}
	for _, e := range edits {
		text := data
		if e[0] != "" {
			if text = bytes.Replace(data, []byte(e[0]), []byte(e[1]), 1); bytes.Equal(text, data) {
				t.Fatalf("%q is not in the pod list", e[0])
			}
		}
		for cut := len(text); cut > 0; cut -= 97 {
			in := text[:cut]
			whole, errWhole := ReadBytes("p.json", in)
			bytewise, errBytes := ReadContext(t.Context(), Stdin, iotest.OneByteReader(bytes.NewReader(in)), Options{})
			if (errWhole == nil) != (errBytes == nil) {
				t.Fatalf("edit %q, cut at %d: whole: %v; a byte at a time: %v", e[1], cut, errWhole, errBytes)
			}
			if errWhole != nil {
				w := strings.TrimPrefix(errWhole.Error(), `read dump "p.json": `)
				b := strings.TrimPrefix(errBytes.Error(), "read dump from stdin: ")
				if w != b {
					t.Fatalf("edit %q, cut at %d: whole: %s\na byte at a time: %s", e[1], cut, w, b)
				}
				continue
			}
			if diff := differences(whole, bytewise); len(diff) > 0 {
				t.Fatalf("edit %q, cut at %d: a byte at a time reads differently in %v", e[1], cut, diff)
			}
		}
	}
}

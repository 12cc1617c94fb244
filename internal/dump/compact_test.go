package dump

import (
	"bytes"
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// FuzzAppendCompact: what appendCompact drops of valid JSON is white space between tokens,
// whatever the strings hold.
func FuzzAppendCompact(f *testing.F) {
	f.Add([]byte("{\n    \"a\": \"x  y\",\n    \"b\": [\n        1,\n        2\n    ]\n}\n"))
	f.Add([]byte("[\r\n\t\"        \"\r\n,\n\n\n  {}]"))
	f.Add([]byte(`"no line break"`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		got := appendCompact([]byte("prefix"), raw)
		if !bytes.HasPrefix(got, []byte("prefix")) {
			t.Fatal("dst not kept")
		}
		got = got[len("prefix"):]
		if bytes.IndexByte(got, '\n') >= 0 {
			t.Fatalf("a line break left in %q", got)
		}
		var want, have bytes.Buffer
		if err := json.Compact(&want, raw); err != nil {
			t.Fatal(err)
		}
		if err := json.Compact(&have, got); err != nil {
			t.Fatalf("compacted text is not JSON: %v\n%q", err, got)
		}
		if !bytes.Equal(want.Bytes(), have.Bytes()) {
			t.Fatalf("compacted %q to %q", raw, got)
		}
	})
}

// TestCompactKinds: the kinds whose values keep text (a Service's managedFields, a
// ControllerRevision's data) are decoded from their text as it is; pods and events, most of
// a dump, from it compacted.
func TestCompactKinds(t *testing.T) {
	for gvk, want := range map[schema.GroupVersionKind]bool{
		{Version: "v1", Kind: "Pod"}:   true,
		eventsGVK:                      true,
		{Version: "v1", Kind: "Event"}: true,
		{Group: "apps", Version: "v1", Kind: "ReplicaSet"}:         true,
		{Version: "v1", Kind: "Service"}:                           false,
		{Group: "apps", Version: "v1", Kind: "ControllerRevision"}: false,
	} {
		if got := compactKinds[gvk]; got != want {
			t.Errorf("compactKinds[%s] = %v, want %v", gvk, got, want)
		}
	}
}

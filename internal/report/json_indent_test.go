package report

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndentJSONIsJSONIndent holds indentJSON to json.Indent, at the depths of a report's
// workloads and a fleet's, on every JSON document the
// repository keeps (reports, dumps, lists as an API server writes them) and on the shapes
// that trip a hand-written indenter: empty objects and arrays, brackets, quotes and escapes
// inside strings.
func TestIndentJSONIsJSONIndent(t *testing.T) {
	docs := map[string][]byte{
		"empty containers":    []byte(`{"a":{},"b":[],"c":[{}],"d":[[]],"e":{"f":[]}}`),
		"brackets in strings": []byte(`{"msg":"[x] {y}: z, w","q":"say \"hi\", {ok}","b":"\\","u":"\u003cb\u003e\u2028"}`),
		"scalars":             []byte(`[1,-2.5e3,true,false,null,"",{"k":"v"}]`),
		"top-level string":    []byte(`"a,b:{c}"`),
		"trailing newline":    []byte("{\"a\":1}\n"),
	}
	var files []string
	for _, root := range []string{"testdata", "../../testdata"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".json") || strings.Contains(path, "json")) {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < 100 {
		t.Fatalf("found %d JSON files to compare on; the roots are stale", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, b); err != nil {
			continue // not JSON (a JSON-named YAML or a deliberately broken dump)
		}
		docs[f] = compact.Bytes()
	}
	for name, src := range docs {
		for _, depth := range []int{0, 2, 4} {
			var want bytes.Buffer
			if err := json.Indent(&want, src, strings.Repeat("  ", depth), "  "); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := indentJSON([]byte("kept"), src, depth); !bytes.Equal(got, append([]byte("kept"), want.Bytes()...)) {
				t.Errorf("%s at depth %d: indentJSON differs from json.Indent\n got %.300q\nwant %.300q", name, depth, got, want.Bytes())
			}
		}
	}
}

func FuzzIndentJSON(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"c\"]"}],"d":{}}`))
	f.Add([]byte(`[[],[[]],{"":""}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var compact bytes.Buffer
		if json.Compact(&compact, b) != nil {
			return
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := indentJSON(nil, compact.Bytes(), 0); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("indentJSON(%q) = %q, want %q", compact.Bytes(), got, want.Bytes())
		}
	})
}

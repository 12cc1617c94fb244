package boundedyaml

import (
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// bomb is a document whose n aliases each repeat an anchor of size bytes, from line 5 on.
func bomb(size, n int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\n")
	b.WriteString("data:\n  anchor: &a \"" + strings.Repeat("x", size) + "\"\n  list:\n")
	for range n {
		b.WriteString("  - *a\n")
	}
	return []byte(b.String())
}

func TestToJSONRefusesAliasesPastTheLimit(t *testing.T) {
	_, err := ToJSON(bomb(1<<20, 3000), 64<<20)
	var tl *TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("err = %v, want a TooLargeError", err)
	}
	// Line 8 holds the first alias; the 63rd alias of 1 MiB passes 64 MiB.
	if tl.Line < 8 || tl.Line > 8+70 || tl.Limit != 64<<20 {
		t.Errorf("error at line %d, limit %d; want a line of the aliases, 64 MiB", tl.Line, tl.Limit)
	}
	if !strings.Contains(err.Error(), "aliases expand the document past 64 MiB") {
		t.Errorf("err = %v", err)
	}
}

func TestToJSONConvertsAsYAMLToJSON(t *testing.T) {
	for _, in := range []string{
		"a: 1\nb: [x, y]\n",
		"base: &b {cpu: 1}\nmerged:\n  <<: *b\n  memory: 2\n",
		"url: http://example.com/*\nname: R&D\n",
		"a: [unclosed\n",
		string(bomb(10, 10)),
	} {
		got, err := ToJSON([]byte(in), 64<<20)
		want, werr := yaml.YAMLToJSON([]byte(in))
		if string(got) != string(want) || (err == nil) != (werr == nil) {
			t.Errorf("ToJSON(%q) = %s, %v; YAMLToJSON gives %s, %v", in, got, err, want, werr)
		}
	}
}

// TestToJSONCountsSharedAnchorsOnce: nested aliases (a billion laughs) are sized in linear time.
func TestToJSONCountsSharedAnchorsOnce(t *testing.T) {
	in := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for i := range 20 {
		name := string(rune('b' + i))
		in += name + ": &" + name + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = name
	}
	_, err := ToJSON([]byte(in), 64<<20)
	var tl *TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("err = %v, want a TooLargeError", err)
	}
}

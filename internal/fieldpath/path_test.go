package fieldpath

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestParseReadsWhatFieldPathWrites: every path field.Path writes (fields, indexes, keys with
// dots and slashes, a key straight after an index) parses into its steps and formats back
// to itself.
func TestParseReadsWhatFieldPathWrites(t *testing.T) {
	spec := field.NewPath("spec", "template", "spec")
	tests := []struct {
		path *field.Path
		want []Segment
	}{
		{field.NewPath("spec"), []Segment{{Name: "spec"}}},
		{
			spec.Child("containers").Index(0).Child("env").Index(2).Child("value"),
			[]Segment{{Name: "spec"}, {Name: "template"}, {Name: "spec"}, {Name: "containers", Sub: "0"}, {Name: "env", Sub: "2"}, {Name: "value"}},
		},
		{
			spec.Child("nodeSelector").Key("topology.kubernetes.io/zone"),
			[]Segment{{Name: "spec"}, {Name: "template"}, {Name: "spec"}, {Name: "nodeSelector", Sub: "topology.kubernetes.io/zone"}},
		},
		{
			spec.Child("containers").Index(1).Child("resources", "requests").Key("cpu"),
			[]Segment{{Name: "spec"}, {Name: "template"}, {Name: "spec"}, {Name: "containers", Sub: "1"}, {Name: "resources"}, {Name: "requests", Sub: "cpu"}},
		},
		{field.NewPath("data").Index(0).Key("a.b"), []Segment{{Name: "data", Sub: "0"}, {Sub: "a.b"}}},
		{
			field.NewPath("spec", "volumeClaimTemplates").Index(0).Child("spec", "storageClassName"),
			[]Segment{{Name: "spec"}, {Name: "volumeClaimTemplates", Sub: "0"}, {Name: "spec"}, {Name: "storageClassName"}},
		},
	}
	for _, tt := range tests {
		p := tt.path.String()
		got := Of(tt.path)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Parse(%q) = %+v, want %+v", p, got, tt.want)
		}
		if f := Format(got); f != p {
			t.Errorf("Format(Parse(%q)) = %q", p, f)
		}
	}
	if Of(nil) != nil {
		t.Error("Of(nil) is not nil")
	}
}

func TestParent(t *testing.T) {
	for _, tt := range []struct{ p, want string }{
		{"a.b[2].c", "a.b[2]"},
		{"a.b[2]", "a.b"},
		{"a.b", "a"},
		{"a", ""},
		{"", ""},
		{"spec.nodeSelector[topology.kubernetes.io/zone]", "spec.nodeSelector"},
		{"data[0][a.b]", "data[0]"},
	} {
		if got := Parent(tt.p); got != tt.want {
			t.Errorf("Parent(%q) = %q, want %q", tt.p, got, tt.want)
		}
	}
}

func TestSegmentIndex(t *testing.T) {
	for _, tt := range []struct {
		s  Segment
		i  int
		ok bool
	}{{Segment{Name: "env", Sub: "3"}, 3, true}, {Segment{Name: "m", Sub: "cpu"}, 0, false}, {Segment{Name: "x"}, 0, false}, {Segment{Sub: "-1"}, 0, false}} {
		if i, ok := tt.s.Index(); ok != tt.ok || ok && i != tt.i {
			t.Errorf("%+v.Index() = %d, %v; want %d, %v", tt.s, i, ok, tt.i, tt.ok)
		}
	}
}

// FuzzParseFormat: whatever the text, parsing never panics, and a path made of field.Path's
// own steps formats back to the same text.
func FuzzParseFormat(f *testing.F) {
	f.Add("spec.template.spec.containers[0].env[1].value", "k")
	f.Add("a", "topology.kubernetes.io/zone")
	f.Fuzz(func(t *testing.T, p, key string) {
		_ = Parse(p)
		if key == "" || strings.ContainsAny(key, "[]") {
			return
		}
		path := field.NewPath("spec").Child("nodeSelector").Key(key).Child("x").Index(3)
		if got := Format(Of(path)); got != path.String() {
			t.Errorf("Format(Of(%q)) = %q", path.String(), got)
		}
	})
}

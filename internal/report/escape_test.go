package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// hostileName holds a right-to-left override (U+202E), which makes a terminal draw what follows
// reversed, a zero-width space, a byte order mark, a tag character above the BMP, a C1 control,
// a line separator, U+FFFE, the character the YAML printer marks with, and DEL.
const hostileName = "api\u202Egnp.exe\u200B\uFEFF\U000E0041\u0085\u2028\uFFFEend\x7f"

func rawInvisible(s string) []rune {
	var found []rune
	for _, r := range s {
		if r >= utf8.RuneSelf && invisible(r) || r == 0x7f {
			found = append(found, r)
		}
	}
	return found
}

func hostileReport() *diagnose.Report {
	r := sampleReport()
	r.Workloads[0].Name = hostileName
	r.Workloads[0].Headline = "headline " + hostileName
	return r
}

func TestJSONEscapesInvisibleCharacters(t *testing.T) {
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			p, err := NewPrinter(format, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := p.PrintReport(&buf, hostileReport()); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if raw := rawInvisible(out); len(raw) > 0 {
				t.Errorf("%s output holds invisible characters raw: %U", format, raw)
			}
			if format == "json" && !strings.Contains(out, `api\u202egnp.exe\u200b\ufeff\udb40\udc41\u0085\u2028\ufffeend\u007f`) {
				t.Errorf("json output does not escape the name as \\u sequences:\n%s", out)
			}
			if format == "yaml" && !strings.Contains(out, `name: "api\u202Egnp.exe\u200B\uFEFF\U000E0041\u0085\u2028\uFFFEend\x7F"`) {
				t.Errorf("yaml output does not quote and escape the name:\n%s", out)
			}
			// The escapes are the same value: a consumer reads the name the cluster holds.
			var back struct {
				Workloads []struct {
					Name     string `json:"name"`
					Headline string `json:"headline"`
				} `json:"workloads"`
			}
			if format == "json" {
				err = json.Unmarshal(buf.Bytes(), &back)
			} else {
				err = yaml.Unmarshal(buf.Bytes(), &back)
			}
			if err != nil {
				t.Fatal(err)
			}
			if back.Workloads[0].Name != hostileName || back.Workloads[0].Headline != "headline "+hostileName {
				t.Errorf("decoded name %q headline %q, want %q", back.Workloads[0].Name, back.Workloads[0].Headline, hostileName)
			}
		})
	}
}

func TestExplainJSONAndYAMLEscapeInvisibleCharacters(t *testing.T) {
	d := hostileReport().Workloads[0]
	for _, format := range []string{"json", "yaml"} {
		var buf bytes.Buffer
		if err := PrintDiagnosis(&buf, &d, format); err != nil {
			t.Fatal(err)
		}
		if raw := rawInvisible(buf.String()); len(raw) > 0 {
			t.Errorf("explain -o %s holds invisible characters raw: %U", format, raw)
		}
	}
}

func TestPlainReportIsUnchangedByEscaping(t *testing.T) {
	in := []byte(`{"name":"caf\u00e9 \u001b ü"}`)
	if got := escapeJSON(in); !bytes.Equal(got, in) {
		t.Errorf("escapeJSON changed text without invisible characters: %s", got)
	}
}

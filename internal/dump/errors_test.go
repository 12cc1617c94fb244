package dump

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadErrors(t *testing.T) {
	podList := mustRead(t, filepath.Join(scenarioDir, "dev-web", "dump", "dev-web", "pods.json"))
	wrongType := bytes.Replace(mustRead(t, filepath.Join(scenarioDir, "dev-web", "dump", "dev-web", "deployments.json")),
		[]byte(`"replicas": 3,`), []byte(`"replicas": "three",`), 1)
	if bytes.Equal(wrongType, mustRead(t, filepath.Join(scenarioDir, "dev-web", "dump", "dev-web", "deployments.json"))) {
		t.Fatal("fixture: replicas not found in deployments.json")
	}
	tests := []struct {
		name  string
		files map[string][]byte
		path  string // relative to the temporary directory; "" for the directory itself
		// want are substrings of the error; the first is the file, which every error names.
		want   []string
		wantIs error
	}{
		{
			name:  "truncated JSON names the file, line and offset",
			files: map[string][]byte{"pods.json": podList[:2000]}, path: "pods.json",
			want:   []string{"pods.json", "line 50, column 63", "(offset 2000)", "truncated"},
			wantIs: io.ErrUnexpectedEOF,
		},
		{
			name:  "JSON syntax error",
			files: map[string][]byte{"p.json": []byte("{\n  \"kind\": \"Pod\",,\n}\n")}, path: "p.json",
			want: []string{"p.json", "line 2, column 17 (offset 18)", "invalid character ','"},
		},
		{
			name:  "wrong type in a list item names the item",
			files: map[string][]byte{"d/deployments.json": wrongType}, path: "",
			want: []string{"deployments.json", "line 8, column 9, items[0]", "apps/v1 Deployment", "replicas"},
		},
		{
			name:  "binary junk",
			files: map[string][]byte{"x.json": {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 'a'}}, path: "x.json",
			want: []string{"x.json", "line 1, column 4 (offset 3)", "binary data"},
		},
		{
			name:  "invalid UTF-8",
			files: map[string][]byte{"x.yaml": []byte("kind: Pod\napiVersion: \xff\xfe\n")}, path: "x.yaml",
			want: []string{"x.yaml", "line 2, column 13", "invalid UTF-8"},
		},
		{
			name:  "empty file",
			files: map[string][]byte{"empty.json": nil}, path: "empty.json",
			want: []string{"empty.json", "no Kubernetes objects found"},
		},
		{
			name:  "empty directory",
			files: map[string][]byte{"README.md": []byte("hi")}, path: "",
			want: []string{"no .json, .yaml, .yml, .txt or .log files found"},
		},
		{
			name:  "only kinds it does not read",
			files: map[string][]byte{"rc.json": []byte(`{"kind":"ReplicationControllerList","apiVersion":"v1","items":[{"metadata":{"name":"a","namespace":"b"}}]}`)}, path: "rc.json",
			want: []string{"rc.json", "no Kubernetes objects found (1 objects of kinds it does not read were skipped)"},
		},
		{
			name:  "only logs",
			files: map[string][]byte{"ns/p/logs.txt": []byte("==== START logs for container c of pod ns/p ====\n==== END logs for container c of pod ns/p ====\n")}, path: "",
			want: []string{"only container logs found"},
		},
		{
			name:  "an object without apiVersion and kind",
			files: map[string][]byte{"x.json": []byte(`{"metadata":{"name":"a"}}`)}, path: "x.json",
			want: []string{"x.json", "line 1, column 1", "not a Kubernetes object"},
		},
		{
			name:  "a scalar document",
			files: map[string][]byte{"x.json": []byte("{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p\",\"namespace\":\"n\"}}\n42\n")}, path: "x.json",
			want: []string{"x.json", "line 2, column 1", "expected a Kubernetes object, found a number"},
		},
		{
			name:  "YAML syntax error",
			files: map[string][]byte{"x.yaml": []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: b}\n---\napiVersion: v1\nkind: Pod\n metadata: [\n")}, path: "x.yaml",
			want: []string{"x.yaml", "YAML document at line 5"},
		},
		{
			name:  "kind of the wrong type",
			files: map[string][]byte{"x.json": []byte(`{"apiVersion":"v1","kind":5}`)}, path: "x.json",
			want: []string{"x.json", "apiVersion and kind", "cannot unmarshal number"},
		},
		{
			name:  "items that are not a list",
			files: map[string][]byte{"x.json": []byte(`{"apiVersion":"v1","kind":"PodList","items":{"a":1}}`)}, path: "x.json",
			want: []string{"x.json", "PodList: items is not a list"},
		},
		{
			name:  "a log block without its END line",
			files: map[string][]byte{"ns/p/logs.txt": []byte("==== START logs for container c of pod ns/p ====\nline\nline\n")}, path: "ns/p/logs.txt",
			want: []string{"logs.txt", "line 1", "no END line", "truncated"},
		},
		{
			name:  "a manifest without a namespace that is broken further on",
			files: map[string][]byte{"pod.yaml": []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: q\n")}, path: "pod.yaml",
			want: []string{"pod.yaml", "YAML document at line 6"},
		},
		{
			name:  "an object without a name",
			files: map[string][]byte{"pod.json": []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"n"}}`)}, path: "pod.json",
			want: []string{"pod.json", "Pod has no metadata.name"},
		},
		{
			name:  "a path that does not exist",
			files: map[string][]byte{}, path: "nope",
			want:   []string{"nope", "no such file"},
			wantIs: os.ErrNotExist,
		},
		{
			name:  "one bad file in a directory fails the whole read",
			files: map[string][]byte{"a/pods.json": podList, "b/pods.json": podList[:100]}, path: "",
			want: []string{"b/pods.json", "truncated"},
		},
		{
			name:  "lists nested too deep",
			files: map[string][]byte{"x.json": []byte(`[[[[[[{"apiVersion":"v1","kind":"Pod"}]]]]]]`)}, path: "x.json",
			want: []string{"x.json", "nested more than 4 deep"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, tt.files)
			s, err := Read(filepath.Join(dir, tt.path), nil)
			if err == nil {
				t.Fatalf("Read returned %+v and no error", countsOf(s))
			}
			if s != nil {
				t.Error("Read returned a snapshot with its error")
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error %q spans more than one line", msg)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %q does not wrap %v", msg, tt.wantIs)
			}
		})
	}
}

func TestReadUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	// A dangling link cannot be read whoever runs the test, root included.
	if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "pods.json")); err != nil {
		t.Fatal(err)
	}
	_, err := Read(dir, nil)
	if err == nil || !strings.Contains(err.Error(), "pods.json") || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Read = %v, want an error naming pods.json", err)
	}
}

func TestReadStdinErrors(t *testing.T) {
	if _, err := Read("-", nil); err == nil || !strings.Contains(err.Error(), "stdin") {
		t.Errorf("Read(-, nil) = %v, want an error about stdin", err)
	}
	_, err := Read("-", strings.NewReader(`{"apiVersion":"v1","kind":"Pod",`))
	if err == nil || !strings.Contains(err.Error(), "read dump from stdin: line 1, column 33 (offset 32)") {
		t.Errorf("Read(-, truncated) = %v", err)
	}
	if _, err := ReadBytes("paste", []byte("  \n\n")); err == nil || !strings.Contains(err.Error(), `"paste": no Kubernetes objects found`) {
		t.Errorf("ReadBytes(blank) = %v", err)
	}
}

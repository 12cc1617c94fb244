package dump

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReadLargeList reads one 2,000-pod List as kubectl get -o json writes it, and
// reports the bytes read per second.
func BenchmarkReadLargeList(b *testing.B) {
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(mustReadB(b, filepath.Join(scenarioDir, "dev-mixed", "dump", "dev-mixed", "pods.json")), &list); err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	buf.WriteString("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n")
	for i := 0; i < 2000; i++ {
		p := list.Items[i%len(list.Items)]
		p["apiVersion"], p["kind"] = "v1", "Pod"
		m := p["metadata"].(map[string]any)
		m["name"], m["uid"] = fmt.Sprintf("pod-%d", i), fmt.Sprintf("uid-%d", i)
		data, err := json.MarshalIndent(p, "        ", "    ")
		if err != nil {
			b.Fatal(err)
		}
		if i > 0 {
			buf.WriteString(",\n")
		}
		buf.WriteString("        ")
		buf.Write(data)
	}
	buf.WriteString("\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n")
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s, err := ReadBytes("pods.json", data)
		if err != nil || len(s.Pods) != 2000 {
			b.Fatalf("%v", err)
		}
	}
}

func mustReadB(b *testing.B, path string) []byte {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

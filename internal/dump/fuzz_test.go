package dump

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// FuzzRead feeds one in-memory file to the reader. It must never panic; it returns either an
// error naming the file and no snapshot, or a snapshot of well-formed objects that Write writes
// and Read reads back unchanged. The seed corpus is in testdata/fuzz/FuzzRead.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadBytes("fuzz", data)
		if err != nil {
			if s != nil {
				t.Fatal("ReadBytes returned a snapshot with its error")
			}
			if !strings.HasPrefix(err.Error(), `read dump "fuzz": `) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		checkSnapshot(t, s)
		dir := filepath.Join(t.TempDir(), "out")
		if err := Write(dir, s, false); err != nil {
			if !strings.HasPrefix(err.Error(), "write dump") {
				t.Fatalf("Write error: %v", err)
			}
			return
		}
		again, err := Read(dir, nil)
		if err != nil {
			t.Fatalf("Read of what Write wrote: %v", err)
		}
		if diff := differences(s, again); len(diff) > 0 {
			t.Fatalf("written dump reads back differently in %v", diff)
		}
	})
}

func checkSnapshot(t *testing.T, s *snapshot.Snapshot) {
	t.Helper()
	var objs []metav1.Object
	for _, o := range s.Deployments {
		objs = append(objs, o)
	}
	for _, o := range s.Pods {
		objs = append(objs, o)
	}
	for _, o := range s.Events {
		objs = append(objs, o)
	}
	for _, o := range s.Services {
		objs = append(objs, o)
	}
	for _, o := range s.ReplicaSets {
		objs = append(objs, o)
	}
	for _, o := range s.ResourceQuotas {
		objs = append(objs, o)
	}
	total := len(s.Nodes) + len(s.StatefulSets) + len(s.DaemonSets) + len(s.ControllerRevisions) +
		len(s.PersistentVolumeClaims) + len(s.EndpointSlices) + len(objs)
	if total == 0 {
		t.Fatal("a snapshot without objects was returned without an error")
	}
	for _, o := range objs {
		// A Service keeps its managedFields: their times date a change to its selector or ports.
		_, svc := o.(*corev1.Service)
		if o.GetName() == "" || o.GetNamespace() == "" || o.GetManagedFields() != nil && !svc {
			t.Fatalf("object %s/%s: empty name or namespace, or managedFields kept", o.GetNamespace(), o.GetName())
		}
	}
	if !slices.IsSorted(s.Namespaces) || len(slices.Compact(slices.Clone(s.Namespaces))) != len(s.Namespaces) {
		t.Fatalf("Namespaces %v are not sorted and unique", s.Namespaces)
	}
	if s.Source.Type != snapshot.SourceDump {
		t.Fatalf("Source = %+v", s.Source)
	}
}

// TestFuzzSeeds keeps the seed corpus honest: valid seeds read, broken ones fail.
func TestFuzzSeeds(t *testing.T) {
	broken := map[string]bool{
		"empty-json": true, "invalid-utf8-yaml": true, "junk-bin": true, "truncated-json": true,
		"wrong-type-json": true, "logs-txt": true, "truncated-items-json": true,
	}
	files, err := filepath.Glob("testdata/fuzz/FuzzRead/*")
	if err != nil || len(files) < 12 {
		t.Fatalf("seed corpus: %d files, %v", len(files), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			text := strings.TrimSpace(string(mustRead(t, f)))
			quoted, ok := strings.CutPrefix(text, "go test fuzz v1\n[]byte(")
			if !ok || !strings.HasSuffix(quoted, ")") {
				t.Fatalf("not a corpus file: %.40q", text)
			}
			data, err := strconv.Unquote(strings.TrimSuffix(quoted, ")"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = ReadBytes("seed", []byte(data))
			if broken[filepath.Base(f)] != (err != nil) {
				t.Errorf("ReadBytes error = %v; the seed is meant to be broken: %v", err, broken[filepath.Base(f)])
			}
		})
	}
}

// FuzzLogBlock feeds any content inside and after a log block to the stream's log parser,
// through chunk boundaries of any size: it never panics, keeps each line within maxLogLine,
// and reads the same lines whether the input arrives whole or a byte at a time.
func FuzzLogBlock(f *testing.F) {
	f.Add([]byte("a\nb\n"), []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n"}}`))
	f.Add([]byte("last line without newline"), []byte(""))
	f.Add([]byte("==== END logs for container c of pod n/p ==== more\n\r\n"), []byte("kind: Pod\n"))
	f.Fuzz(func(t *testing.T, content, after []byte) {
		data := append([]byte("==== START logs for container c of pod n/p ====\n"), content...)
		data = append(data, "\n==== END logs for container c of pod n/p ====\n"...)
		data = append(data, after...)
		whole, errWhole := ReadBytes("fuzz", data)
		bytewise, errBytes := ReadContext(t.Context(), Stdin, iotest.OneByteReader(bytes.NewReader(data)), Options{})
		if (errWhole == nil) != (errBytes == nil) {
			t.Fatalf("whole: %v; a byte at a time: %v", errWhole, errBytes)
		}
		if errWhole != nil {
			return
		}
		if diff := differences(whole, bytewise); len(diff) > 0 {
			t.Fatalf("a byte at a time reads differently in %v", diff)
		}
		for _, l := range whole.Logs {
			for _, line := range l.Lines {
				if len(line) > maxLogLine {
					t.Fatalf("line of %d bytes kept", len(line))
				}
			}
		}
	})
}

// FuzzEvent feeds any reason, message and counts to the event decoder: it never panics and
// keeps the message within maxMessage.
func FuzzEvent(f *testing.F) {
	f.Add("BackOff", "Back-off restarting failed container web", int64(5), "2026-11-24T10:00:00Z")
	f.Add("", strings.Repeat("x", 20000), int64(-1), "not a time")
	f.Fuzz(func(t *testing.T, reason, message string, count int64, at string) {
		ev := map[string]any{
			"apiVersion": "v1", "kind": "Event",
			"metadata":       map[string]any{"name": "e", "namespace": "n"},
			"involvedObject": map[string]any{"kind": "Pod", "name": "p", "namespace": "n"},
			"reason":         reason, "message": message, "count": count, "lastTimestamp": at,
		}
		data, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ReadBytes("fuzz", data)
		if err != nil {
			return
		}
		if len(s.Events) != 1 || len(s.Events[0].Message) > maxMessage {
			t.Fatalf("%d events, message %d bytes", len(s.Events), len(s.Events[0].Message))
		}
	})
}

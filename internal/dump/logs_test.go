package dump

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

func TestExtractLogs(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []snapshot.ContainerLog
	}{
		{
			name: "init and app containers of one pod, as cluster-info dump writes them",
			in: "==== START logs for container migrate of pod shop/web-7d9f-abcde ====\n" +
				"applied 3 migrations\n" +
				"==== END logs for container migrate of pod shop/web-7d9f-abcde ====\n" +
				"==== START logs for container web of pod shop/web-7d9f-abcde ====\n" +
				"listening on :8080\nGET /health 200\n" +
				"==== END logs for container web of pod shop/web-7d9f-abcde ====\n",
			want: []snapshot.ContainerLog{
				{Namespace: "shop", Pod: "web-7d9f-abcde", Container: "migrate", Lines: []string{"applied 3 migrations"}},
				{Namespace: "shop", Pod: "web-7d9f-abcde", Container: "web", Lines: []string{"listening on :8080", "GET /health 200"}},
			},
		},
		{
			name: "the kubelet's error instead of a log",
			in: "==== START logs for container payments-api of pod dev-payments/payments-api-6685d59959-75wrm ====\n" +
				"Request log error: container \"payments-api\" in pod \"payments-api-6685d59959-75wrm\" is waiting to start: trying and failing to pull image\n" +
				"==== END logs for container payments-api of pod dev-payments/payments-api-6685d59959-75wrm ====\n",
			want: []snapshot.ContainerLog{{
				Namespace: "dev-payments", Pod: "payments-api-6685d59959-75wrm", Container: "payments-api",
				Lines: []string{`Request log error: container "payments-api" in pod "payments-api-6685d59959-75wrm" is waiting to start: trying and failing to pull image`},
			}},
		},
		{
			name: "an empty block: an unscheduled pod",
			in:   "==== START logs for container search of pod dev-search/search-indexer-0 ====\n==== END logs for container search of pod dev-search/search-indexer-0 ====\n",
			want: []snapshot.ContainerLog{{Namespace: "dev-search", Pod: "search-indexer-0", Container: "search"}},
		},
		{
			name: "a last line without newline runs into the END marker; no newline at the end of the file",
			in:   "==== START logs for container c of pod n/p ====\nfirst\npartial==== END logs for container c of pod n/p ====",
			want: []snapshot.ContainerLog{{Namespace: "n", Pod: "p", Container: "c", Lines: []string{"first", "partial"}}},
		},
		{
			name: "marker-like text inside a log is log content",
			in: "==== START logs for container c of pod n/p ====\n" +
				"==== START logs for container d of pod n/p ====\n" +
				"echo '==== END logs for container c of pod n/p ====' > x\n" +
				"==== END logs for container c of pod n/p ====\n",
			want: []snapshot.ContainerLog{{Namespace: "n", Pod: "p", Container: "c", Lines: []string{
				"==== START logs for container d of pod n/p ====",
				"echo '==== END logs for container c of pod n/p ====' > x",
			}}},
		},
		{
			name: "previous instance, this package's own block",
			in: "==== START logs for container c of pod n/p ====\nnow\n==== END logs for container c of pod n/p ====\n" +
				"==== START logs for container c of pod n/p (previous) ====\nbefore\nOOM\n==== END logs for container c of pod n/p (previous) ====\n",
			want: []snapshot.ContainerLog{
				{Namespace: "n", Pod: "p", Container: "c", Lines: []string{"now"}},
				{Namespace: "n", Pod: "p", Container: "c", Previous: true, Lines: []string{"before", "OOM"}},
			},
		},
		{
			name: "CRLF line ends",
			in:   "==== START logs for container c of pod n/p ====\r\nline\r\n==== END logs for container c of pod n/p ====\r\n",
			want: []snapshot.ContainerLog{{Namespace: "n", Pod: "p", Container: "c", Lines: []string{"line\r"}}},
		},
		{
			name: "an empty line is a line",
			in:   "==== START logs for container c of pod n/p ====\n\n==== END logs for container c of pod n/p ====\n",
			want: []snapshot.ContainerLog{{Namespace: "n", Pod: "p", Container: "c", Lines: []string{""}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs, rest, err := extractLogs([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if len(logs) != len(tt.want) {
				t.Fatalf("got %d logs %+v, want %d", len(logs), logs, len(tt.want))
			}
			for i := range logs {
				g, w := logs[i], tt.want[i]
				if g.Namespace != w.Namespace || g.Pod != w.Pod || g.Container != w.Container || g.Previous != w.Previous || !slices.Equal(g.Lines, w.Lines) {
					t.Errorf("log %d = %+v, want %+v", i, g, w)
				}
			}
			// A block leaves its newlines, so what follows keeps its line numbers.
			if bytes.Count(rest, []byte("\n")) != strings.Count(tt.in, "\n") || len(bytes.TrimSpace(rest)) != 0 {
				t.Errorf("text left %q does not keep the lines of the input", rest)
			}
		})
	}
}

// extractLogs runs the stream over data twice, whole and a byte at a time, and returns the log
// blocks and the text left for the parsers; both runs must agree.
func extractLogs(data []byte) ([]snapshot.ContainerLog, []byte, error) {
	var logs [][]snapshot.ContainerLog
	var rests [][]byte
	for _, src := range []io.Reader{bytes.NewReader(data), iotest.OneByteReader(bytes.NewReader(data))} {
		s := newStream(context.Background(), src, "test", Options{}.budget())
		rest, err := io.ReadAll(s)
		if err != nil {
			return nil, nil, err
		}
		logs, rests = append(logs, s.logs), append(rests, rest)
	}
	if !bytes.Equal(rests[0], rests[1]) || !reflect.DeepEqual(logs[0], logs[1]) {
		return nil, nil, fmt.Errorf("a byte at a time reads %q and %+v, whole %q and %+v", rests[1], logs[1], rests[0], logs[0])
	}
	return logs[0], rests[0], nil
}

func TestExtractLogsKeepsTheRest(t *testing.T) {
	in := "{\"kind\": \"PodList\"}\n==== START logs for container c of pod n/p ====\nx\n==== END logs for container c of pod n/p ====\n{\"a\": 1}\n"
	_, rest, err := extractLogs([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(rest, []byte("{\"kind\": \"PodList\"}\n")) || !bytes.HasSuffix(rest, []byte("\n{\"a\": 1}\n")) {
		t.Errorf("text around the block changed: %q", rest)
	}
	if !strings.Contains(in, "==== START") {
		t.Error("extractLogs changed its input")
	}
}

func TestWriteLogReadsBack(t *testing.T) {
	logs := []snapshot.ContainerLog{
		{Namespace: "n", Pod: "p", Container: "c", Lines: []string{"a", "", "b"}},
		{Namespace: "n", Pod: "p", Container: "c", Previous: true, Lines: []string{"panic: boom"}},
		{Namespace: "n", Pod: "p", Container: "init"},
		{Namespace: "n", Pod: "p", Container: "d", Lines: []string{""}},
	}
	var b bytes.Buffer
	for i := range logs {
		if err := writeLog(&b, &logs[i]); err != nil {
			t.Fatal(err)
		}
	}
	got, _, err := extractLogs(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(logs) {
		t.Fatalf("read back %d logs from %q", len(got), b.String())
	}
	for i := range logs {
		if got[i].Container != logs[i].Container || got[i].Previous != logs[i].Previous || !slices.Equal(got[i].Lines, logs[i].Lines) {
			t.Errorf("log %d read back as %+v, want %+v", i, got[i], logs[i])
		}
	}
}

// TestReadKeepsTheTailOfLongLogs reads logs longer than the tail kept of each container: one
// bounded by its bytes (40,000 lines of about 100 bytes), one by its lines (30,000 short
// ones), beside one inside both bounds, which is kept whole.
func TestReadKeepsTheTailOfLongLogs(t *testing.T) {
	long := func(container string, n int, line string) (string, []string) {
		var b strings.Builder
		var lines []string
		fmt.Fprintf(&b, "==== START logs for container %s of pod n/p ====\n", container)
		for i := range n {
			l := fmt.Sprintf(line, i)
			lines = append(lines, l)
			b.WriteString(l + "\n")
		}
		fmt.Fprintf(&b, "==== END logs for container %s of pod n/p ====\n", container)
		return b.String(), lines
	}
	wide, wideLines := long("wide", 40_000, `{"level":"info","ts":"2026-11-24T14:00:00.000Z","msg":"served request","path":"/api/v1/orders/%08d","user_agent":"Mozilla/5.0 (X11; Linux x86_64) kube-probe/1.37","duration_ms":12}`)
	many, manyLines := long("many", 30_000, "tick %d")
	short, shortLines := long("short", 1_300, "short line %d")
	dir := writeTree(t, map[string][]byte{
		"n/pods.json":  []byte(`{"apiVersion":"v1","kind":"PodList","items":[` + strings.TrimSuffix(onePod, ",") + `]}`),
		"n/p/logs.txt": []byte(wide + many + short),
	})

	s, err := Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, l := range s.Logs {
		got[l.Container] = l.Lines
	}
	bytesOf := func(lines []string) int {
		n := 0
		for _, l := range lines {
			n += len(l)
		}
		return n
	}
	w := got["wide"]
	if n := bytesOf(w); n > maxLogTailBytes || n < maxLogTailBytes-200 {
		t.Errorf("wide log kept as %d lines, %d bytes; want its last %d bytes", len(w), n, maxLogTailBytes)
	}
	if !slices.Equal(w, wideLines[len(wideLines)-len(w):]) {
		t.Errorf("wide log: the lines kept are not its last ones")
	}
	if m := got["many"]; !slices.Equal(m, manyLines[len(manyLines)-maxLogTailLines:]) {
		t.Errorf("many log kept as %d lines from %q; want its last %d", len(m), m[0], maxLogTailLines)
	}
	if !slices.Equal(got["short"], shortLines) {
		t.Errorf("short log kept as %d lines, want all %d", len(got["short"]), len(shortLines))
	}
	var notes []string
	for _, v := range s.Visibility {
		if v.Kind == "pods/log" {
			notes = append(notes, v.Reason)
		}
	}
	want := fmt.Sprintf("2 container logs are longer than the tail read of each container (at most 1 MiB and 10000 lines): %d of their first lines were not read (%d of container wide of pod n/p)",
		len(wideLines)-len(w)+len(manyLines)-maxLogTailLines, len(wideLines)-len(w))
	if len(notes) != 1 || notes[0] != want {
		t.Errorf("log notes %q, want [%q]", notes, want)
	}
}

// FuzzNextStartLine holds the search for START lines to the plain search for a newline and
// the marker.
func FuzzNextStartLine(f *testing.F) {
	for _, s := range []string{
		"", "\n", startMarker, "\n" + startMarker, "x" + startMarker + "\n" + startMarker,
		`{"a": "==== START"}` + "\n" + startMarker + "c of pod n/p ====\n",
		"==\n===" + startMarker + "\n\n" + startMarker, strings.Repeat("\n=", 40) + "\n" + startMarker,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := nextStartLine(data), bytes.Index(data, nlStartMarker); got != want {
			t.Errorf("nextStartLine(%q) = %d, want %d", data, got, want)
		}
	})
}

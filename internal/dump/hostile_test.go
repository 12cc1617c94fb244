package dump

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// generated is an input made on the fly, so a test can feed hundreds of megabytes without
// holding them: head, then unit repeated until n bytes of it were read, then tail.
func generated(head, unit, tail string, n int64) io.Reader {
	return io.MultiReader(strings.NewReader(head), io.LimitReader(&cycle{unit: []byte(unit)}, n), strings.NewReader(tail))
}

type cycle struct {
	unit []byte
	off  int
}

func (c *cycle) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = c.unit[c.off]
		c.off = (c.off + 1) % len(c.unit)
	}
	return len(p), nil
}

// heapGrowth runs f and returns how far the heap grew past what it held before, sampled while
// f runs: the peak, not what is left once the garbage is collected.
func heapGrowth(t *testing.T, f func()) uint64 {
	t.Helper()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var m runtime.MemStats
		var top uint64
		for {
			runtime.ReadMemStats(&m)
			top = max(top, m.HeapAlloc)
			select {
			case <-done:
				peak <- top
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	f()
	close(done)
	top := <-peak
	if top < before.HeapAlloc {
		return 0
	}
	return top - before.HeapAlloc
}

const onePod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n","uid":"u1","resourceVersion":"1"},"spec":{"containers":[{"name":"c","image":"busybox"}]}},`

func TestReadMemoryFollowsObjectsKept(t *testing.T) {
	// 32 MB of one pod repeated: the read keeps one object, so the heap must not grow with
	// the bytes read (before streaming it held the whole input, twice).
	const size = 32 << 20
	var err error
	grew := heapGrowth(t, func() {
		src := generated(`{"apiVersion":"v1","kind":"List","items":[`, onePod, strings.TrimSuffix(onePod, ",")+"]}", size-size%int64(len(onePod)))
		_, err = Read("-", src)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("heap grew %d KiB reading %d MiB", grew>>10, size>>20)
	if grew > 16<<20 {
		t.Errorf("heap grew %d MiB reading %d MiB that hold one object", grew>>20, size>>20)
	}
}

func TestReadLimits(t *testing.T) {
	big := strings.Repeat("x", 2<<20)
	list := `{"apiVersion":"v1","kind":"List","items":[` + strings.TrimSuffix(onePod, ",") + `,
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"big","namespace":"n","annotations":{"a":"` + big + `"}}}]}`
	dir := t.TempDir()
	path := filepath.Join(dir, "pods.json")
	if err := os.WriteFile(path, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	offset := strings.Index(list, "\n") + 1
	_, err := ReadContext(t.Context(), path, nil, Options{MaxObjectSize: 1 << 20})
	want := fmt.Sprintf("object at %s:%d is larger than 1 MiB; --max-object-size raises the limit", path, offset)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Read with a 2 MiB item = %v, want %q", err, want)
	}
	// The list is larger than the limit, its items are not: a limit applies to one object.
	s, err := ReadContext(t.Context(), path, nil, Options{MaxObjectSize: 3 << 20})
	if err != nil || len(s.Pods) != 2 {
		t.Errorf("Read with a 3 MiB limit = %v pods, %v", countsOf(s), err)
	}
	_, err = ReadContext(t.Context(), path, nil, Options{MaxDumpSize: 1 << 20})
	if err == nil || !strings.Contains(err.Error(), "the dump is larger than 1 MiB") || !strings.Contains(err.Error(), "--max-dump-size") {
		t.Errorf("Read past the total limit = %v", err)
	}
	// A YAML document without an end.
	_, err = ReadContext(t.Context(), Stdin, generated("kind: Pod\nmetadata:\n  annotations:\n", "    a: b\n", "", 3<<20), Options{MaxObjectSize: 1 << 20})
	if err == nil || !strings.Contains(err.Error(), "object at stdin:0 is larger than 1 MiB") {
		t.Errorf("Read of an endless YAML document = %v", err)
	}
}

func TestReadCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := ReadContext(ctx, Stdin, generated(`{"apiVersion":"v1","kind":"List","items":[`, onePod, "", 1<<40), Options{})
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("ReadContext = %v, want context canceled", err)
	}
	t.Logf("stopped %s after the cancel", time.Since(start)-50*time.Millisecond)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("ReadContext ran %s", d)
	}
}

func TestReadHugeLogLine(t *testing.T) {
	// A 100 MB single log line, then the END marker on the same line, as kubectl writes a log
	// whose last line has no newline.
	head := "==== START logs for container c of pod n/p ====\nfirst line\n"
	tail := "==== END logs for container c of pod n/p ====\n" + strings.TrimSuffix(onePod, ",") + "\n"
	var err error
	var lines []string
	grew := heapGrowth(t, func() {
		s, e := ReadContext(t.Context(), Stdin, generated(head, "0123456789", tail, 100<<20), Options{})
		err = e
		if e == nil && len(s.Logs) == 1 {
			lines = s.Logs[0].Lines
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || lines[0] != "first line" {
		t.Fatalf("lines = %d, want first line and the long one", len(lines))
	}
	long := lines[1]
	if len(long) > maxLogLine || !strings.HasPrefix(long, "0123456789") || !strings.HasSuffix(long, "more bytes of this line]") {
		t.Errorf("long line: %d bytes, ends %q", len(long), long[max(0, len(long)-60):])
	}
	t.Logf("heap grew %d KiB; line kept as %d bytes ending %q", grew>>10, len(long), long[len(long)-50:])
	if grew > 16<<20 {
		t.Errorf("heap grew %d MiB reading a 100 MB line", grew>>20)
	}
}

func TestReadHugeEventMessage(t *testing.T) {
	msg := strings.Repeat("é", 512<<10) // 1 MiB, two bytes a rune
	ev := `{"apiVersion":"v1","kind":"Event","metadata":{"name":"e","namespace":"n"},"involvedObject":{"kind":"Pod","name":"p","namespace":"n"},"reason":"Failed","message":"` + msg + `"}`
	s, err := ReadBytes("events.json", []byte(ev))
	if err != nil {
		t.Fatal(err)
	}
	got := s.Events[0].Message
	if len(got) > maxMessage || !strings.HasPrefix(got, "éé") || !strings.Contains(got, "[kubectl-diagnose cut ") || !utf8Valid(got) {
		t.Errorf("message kept as %d bytes ending %q", len(got), got[max(0, len(got)-50):])
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestReadManyEventsIsLinear(t *testing.T) {
	// 50,000 events on one pod, then 100,000: the second read may take about twice as long,
	// not four times.
	read := func(n int) time.Duration {
		var b strings.Builder
		b.WriteString(`{"apiVersion":"v1","kind":"List","items":[` + strings.TrimSuffix(onePod, ","))
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, `,{"apiVersion":"v1","kind":"Event","metadata":{"name":"p.%x","namespace":"n"},"involvedObject":{"kind":"Pod","name":"p","namespace":"n"},"reason":"BackOff","message":"Back-off restarting failed container c","count":%d}`, i, i)
		}
		b.WriteString("]}")
		data := []byte(b.String())
		// The fastest of three reads: a busy machine stretches single reads unevenly, and
		// quadratic work shows in every one of them.
		var best time.Duration
		for range 3 {
			start := time.Now()
			s, err := ReadBytes("events.json", data)
			if err != nil || len(s.Events) != n {
				t.Fatalf("read %d events: %v", n, err)
			}
			if d := time.Since(start); best == 0 || d < best {
				best = d
			}
		}
		return best
	}
	a, b := read(50_000), read(100_000)
	t.Logf("50,000 events in %s, 100,000 in %s", a, b)
	if b > 4*a {
		t.Errorf("twice the events took %.1f times as long", float64(b)/float64(a))
	}
}

// TestReadErrorAfterLogBlock places a JSON error after a log block by the file's own line and
// offset, though the block was taken out before the parser saw the text.
func TestReadErrorAfterLogBlock(t *testing.T) {
	block := "==== START logs for container c of pod n/p ====\nline one\nline two\n==== END logs for container c of pod n/p ====\n"
	obj := `{"apiVersion":"v1",,}`
	_, err := ReadBytes("dump.txt", []byte(block+obj))
	want := fmt.Sprintf("line 5, column 20 (offset %d)", len(block)+strings.Index(obj, ",,")+1)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error = %v, want %q", err, want)
	}
}

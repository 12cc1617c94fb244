package frametrace

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/tui"
)

func TestParseAndSummarize(t *testing.T) {
	var b strings.Builder
	b.WriteString(tui.FrameTraceHeader + "\n")
	// Ten keys drawn 1..10 ms after they arrived, one that changed nothing, one never drawn.
	for i := 1; i <= 10; i++ {
		at := int64(i) * 100e6
		b.WriteString(strings.Join([]string{itoa(int64(i)), `"j"`, itoa(at), itoa(at + 1e5), itoa(at + 2e5), itoa(at + 3e5), itoa(at + int64(i)*1e6)}, "\t") + "\n")
	}
	b.WriteString("11\t\"G\"\t1900000000\t1900000100\t1900000200\t=\t=\n")
	b.WriteString("12\t\"q\"\t2000000000\t2000000100\t-\t-\t-\n")
	keys, err := Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 12 || keys[11].Drawn || keys[11].Unchanged || !keys[10].Unchanged || keys[10].Drawn || !keys[9].Drawn {
		t.Fatalf("parsed %+v", keys)
	}
	s := Summarize(keys, Key.Frame)
	want := Summary{N: 10, P50: 5 * time.Millisecond, P90: 9 * time.Millisecond, P99: 10 * time.Millisecond, Max: 10 * time.Millisecond}
	if s != want {
		t.Fatalf("summary %v, want %v", s, want)
	}
}

func TestParseRejects(t *testing.T) {
	h := tui.FrameTraceHeader + "\n"
	for name, trace := range map[string]string{
		"no header":          "1\t\"j\"\t1\t2\t3\t4\t5\n",
		"write before view":  h + "1\t\"j\"\t10\t20\t30\t25\t35\n",
		"write ends early":   h + "1\t\"j\"\t10\t20\t30\t35\t34\n",
		"a key missing":      h + "1\t\"j\"\t1\t2\t3\t4\t5\n3\t\"j\"\t5\t6\t7\t8\t9\n",
		"unquoted key":       h + "1\tj\t1\t2\t3\t4\t5\n",
		"six fields":         h + "1\t\"j\"\t1\t2\t3\t4\n",
		"drawn unviewed":     h + "1\t\"j\"\t1\t2\t-\t3\t4\n",
		"half a write":       h + "1\t\"j\"\t1\t2\t3\t-\t4\n",
		"unchanged, written": h + "1\t\"j\"\t1\t2\t3\t=\t4\n",
	} {
		if _, err := Parse(strings.NewReader(trace)); err == nil {
			t.Errorf("%s: parsed without an error", name)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

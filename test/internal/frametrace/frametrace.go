// Package frametrace reads the console's frame trace (tui.FrameTraceEnv) and summarises its
// key-to-frame latencies. It only reads a file the console wrote; it times nothing itself.
package frametrace

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/tui"
)

// Key is one key of the trace: when it arrived in Update, when Update returned, when the view
// showing it was rendered and when the frame's write to the terminal began and ended (it
// begins at the renderer's tick and ends once the terminal took it), all since the console
// started. Drawn is false for a key no frame followed; Unchanged is true for a key whose view
// was the frame already on screen, which the renderer does not write again.
type Key struct {
	Seq                                           int
	Key                                           string
	Arrived, Updated, Viewed, WriteBegan, Written time.Duration
	Drawn, Unchanged                              bool
}

// Frame is the key's latency from its arrival to the end of its frame's write.
func (k Key) Frame() time.Duration { return k.Written - k.Arrived }

// Parse reads a trace. It fails on anything but the header, comment lines and well-formed key
// lines whose times run arrival ≤ update ≤ view ≤ write, numbered 1, 2, 3…
func Parse(r io.Reader) ([]Key, error) {
	sc := bufio.NewScanner(r)
	if !sc.Scan() || sc.Text() != tui.FrameTraceHeader {
		return nil, fmt.Errorf("frame trace: first line is not %q", tui.FrameTraceHeader)
	}
	var keys []Key
	for n := 2; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		k, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("frame trace line %d: %w", n, err)
		}
		if k.Seq != len(keys)+1 {
			return nil, fmt.Errorf("frame trace line %d: key %d, want %d", n, k.Seq, len(keys)+1)
		}
		keys = append(keys, k)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("frame trace: %w", err)
	}
	return keys, nil
}

func parseLine(line string) (Key, error) {
	f := strings.Split(line, "\t")
	if len(f) != 7 {
		return Key{}, fmt.Errorf("%d fields, want 7: %q", len(f), line)
	}
	var k Key
	var err error
	if k.Seq, err = strconv.Atoi(f[0]); err != nil {
		return Key{}, fmt.Errorf("seq: %w", err)
	}
	if k.Key, err = strconv.Unquote(f[1]); err != nil {
		return Key{}, fmt.Errorf("key %s: %w", f[1], err)
	}
	times := []*time.Duration{&k.Arrived, &k.Updated, &k.Viewed, &k.WriteBegan, &k.Written}
	for i, p := range times {
		s := f[2+i]
		if (s == "-" && i >= 2) || (s == "=" && i >= 3) {
			continue
		}
		ns, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Key{}, fmt.Errorf("field %d: %w", 3+i, err)
		}
		*p = time.Duration(ns)
	}
	if (f[4] == "-" && f[6] != "-") || (f[5] == "-") != (f[6] == "-") || (f[5] == "=") != (f[6] == "=") {
		return Key{}, fmt.Errorf("key %d: view and write times do not agree: %q", k.Seq, line)
	}
	k.Unchanged = f[6] == "="
	k.Drawn = f[6] != "-" && !k.Unchanged
	if k.Updated < k.Arrived || (f[4] != "-" && k.Viewed < k.Updated) || (k.Drawn && (k.WriteBegan < k.Viewed || k.Written < k.WriteBegan)) {
		return Key{}, fmt.Errorf("key %d: times out of order: %q", k.Seq, line)
	}
	return k, nil
}

// Summary is the distribution of one latency over the drawn keys.
type Summary struct {
	N                  int
	P50, P90, P99, Max time.Duration
}

func (s Summary) String() string {
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) }
	return fmt.Sprintf("n=%d p50=%s p90=%s p99=%s max=%s ms", s.N, ms(s.P50), ms(s.P90), ms(s.P99), ms(s.Max))
}

// Summarize gives the distribution of of(k) over the keys that were drawn, by nearest rank.
func Summarize(keys []Key, of func(Key) time.Duration) Summary {
	var ds []time.Duration
	for _, k := range keys {
		if k.Drawn {
			ds = append(ds, of(k))
		}
	}
	if len(ds) == 0 {
		return Summary{}
	}
	slices.Sort(ds)
	rank := func(p float64) time.Duration {
		i := int(float64(len(ds))*p+0.999999) - 1
		return ds[max(0, min(i, len(ds)-1))]
	}
	return Summary{N: len(ds), P50: rank(0.50), P90: rank(0.90), P99: rank(0.99), Max: ds[len(ds)-1]}
}

package metamorph

import (
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Shift returns a copy of s in which every time is d later: object and event times, times
// written in annotations, the times log lines carry in any of the formats the dumps hold, the
// metric series and the reference time. A whole number of days keeps daily cron schedules
// true to their runs.
func Shift(s *snapshot.Snapshot, d time.Duration) *snapshot.Snapshot {
	c := Clone(s)
	move := func(t time.Time) time.Time { return t.Add(d) }
	mapTimes(c, move)
	c.ReferenceTime = c.ReferenceTime.Add(d)
	return c
}

// mapTimes moves every time of s but the reference time with f, in place.
func mapTimes(s *snapshot.Snapshot, f func(time.Time) time.Time) {
	s.Each(func(o runtime.Object) { mapObjectTimes(o, f) })
	for i := range s.Logs {
		for j, line := range s.Logs[i].Lines {
			s.Logs[i].Lines[j] = mapLineTimes(line, f)
		}
	}
	mapMetricTimes(s, f)
}

func mapMetricTimes(s *snapshot.Snapshot, f func(time.Time) time.Time) {
	if s.Metrics != nil {
		for i := range s.Metrics.Series {
			m := &s.Metrics.Series[i]
			m.Start, m.End = f(m.Start), f(m.End)
			for j := range m.Samples {
				m.Samples[j].Time = f(m.Samples[j].Time)
			}
		}
	}
}

// mapObjectTimes moves every time.Time (and so metav1.Time and MicroTime) field of o, and
// every annotation whose value is an RFC 3339 time (kubectl's restartedAt, the CronJob
// controller's scheduled timestamp).
func mapObjectTimes(o runtime.Object, f func(time.Time) time.Time) {
	walkTimes(reflect.ValueOf(o), f)
	m, ok := o.(metav1.Object)
	if !ok {
		return
	}
	ann := m.GetAnnotations()
	for k, v := range ann {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			ann[k] = f(t).Format(time.RFC3339)
		}
	}
}

var timeType = reflect.TypeFor[time.Time]()

func walkTimes(v reflect.Value, f func(time.Time) time.Time) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			walkTimes(v.Elem(), f)
		}
	case reflect.Struct:
		if v.Type() == timeType {
			if t := v.Interface().(time.Time); !t.IsZero() && v.CanSet() {
				v.Set(reflect.ValueOf(f(t)))
			}
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walkTimes(v.Field(i), f)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkTimes(v.Index(i), f)
		}
	default:
		// Maps hold no times in the Kubernetes types (annotations are handled by name), and
		// interfaces none that a snapshot keeps.
	}
}

// The times a log line carries: an RFC 3339-like stamp with a date of '-' or '/' (with T or a
// space, an optional '.' or ',' fraction and an optional zone), Apache's common log format,
// and an epoch number under a JSON time key (pino's milliseconds, zap's seconds). A scan finds
// where one may start and an anchored pattern reads it: a dump's tails are tens of thousands
// of lines, each read by several variants.
var (
	stampAt = regexp.MustCompile(`^\d{4}[-/]\d{2}[-/]\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?`)
	clfAt   = regexp.MustCompile(`^\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}`)
	epochAt = regexp.MustCompile(`^"(?:ts|time|timestamp)":(\d{10}(?:\.\d+)?|\d{13})\b`)
)

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// timeAt returns the time written at line[i:] (start and end of its text, and how to rewrite
// it), or ok false.
func timeAt(line string, i int) (start, end int, rewrite func(string, func(time.Time) time.Time) string, ok bool) {
	rest := line[i:]
	if i > 0 && isDigit(line[i-1]) {
		return 0, 0, nil, false
	}
	switch {
	case len(rest) >= 19 && isDigit(rest[0]) && (rest[4] == '-' || rest[4] == '/'):
		if m := stampAt.FindString(rest[:min(len(rest), 40)]); m != "" {
			return i, i + len(m), mapStamp, true
		}
	case len(rest) >= 26 && isDigit(rest[0]) && rest[2] == '/':
		if m := clfAt.FindString(rest[:26]); m != "" {
			return i, i + len(m), func(s string, f func(time.Time) time.Time) string {
				return mapLayout(s, "02/Jan/2006:15:04:05 -0700", f)
			}, true
		}
	case rest[0] == '"' && (strings.HasPrefix(rest, `"ts":`) || strings.HasPrefix(rest, `"time":`) || strings.HasPrefix(rest, `"timestamp":`)):
		if m := epochAt.FindStringSubmatchIndex(rest[:min(len(rest), 40)]); m != nil {
			return i + m[2], i + m[3], mapEpoch, true
		}
	}
	return 0, 0, nil, false
}

// mapLineTimes rewrites every time in line with f, each in the form it was written in.
func mapLineTimes(line string, f func(time.Time) time.Time) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(line); i++ {
		if c := line[i]; c != '"' && !isDigit(c) {
			continue
		}
		start, end, rewrite, ok := timeAt(line, i)
		if !ok {
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(line) + 8)
		}
		b.WriteString(line[last:start])
		b.WriteString(rewrite(line[start:end], f))
		last, i = end, end-1
	}
	if last == 0 {
		return line
	}
	b.WriteString(line[last:])
	return b.String()
}

// stampLayout is the Go layout of an RFC 3339-like stamp as it is written.
func stampLayout(s string) string {
	var b strings.Builder
	if s[4] == '/' {
		b.WriteString("2006/01/02")
	} else {
		b.WriteString("2006-01-02")
	}
	b.WriteByte(s[10])
	b.WriteString("15:04:05")
	rest := s[19:]
	if rest != "" && (rest[0] == '.' || rest[0] == ',') {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		b.WriteByte(rest[0])
		b.WriteString(strings.Repeat("0", n-1))
		rest = rest[n:]
	}
	switch {
	case rest == "Z":
		b.WriteString("Z07:00")
	case len(rest) == 6:
		b.WriteString("-07:00")
	case len(rest) == 5:
		b.WriteString("-0700")
	}
	return b.String()
}

// parseStamp reads an RFC 3339-like stamp as it is written; one without a zone is UTC.
func parseStamp(s string) (time.Time, bool) {
	t, err := time.Parse(stampLayout(s), s)
	return t, err == nil
}

func mapStamp(s string, f func(time.Time) time.Time) string {
	return mapLayout(s, stampLayout(s), f)
}

func mapLayout(s, layout string, f func(time.Time) time.Time) string {
	t, err := time.Parse(layout, s)
	if err != nil {
		return s
	}
	return f(t).In(t.Location()).Format(layout)
}

func mapEpoch(s string, f func(time.Time) time.Time) string {
	if len(s) == 13 && !strings.Contains(s, ".") {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return s
		}
		return strconv.FormatInt(f(time.UnixMilli(ms)).UnixMilli(), 10)
	}
	sec, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	decimals := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		decimals = len(s) - i - 1
	}
	t := f(time.Unix(0, int64(sec*1e9)))
	return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', decimals, 64)
}

// epochTime reads an epoch number as mapEpoch does.
func epochTime(s string) (time.Time, bool) {
	if len(s) == 13 && !strings.Contains(s, ".") {
		ms, err := strconv.ParseInt(s, 10, 64)
		return time.UnixMilli(ms).UTC(), err == nil
	}
	sec, err := strconv.ParseFloat(s, 64)
	return time.Unix(0, int64(sec*1e9)).UTC(), err == nil
}

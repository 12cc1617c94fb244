package facts

import (
	"regexp"
	"strings"
	"time"
)

var reLeadingTime = regexp.MustCompile(`^\[?(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)`)

// lineTime reads the time a log line carries itself: a JSON ts/time/timestamp field, a
// logfmt ts= or time= pair, or a leading RFC 3339 stamp (the one kubectl logs --timestamps
// writes). Lines without a zone are read as UTC.
func lineTime(line string) (time.Time, bool) {
	var s string
	if strings.HasPrefix(line, "{") {
		s = jsonTimeField(line)
		if t, ok := epochTime(jsonEpochField(line)); s == "" && ok {
			return t, true
		}
	} else if strings.Contains(line, "=") {
		s = logfmtTimeField(line)
	}
	// The leading stamp starts with a digit, or '[' and a digit: most lines are decided here.
	if s == "" && (len(line) > 0 && isDigit(line[0]) || len(line) > 1 && line[0] == '[' && isDigit(line[1])) {
		if m := reLeadingTime.FindStringSubmatch(line); m != nil {
			s = m[1]
		}
	}
	if s == "" {
		return time.Time{}, false
	}
	s = strings.Replace(strings.Replace(s, ",", ".", 1), " ", "T", 1)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05.999999999Z0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// LineTime is the time a log line carries itself, and whether it carries one.
func LineTime(line string) (time.Time, bool) { return lineTime(line) }

// logfmtTimeField returns the value of a line's first ts=, time= or timestamp= pair that
// starts the line or follows a space, quoted or not.
func logfmtTimeField(line string) string {
	for _, key := range [...]string{"ts=", "time=", "timestamp="} {
		for from := 0; ; {
			i := strings.Index(line[from:], key)
			if i < 0 {
				break
			}
			i += from
			from = i + 1
			if i > 0 && line[i-1] != ' ' && line[i-1] != '\t' {
				continue
			}
			v, _ := logfmtValue(line, i+len(key))
			if len(v) >= 19 && isDigit(v[0]) {
				return v
			}
		}
	}
	return ""
}

// jsonEpochField returns the number of a line's first "ts", "time" or "timestamp" field that
// holds a number: zap's production encoder writes seconds as a float (1764859123.4567), pino
// and logback's JSON encoders milliseconds.
func jsonEpochField(line string) string {
	for _, key := range [...]string{`"ts"`, `"time"`, `"timestamp"`} {
		i := strings.Index(line, key)
		if i < 0 {
			continue
		}
		k := skipREspace(line, i+len(key))
		if k >= len(line) || line[k] != ':' {
			continue
		}
		k = skipREspace(line, k+1)
		j := k
		for j < len(line) && (isDigit(line[j]) || line[j] == '.') {
			j++
		}
		if j > k {
			return line[k:j]
		}
	}
	return ""
}

// epochTime reads a Unix time in seconds, milliseconds, microseconds or nanoseconds (told
// apart by size: a log line's time is after 2001), with a fraction or without.
func epochTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	whole, frac, _ := strings.Cut(s, ".")
	if len(whole) < 9 || len(whole) > 19 || strings.Contains(frac, ".") {
		return time.Time{}, false
	}
	n := int64(0)
	for i := range len(whole) {
		n = n*10 + int64(whole[i]-'0')
	}
	var unit int64
	switch {
	case len(whole) <= 10:
		unit = int64(time.Second)
	case len(whole) <= 13:
		unit = int64(time.Millisecond)
	case len(whole) <= 16:
		unit = int64(time.Microsecond)
	default:
		unit = 1
	}
	ns := n * unit
	// The fraction, in the unit, to the nanosecond.
	scale := unit / 10
	for i := 0; i < len(frac) && scale > 0; i++ {
		ns += int64(frac[i]-'0') * scale
		scale /= 10
	}
	return time.Unix(0, ns).UTC(), true
}

// jsonTimeField returns the value of a line's first "ts", "time", "timestamp" or "@timestamp"
// field holding a non-empty string without escapes, by a scan.
func jsonTimeField(line string) string {
	for i := 0; i < len(line); i++ {
		j := strings.IndexByte(line[i:], '"')
		if j < 0 {
			return ""
		}
		i += j
		rest := line[i+1:]
		var key int
		switch {
		case strings.HasPrefix(rest, `ts"`):
			key = 3
		case strings.HasPrefix(rest, `time"`):
			key = 5
		case strings.HasPrefix(rest, `timestamp"`):
			key = 10
		case strings.HasPrefix(rest, `@timestamp"`):
			key = 11
		default:
			continue
		}
		k := skipREspace(rest, key)
		if k >= len(rest) || rest[k] != ':' {
			continue
		}
		k = skipREspace(rest, k+1)
		if k >= len(rest) || rest[k] != '"' {
			continue
		}
		end := strings.IndexByte(rest[k+1:], '"')
		if end <= 0 {
			continue
		}
		return rest[k+1 : k+1+end]
	}
	return ""
}

// skipREspace skips what \s matches in RE2: tab, newline, form feed, carriage return, space.
func skipREspace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\f' || s[i] == '\r') {
		i++
	}
	return i
}

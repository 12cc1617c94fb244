package diagnose

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// Reading log lines for evidence: which lines report a failure, what of them to show, and
// the key that groups one failure logged by every copy. Each distinct line is read once per
// workload (logEvidence caches by text), but a failing cluster still has many: these are on
// the engine's hot path, hence the hand-written JSON scan in front of encoding/json.

// reducedLine is a failing log line as evidence shows it: its text, and the key that groups
// the same failure across copies.
type reducedLine struct{ key, text string }

// reduceLogLine reduces a log line to its evidence, or nil when it reports no failure.
func reduceLogLine(line string) *reducedLine {
	if strings.HasPrefix(line, "Request log error:") || strings.HasPrefix(line, "unable to retrieve container logs") {
		return nil
	}
	// The reduced text is part of the line: a line without a failure word is done.
	if !logFailure(line) {
		return nil
	}
	text := logText(line)
	if text == "" || !logFailure(text) {
		return nil
	}
	return &reducedLine{key: withoutVariables(text), text: text}
}

// logFailureWords mark a log line as a failure signal.
var logFailureWords = []string{
	"error", "fatal", "panic", "exception", "refused", "timeout", "timed out",
	"no such host", "denied", "killed", "failed", "unhealthy", "traceback", "out of memory", "oom",
}

func logFailure(text string) bool {
	lower := strings.ToLower(text)
	for _, w := range logFailureWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// withoutVariables replaces the words that change from line to line (ids, counters, addresses,
// times: any run of letters, digits and '_' holding a digit) with '#', so one failure on five
// copies groups as one signal.
func withoutVariables(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	word := func(c byte) bool {
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	for i := 0; i < len(text); {
		if !word(text[i]) {
			b.WriteByte(text[i])
			i++
			continue
		}
		j, digit := i, false
		for j < len(text) && word(text[j]) {
			digit = digit || text[j] >= '0' && text[j] <= '9'
			j++
		}
		if digit {
			b.WriteByte('#')
		} else {
			b.WriteString(text[i:j])
		}
		i = j
	}
	return b.String()
}

// logFields are the fields of a JSON log line that say what failed.
type logFields struct {
	Level    string `json:"level"`
	Msg      string `json:"msg"`
	Message  string `json:"message"`
	Error    string `json:"error"`
	Err      string `json:"err"`
	Endpoint string `json:"endpoint"`
}

// decodeLogFields reads the logFields of a JSON object line as json.Unmarshal does (a field of
// another type leaves the rest filled); valid is false when the line is not JSON. Most lines
// are flat objects of plain strings: those are read by a scan, and anything else (escapes,
// non-ASCII keys, invalid UTF-8) goes to json.Unmarshal, so both read the same.
func decodeLogFields(line string) (m logFields, valid bool) {
	if !json.Valid([]byte(line)) {
		return m, false
	}
	if scanLogFields(line, &m) {
		return m, true
	}
	m = logFields{}
	err := json.Unmarshal([]byte(line), &m)
	var syntax *json.SyntaxError
	return m, !errors.As(err, &syntax)
}

// scanLogFields fills m from line, a valid JSON value; it reports false when the line needs
// json.Unmarshal (not an object, or a key or wanted value that is not plain ASCII or UTF-8
// without escapes).
func scanLogFields(line string, m *logFields) bool {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	i++
	for {
		i = skipSpace(line, i)
		if line[i] == '}' {
			return true
		}
		if line[i] == ',' {
			i = skipSpace(line, i+1)
		}
		// A key: a valid line has a string here.
		end := strings.IndexByte(line[i+1:], '"') + i + 1
		key := line[i+1 : end]
		if strings.IndexByte(key, '\\') >= 0 || !isASCII(key) {
			return false
		}
		i = skipSpace(line, end+1) + 1 // past ':'
		i = skipSpace(line, i)
		var dst *string
		switch {
		case strings.EqualFold(key, "level"):
			dst = &m.Level
		case strings.EqualFold(key, "msg"):
			dst = &m.Msg
		case strings.EqualFold(key, "message"):
			dst = &m.Message
		case strings.EqualFold(key, "error"):
			dst = &m.Error
		case strings.EqualFold(key, "err"):
			dst = &m.Err
		case strings.EqualFold(key, "endpoint"):
			dst = &m.Endpoint
		}
		if line[i] == '"' {
			end := closingQuote(line, i)
			if dst != nil {
				v := line[i+1 : end]
				if strings.IndexByte(v, '\\') >= 0 || !utf8.ValidString(v) {
					return false
				}
				*dst = v
			}
			i = end + 1
			continue
		}
		// Any other value leaves the field as it is, as a type mismatch does for Unmarshal.
		i = skipValue(line, i)
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// closingQuote returns the index of the quote that ends the JSON string opened at s[i].
func closingQuote(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(s)
}

// skipValue returns the index just past the JSON value (not a string) that starts at s[i].
func skipValue(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '"':
			i = closingQuote(s, i)
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

// quietLevels are JSON log levels that are not failures; checked before decoding the line.
var quietLevels = []string{`"level":"info"`, `"level":"debug"`, `"level":"INFO"`, `"level":"DEBUG"`}

// logText reduces a log line to what repeats across copies: a JSON line to its level, message
// and error fields; a text line to itself without its leading timestamp.
func logText(line string) string {
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "{") {
		for _, q := range quietLevels {
			if strings.Contains(line, q) {
				return ""
			}
		}
		m, valid := decodeLogFields(line)
		if valid {
			if strings.EqualFold(m.Level, "info") || strings.EqualFold(m.Level, "debug") {
				return ""
			}
			var parts []string
			for _, kv := range [][2]string{{"msg", m.Msg}, {"message", m.Message}, {"error", m.Error}, {"err", m.Err}, {"endpoint", m.Endpoint}} {
				if kv[1] != "" {
					parts = append(parts, kv[0]+"="+kv[1])
				}
			}
			if len(parts) == 0 {
				return ""
			}
			return strings.Join(parts, " ")
		}
	}
	return logTimestamp.ReplaceAllString(line, "")
}

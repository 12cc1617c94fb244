package metamorph

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// A log line as an application wrote it: a JSON object, logfmt pairs, or plain text with a
// leading stamp and level word. Lines of none of these forms (a usage text, a stack frame, an
// access log) are unstructured and left as they are, and so are the lines kubectl wrote in
// place of a log it could not read.

type lineFormat int

const (
	unstructured lineFormat = iota
	jsonLine
	logfmtLine
	plainLine
)

// pair is one key and value of a JSON or logfmt line; raw marks a JSON value that is not a
// string (a number, a bool, an object), kept as written.
type pair struct {
	key, value string
	raw        bool
}

// record is a parsed line. JSON and logfmt lines are their pairs in order; a plain line is
// what comes before its level word (the stamp and separators), the word, and the rest.
type record struct {
	format           lineFormat
	pairs            []pair
	pre, level, post string
	stamp            string
}

// kubectlLine reports the lines a dump holds in place of a log (kubectl's own words).
func kubectlLine(line string) bool {
	return strings.HasPrefix(line, "Request log error:") || strings.HasPrefix(line, "unable to retrieve container logs")
}

func parseLine(line string) record {
	if kubectlLine(line) {
		return record{}
	}
	t := strings.TrimSpace(line)
	if strings.HasPrefix(t, "{") {
		if ps, ok := parseJSONPairs(t); ok {
			return record{format: jsonLine, pairs: ps}
		}
		return record{}
	}
	if ps, ok := parseLogfmt(t); ok {
		return record{format: logfmtLine, pairs: ps}
	}
	if r, ok := parsePlain(line); ok {
		return r
	}
	return record{}
}

// parseJSONPairs reads a JSON object line into its pairs in order. The line is validated
// first, so the scan that follows can trust its structure; a dump's tails are tens of
// thousands of lines, read once per variant.
func parseJSONPairs(s string) ([]pair, bool) {
	if !json.Valid([]byte(s)) {
		return nil, false
	}
	i := skipSpace(s, 0)
	if s[i] != '{' {
		return nil, false
	}
	i++
	var ps []pair
	for {
		i = skipSpace(s, i)
		if s[i] == '}' {
			return ps, true
		}
		if s[i] == ',' {
			i = skipSpace(s, i+1)
		}
		end := stringEnd(s, i)
		key := unquoteJSON(s[i:end])
		i = skipSpace(s, skipSpace(s, end)+1) // past ':'
		vend := valueEnd(s, i)
		if s[i] == '"' {
			ps = append(ps, pair{key: key, value: unquoteJSON(s[i:vend])})
		} else {
			ps = append(ps, pair{key: key, value: s[i:vend], raw: true})
		}
		i = vend
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the JSON string that opens at s[i].
func stringEnd(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(s)
}

// valueEnd returns the index just past the JSON value that starts at s[i].
func valueEnd(s string, i int) int {
	switch s[i] {
	case '"':
		return stringEnd(s, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				j = stringEnd(s, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(s)
	}
	j := i
	for j < len(s) && s[j] != ',' && s[j] != '}' && s[j] != ']' && s[j] != ' ' {
		j++
	}
	return j
}

// unquoteJSON reads a valid JSON string literal.
func unquoteJSON(q string) string {
	if !strings.Contains(q, "\\") {
		return q[1 : len(q)-1]
	}
	var v string
	_ = json.Unmarshal([]byte(q), &v) // valid: the line was validated whole
	return v
}

func logfmtKeyByte(c byte) bool {
	return c == '_' || c == '.' || c == '-' || c == '@' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// parseLogfmt reads key=value pairs (values bare or double-quoted with backslash escapes); a
// line is logfmt when it is wholly such pairs, at least two, one of them a level or message.
func parseLogfmt(s string) ([]pair, bool) {
	var ps []pair
	i := 0
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i == len(s) {
			break
		}
		k := i
		for i < len(s) && logfmtKeyByte(s[i]) {
			i++
		}
		if i == k || i == len(s) || s[i] != '=' {
			return nil, false
		}
		key := s[k:i]
		i++
		var v string
		if i < len(s) && s[i] == '"' {
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, false
			}
			u, err := strconv.Unquote(s[i : j+1])
			if err != nil {
				return nil, false
			}
			v, i = u, j+1
		} else {
			j := i
			for j < len(s) && s[j] != ' ' {
				j++
			}
			v, i = s[i:j], j
		}
		if i < len(s) && s[i] != ' ' {
			return nil, false
		}
		ps = append(ps, pair{key: key, value: v})
	}
	if len(ps) < 2 || (findKey(ps, levelKeys) < 0 && findKey(ps, msgKeys) < 0) {
		return nil, false
	}
	return ps, true
}

var (
	plainStamp = regexp.MustCompile(`^\[?(\d{4}[-/]\d{2}[-/]\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?)`)
	// plainLevel is the level word after the stamp, past brackets, colons and spaces:
	// "INFO", "[ warn]", "[error]", ": ERROR/MainProcess".
	plainLevel = regexp.MustCompile(`^[\s\[\]:]*?((?i:trace|debug|info|notice|warning|warn|error|err|fatal|critical|crit|panic))\b`)
	// bareLevel is a level that opens a line without a stamp (uvicorn's "INFO:     ...").
	bareLevel = regexp.MustCompile(`^(TRACE|DEBUG|INFO|WARNING|WARN|ERROR|FATAL|CRITICAL)(?::|\s)`)
)

func parsePlain(line string) (record, bool) {
	if m := plainStamp.FindStringSubmatchIndex(line); m != nil {
		r := record{format: plainLine, stamp: line[m[2]:m[3]]}
		rest := line[m[1]:]
		if l := plainLevel.FindStringSubmatchIndex(rest); l != nil {
			r.pre, r.level, r.post = line[:m[1]+l[2]], rest[l[2]:l[3]], rest[l[3]:]
			return r, true
		}
		r.pre, r.post = line[:m[1]], rest
		return r, true
	}
	if m := bareLevel.FindStringSubmatchIndex(line); m != nil {
		return record{format: plainLine, level: line[m[2]:m[3]], post: line[m[3]:]}, true
	}
	return record{}, false
}

var (
	levelKeys = []string{"level", "severity", "lvl"}
	timeKeys  = []string{"ts", "time", "timestamp", "@timestamp"}
	msgKeys   = []string{"msg", "message"}
)

func findKey(ps []pair, keys []string) int {
	for i, p := range ps {
		for _, k := range keys {
			if strings.EqualFold(p.key, k) {
				return i
			}
		}
	}
	return -1
}

// normLevel names a level word or pino number as one of debug, info, warn, error, fatal.
func normLevel(s string) string {
	switch strings.ToLower(s) {
	case "trace", "debug", "10", "20":
		return "debug"
	case "info", "notice", "30":
		return "info"
	case "warn", "warning", "40":
		return "warn"
	case "error", "err", "50":
		return "error"
	case "fatal", "critical", "crit", "panic", "60":
		return "fatal"
	}
	return ""
}

// level is the record's level, normalised; "" when it has none.
func (r record) levelName() string {
	switch r.format {
	case jsonLine, logfmtLine:
		if i := findKey(r.pairs, levelKeys); i >= 0 {
			return normLevel(r.pairs[i].value)
		}
	case plainLine:
		return normLevel(r.level)
	}
	return ""
}

// failingLevel reports a level that marks a failure in every logging library: warn and worse.
func failingLevel(l string) bool { return l == "warn" || l == "error" || l == "fatal" }

// styled writes level name like the word it replaces: all capitals, or lower case.
func styled(name, like string) string {
	if like != "" && like == strings.ToUpper(like) {
		return strings.ToUpper(name)
	}
	return name
}

// withLevel is the record with its level set to name (warn, error), or removed for "".
func (r record) withLevel(name string) record {
	switch r.format {
	case jsonLine, logfmtLine:
		i := findKey(r.pairs, levelKeys)
		if i < 0 {
			return r
		}
		ps := append([]pair(nil), r.pairs...)
		switch {
		case name == "":
			ps = append(ps[:i], ps[i+1:]...)
		case ps[i].raw:
			ps[i].value = map[string]string{"warn": "40", "error": "50"}[name]
		default:
			ps[i].value = styled(name, ps[i].value)
		}
		r.pairs = ps
	case plainLine:
		if r.level == "" {
			return r
		}
		if name != "" {
			r.level = styled(name, r.level)
			return r
		}
		// Without a level the word goes with what only framed it: its brackets, the slash
		// that tied it to a process name, the spaces that padded it.
		pre, post := r.pre, r.post
		if strings.HasSuffix(strings.TrimRight(pre, " "), "[") && strings.HasPrefix(post, "]") {
			pre, post = strings.TrimSuffix(strings.TrimRight(pre, " "), "["), post[1:]
		}
		post = strings.TrimPrefix(post, "/")
		post = strings.TrimLeft(post, " ")
		if pre != "" && !strings.HasSuffix(pre, " ") && post != "" && !strings.HasPrefix(post, ":") {
			pre += " "
		}
		r.pre, r.level, r.post = pre, "", post
	}
	return r
}

// render writes the record in its own format.
func (r record) render() string {
	switch r.format {
	case jsonLine:
		return renderJSON(r.pairs)
	case logfmtLine:
		return renderLogfmt(r.pairs)
	case plainLine:
		return r.pre + r.level + r.post
	}
	return ""
}

func jsonString(s string) string {
	plain := true
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return `"` + s + `"`
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

func renderJSON(ps []pair) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonString(p.key))
		b.WriteByte(':')
		if p.raw {
			b.WriteString(p.value)
		} else {
			b.WriteString(jsonString(p.value))
		}
	}
	b.WriteByte('}')
	return b.String()
}

func logfmtValue(v string) string {
	if v == "" || strings.ContainsAny(v, " =\"\\\t") {
		return strconv.Quote(v)
	}
	return v
}

func renderLogfmt(ps []pair) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.key + "=" + logfmtValue(p.value)
	}
	return strings.Join(parts, " ")
}

// entry is a record read as its parts, the form every encoding writes.
type entry struct {
	at               time.Time
	dated            bool
	timeKey, msgKey  string
	level            string
	msg              string
	fields           []pair
	hasMsg, hasLevel bool
}

func (r record) entry() (entry, bool) {
	var e entry
	switch r.format {
	case jsonLine, logfmtLine:
		ti, li, mi := findKey(r.pairs, timeKeys), findKey(r.pairs, levelKeys), findKey(r.pairs, msgKeys)
		if ti >= 0 {
			p := r.pairs[ti]
			if p.raw {
				e.at, e.dated = epochTime(p.value)
			} else {
				e.at, e.dated = parseStamp(p.value)
			}
			if !e.dated {
				return e, false
			}
			e.timeKey = p.key
		}
		if li >= 0 {
			e.level, e.hasLevel = normLevel(r.pairs[li].value), true
		}
		if mi >= 0 {
			e.msg, e.msgKey, e.hasMsg = r.pairs[mi].value, r.pairs[mi].key, true
		}
		for i, p := range r.pairs {
			if i != ti && i != li && i != mi {
				e.fields = append(e.fields, p)
			}
		}
	case plainLine:
		if r.stamp != "" {
			if e.at, e.dated = parseStamp(r.stamp); !e.dated {
				return e, false
			}
		}
		e.level, e.hasLevel = normLevel(r.level), r.level != ""
		rest := r.post
		// A level tied to a process name ("ERROR/ForkPoolWorker-1]") keeps the name as a field.
		if i := strings.IndexByte(rest, ']'); r.level != "" && strings.HasPrefix(rest, "/") && i > 1 && !strings.ContainsAny(rest[1:i], " [") {
			e.fields = append(e.fields, pair{key: "process", value: rest[1:i]})
			rest = rest[i+1:]
		}
		e.msg, e.hasMsg = strings.TrimLeft(rest, "]/: "), true
	default:
		return e, false
	}
	return e, true
}

// stampOut is how every re-encoded line writes its time.
const stampOut = "2006-01-02T15:04:05.000Z07:00"

func (e entry) pairs() []pair {
	var ps []pair
	if e.dated {
		k := e.timeKey
		if k == "" {
			k = "ts"
		}
		ps = append(ps, pair{key: k, value: e.at.UTC().Format(stampOut)})
	}
	if e.hasLevel && e.level != "" {
		ps = append(ps, pair{key: "level", value: e.level})
	}
	if e.hasMsg {
		k := e.msgKey
		if k == "" {
			k = "msg"
		}
		ps = append(ps, pair{key: k, value: e.msg})
	}
	return append(ps, e.fields...)
}

// encode writes the entry as a JSON object, logfmt pairs or plain text (stamp, level in
// capitals, message, then the fields as logfmt pairs).
func (e entry) encode(f lineFormat) string {
	switch f {
	case jsonLine:
		return renderJSON(e.pairs())
	case logfmtLine:
		ps := e.pairs()
		for i := range ps {
			ps[i].raw = false
		}
		return renderLogfmt(ps)
	}
	var parts []string
	if e.dated {
		parts = append(parts, e.at.UTC().Format(stampOut))
	}
	if e.hasLevel && e.level != "" {
		parts = append(parts, strings.ToUpper(e.level))
	}
	if e.msg != "" {
		parts = append(parts, e.msg)
	}
	if len(e.fields) > 0 {
		fs := append([]pair(nil), e.fields...)
		for i := range fs {
			fs[i].raw = false
		}
		parts = append(parts, renderLogfmt(fs))
	}
	return strings.Join(parts, " ")
}

package facts

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Level is the level a log line states for itself.
type Level uint8

// The levels, least severe first. LevelNone: the line states none.
const (
	LevelNone Level = iota
	LevelDebug
	LevelInfo
	LevelWarn
	LevelError
)

var levelNames = [...]string{LevelNone: "", LevelDebug: "debug", LevelInfo: "info", LevelWarn: "warn", LevelError: "error"}

// String names the level as the report does ("" for none).
func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return ""
}

// Line is what one log text says: its own time, its level, what it reports and whether that
// is a failure.
type Line struct {
	// At is the time the line carries itself (a JSON time field or a leading RFC 3339 stamp,
	// the one `kubectl logs --timestamps` writes); Dated says it carries one.
	At    time.Time
	Dated bool
	Level Level
	// Format is how the line is written: "json", "logfmt", "access" (an HTTP access log) or
	// "text".
	Format string
	// Text is the line as evidence shows it: a structured line's message fields, a text
	// line without its leading time.
	Text   string
	Signal Signal
}

// ReadLine reads one log text. It is the engine's only reading of a log line.
func ReadLine(text string) Line {
	var l Line
	l.At, l.Dated = lineTime(text)
	r := readMessage(text)
	l.Level, l.Format = r.level, r.format
	l.Text = r.shown
	if l.Text == "" {
		l.Text = r.says
	}
	l.Signal = lineSignal(text, &r)
	return l
}

// message is what readMessage finds in a line: its level, the words that say what happened
// (free text and the values of the message fields, in order) and the text evidence shows.
type message struct {
	level  Level
	format string
	// says is what the line reports, the part a failure test reads: a structured line's
	// message and error fields, a text line without its time and level.
	says string
	// shown is the line as evidence shows it: a structured line's message fields as k=v, a
	// text line without its leading time.
	shown string
	// status is an access log line's HTTP status, 0 for other lines.
	status int
}

// messageKeys are the fields of a structured line that say what happened, in the order they
// are read.
var messageKeys = [...]string{"msg", "message", "error", "err", "reason", "exception", "endpoint"}

// messageKeyIndex returns the index of key in messageKeys (case-insensitive), or -1.
func messageKeyIndex(key string) int {
	for i, k := range messageKeys {
		if strings.EqualFold(key, k) {
			return i
		}
	}
	return -1
}

// levelKey reports whether key names a line's level.
func levelKey(key string) bool {
	return strings.EqualFold(key, "level") || strings.EqualFold(key, "lvl") || strings.EqualFold(key, "severity") || strings.EqualFold(key, "log.level")
}

var (
	reAccessLog = regexp.MustCompile(`"(?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) (\S+) HTTP/[0-9.]+" (\d{3}) `)
	// reWordLevel finds a level written as a word: Spring's "ERROR 1 ---", nginx's "[error]",
	// Python's "ERROR:root:", a bare "WARN".
	reWordLevel = regexp.MustCompile(`(?:^|[\s\[|])(ERROR|FATAL|PANIC|CRITICAL|SEVERE|WARN|WARNING|error|fatal|crit|emerg|alert|warn)(?:[\]\s:|]|$)`)
	reKlog      = regexp.MustCompile(`^([IWEF])\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ [^\]]*\] `)
	reLeadStamp = regexp.MustCompile(`^\[?\d{4}[-/]\d{2}[-/]\d{2}[T ][0-9:.,]+(Z|[+-]\d{2}:?\d{2})?\]?\s*`)
)

// readMessage reads a line's level and message, by its format.
func readMessage(line string) message {
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "{") {
		if f, ok := decodeFields(line); ok {
			return structured(f, "json")
		}
	}
	if strings.Contains(line, " HTTP/") {
		if m := reAccessLog.FindStringSubmatchIndex(line); m != nil {
			status := atoi(line[m[4]:m[5]])
			rest := reLeadStamp.ReplaceAllString(line, "")
			return message{format: "access", says: line[m[0]+1:m[3]] + " " + line[m[4]:m[5]], shown: rest, status: status}
		}
	}
	text := reLeadStamp.ReplaceAllString(line, "")
	if strings.Contains(text, "=") {
		if f, ok := logfmtFields(text); ok {
			m := structured(f, "logfmt")
			if m.level == LevelNone {
				m.level = wordLevel(text)
			}
			// Its pairs are what a person reads (missing=ARCHIVE_KEY): shown whole but for
			// its time.
			m.shown = f.untimed
			return m
		}
	}
	m := message{format: "text", shown: text, level: LevelNone}
	var says string
	if k := reKlog.FindStringSubmatch(text); k != nil {
		switch k[1] {
		case "E", "F":
			m.level = LevelError
		case "W":
			m.level = LevelWarn
		case "I":
			m.level = LevelInfo
		}
		says = text[len(k[0]):]
	} else {
		var lead Level
		says, lead = withoutLeadingLevel(text)
		if lead != LevelNone {
			says = withoutLoggerName(says)
		}
		m.level = max(wordLevel(text), lead)
	}
	m.says = says
	return m
}

// structured is the message of a line read as fields.
func structured(f fields, format string) message {
	m := message{format: format, level: parseLevel(f.level)}
	var says, shown strings.Builder
	if f.free != "" {
		says.WriteString(f.free)
		shown.WriteString(f.free)
	}
	for i, v := range f.msg {
		if v == "" {
			continue
		}
		if says.Len() > 0 {
			says.WriteByte(' ')
			shown.WriteByte(' ')
		}
		says.WriteString(v)
		shown.WriteString(messageKeys[i])
		shown.WriteByte('=')
		shown.WriteString(v)
	}
	if says.Len() == 0 {
		// No message field: what the line says is all of its values.
		says.WriteString(f.values)
		shown.WriteString(f.values)
	}
	m.says, m.shown = says.String(), shown.String()
	return m
}

// parseLevel reads a level's name as loggers write it.
func parseLevel(s string) Level {
	switch strings.ToLower(s) {
	case "":
		return LevelNone
	case "trace", "debug", "dbg", "verbose", "fine", "finer", "finest":
		return LevelDebug
	case "info", "information", "informational", "notice", "inf":
		return LevelInfo
	case "warn", "warning", "wrn":
		return LevelWarn
	case "error", "err", "fatal", "panic", "dpanic", "critical", "crit", "alert", "emerg", "emergency", "severe", "eror":
		return LevelError
	// pino's and bunyan's numeric levels.
	case "10", "20":
		return LevelDebug
	case "30":
		return LevelInfo
	case "40":
		return LevelWarn
	case "50", "60":
		return LevelError
	}
	return LevelNone
}

// wordLevel is the level a text line writes as a word, LevelNone when it writes none (only
// the warning and error words are read: an INFO word says no more than no word).
func wordLevel(text string) Level {
	m := reWordLevel.FindStringSubmatch(text)
	if m == nil {
		return LevelNone
	}
	return parseLevel(m[1])
}

// withoutLeadingLevel drops a level word that opens a text line ("WARN ", "[error] ",
// "ERROR:root:", Go's "Error: "), so that the same message at another level reads the same,
// and returns the level it names.
func withoutLeadingLevel(text string) (string, Level) {
	i := 0
	if i < len(text) && text[i] == '[' {
		i++
	}
	j := i
	for j < len(text) && isLetter(text[j]) {
		j++
	}
	level := parseLevel(text[i:j])
	if j == i || level == LevelNone {
		return text, LevelNone
	}
	if j < len(text) && text[j] == ']' {
		j++
	}
	if j < len(text) && text[j] != ':' && text[j] != ' ' && text[j] != '\t' {
		// A word that only starts like a level ("Errors", "info.go").
		return text, LevelNone
	}
	for j < len(text) && (text[j] == ':' || text[j] == ' ' || text[j] == '\t') {
		j++
	}
	return text[j:], level
}

// reLoggerName is a dotted logger name that opens a message after its level, as Python's
// logging ("%(levelname)s %(name)s: %(message)s") and Java's loggers print it: the name of
// the code that logs, not what it says ("INFO uvicorn.error: Uvicorn running on ..." is no
// error).
var reLoggerName = regexp.MustCompile(`^[A-Za-z_][\w-]*(?:\.[\w$-]+)+:\s*`)

// withoutLoggerName drops a dotted logger name that opens a message (Python's default
// format has no space after its colon: "INFO:uvicorn.error:Started"); a host and its port
// ("db.internal:5432 refused") is no logger name.
func withoutLoggerName(says string) string {
	if m := reLoggerName.FindStringIndex(says); m != nil && m[1] < len(says) && !isDigit(says[m[1]]) {
		return says[m[1]:]
	}
	return says
}

// fields are what a structured line holds: its level, the message fields by their index in
// messageKeys, the words outside any field (logfmt) and, for a line with no message field,
// its values.
type fields struct {
	level  string
	msg    [len(messageKeys)]string
	free   string
	values string
	// untimed is a logfmt line without its time pairs.
	untimed string
}

// decodeFields reads a JSON object line's fields as json.Unmarshal would; ok is false when
// the line is not a JSON object. Most lines are flat objects of plain strings: those are read
// by a scan, anything else (escapes, non-ASCII keys, invalid UTF-8) by encoding/json, and both
// read the same.
func decodeFields(line string) (f fields, ok bool) {
	if !json.Valid([]byte(line)) {
		return f, false
	}
	if scanFields(line, &f) {
		return f, true
	}
	return unmarshalFields(line)
}

// unmarshalFields reads a JSON line's fields with encoding/json, in the line's order (a key
// given twice keeps its last value, as the scan does); ok is false when the line is not a
// JSON object.
func unmarshalFields(line string) (f fields, ok bool) {
	if err := json.Unmarshal([]byte(line), new(map[string]json.RawMessage)); err != nil {
		var syntax *json.SyntaxError
		return fields{}, !errors.As(err, &syntax)
	}
	dec := json.NewDecoder(strings.NewReader(line))
	if _, err := dec.Token(); err != nil { // the object's '{'
		return fields{}, false
	}
	var values []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fields{}, false
		}
		k, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fields{}, false
		}
		var s string
		if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			nonStringField(k, string(raw), &f)
			continue
		}
		switch i := messageKeyIndex(k); {
		case levelKey(k):
			f.level = s
		case i >= 0:
			f.msg[i] = s
		case !isTimeKey(k):
			values = append(values, s)
		}
	}
	sortStrings(values)
	f.values = strings.Join(values, " ")
	return f, true
}

// scanFields fills f from line, a valid JSON value; it reports false when the line needs
// encoding/json (not an object, or a key or string value that is not plain UTF-8 without
// escapes).
func scanFields(line string, f *fields) bool {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	i++
	var values []string
	for {
		i = skipSpace(line, i)
		if line[i] == '}' {
			sortStrings(values)
			f.values = strings.Join(values, " ")
			return true
		}
		if line[i] == ',' {
			i = skipSpace(line, i+1)
		}
		end := strings.IndexByte(line[i+1:], '"') + i + 1
		key := line[i+1 : end]
		if strings.IndexByte(key, '\\') >= 0 || !isASCII(key) {
			return false
		}
		i = skipSpace(line, end+1) + 1 // past ':'
		i = skipSpace(line, i)
		if line[i] != '"' {
			j := skipValue(line, i)
			nonStringField(key, line[i:j], f)
			i = j
			continue
		}
		end = closingQuote(line, i)
		v := line[i+1 : end]
		if strings.IndexByte(v, '\\') >= 0 || !utf8.ValidString(v) {
			return false
		}
		i = end + 1
		switch k := messageKeyIndex(key); {
		case levelKey(key):
			f.level = v
		case k >= 0:
			f.msg[k] = v
		case !isTimeKey(key):
			values = append(values, v)
		}
	}
}

// nonStringField reads the two values that are not strings and still say something: a level
// written as a number (pino's and bunyan's 10 to 60), and an error serialized as an object
// under a message key (pino's "err":{"type":"Error","message":"connect ECONNREFUSED ..."}),
// whose message is read. Any other value (null, a number, an object) says nothing a message
// field would.
func nonStringField(key, raw string, f *fields) {
	switch k := messageKeyIndex(key); {
	case levelKey(key) && raw != "" && raw[0] >= '0' && raw[0] <= '9':
		f.level = raw
	case k >= 0 && f.msg[k] == "" && strings.HasPrefix(raw, "{"):
		var e struct {
			Message string `json:"message"`
		}
		if json.Unmarshal([]byte(raw), &e) == nil {
			f.msg[k] = e.Message
		}
	}
}

// isTimeKey reports whether key holds the line's time, which says nothing of what happened.
func isTimeKey(key string) bool {
	switch strings.ToLower(key) {
	case "ts", "time", "timestamp", "@timestamp", "t":
		return true
	}
	return false
}

// logfmtFields reads a line of key=value pairs (logfmt, and a text line that ends in pairs):
// ok is false when it holds no level or message pair, so that "x=1 failed" stays text.
func logfmtFields(text string) (f fields, ok bool) {
	var free, values []string
	var untimed strings.Builder
	for i := 0; i < len(text); {
		for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
			i++
		}
		if i == len(text) {
			break
		}
		j := i
		for j < len(text) && isKeyByte(text[j]) {
			j++
		}
		if j > i && j < len(text) && text[j] == '=' {
			key := text[i:j]
			v, next := logfmtValue(text, j+1)
			if !isTimeKey(key) {
				if untimed.Len() > 0 {
					untimed.WriteByte(' ')
				}
				untimed.WriteString(text[i:next])
			}
			i = next
			switch k := messageKeyIndex(key); {
			case levelKey(key):
				f.level = v
				ok = true
			case k >= 0:
				f.msg[k] = v
				ok = ok || k <= 1
			case !isTimeKey(key):
				values = append(values, v)
			}
			continue
		}
		// A word outside any pair.
		for j < len(text) && text[j] != ' ' && text[j] != '\t' {
			j++
		}
		free = append(free, text[i:j])
		if untimed.Len() > 0 {
			untimed.WriteByte(' ')
		}
		untimed.WriteString(text[i:j])
		i = j
	}
	if !ok {
		return fields{}, false
	}
	f.free = strings.Join(free, " ")
	f.values = strings.Join(values, " ")
	f.untimed = untimed.String()
	return f, true
}

// logfmtValue reads the value that starts at text[i], quoted or not, and returns it with the
// index past it.
func logfmtValue(text string, i int) (string, int) {
	if i < len(text) && text[i] == '"' {
		var b strings.Builder
		for j := i + 1; j < len(text); j++ {
			switch text[j] {
			case '\\':
				if j+1 < len(text) {
					j++
					b.WriteByte(text[j])
				}
			case '"':
				return b.String(), j + 1
			default:
				b.WriteByte(text[j])
			}
		}
		return b.String(), len(text)
	}
	j := i
	for j < len(text) && text[j] != ' ' && text[j] != '\t' {
		j++
	}
	return text[i:j], j
}

func isKeyByte(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '_' || c == '.' || c == '-' || c == '@'
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

func atoi(s string) int {
	n := 0
	for i := range len(s) {
		if !isDigit(s[i]) {
			return 0
		}
		n = n*10 + int(s[i]-'0')
	}
	return n
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

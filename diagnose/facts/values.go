package facts

import (
	"net"
	"slices"
	"strconv"
	"strings"
)

// ValueKind says what a Value names.
type ValueKind int

// The kinds of value.
const (
	ValueQuoted   ValueKind = iota // a quoted name: secret "db-credentials"
	ValueURL                       // scheme://host[:port][/path]
	ValueHostPort                  // host:port
	ValueHost                      // a host name or IP address
	ValuePort                      // a port with no host (":8080")
	ValuePath                      // an absolute URL or file path
	ValueFlag                      // a command-line flag, dashes removed
	ValueEnvName                   // an environment variable's name: DATABASE_URL
)

// Value is an endpoint, name, path or flag found in a message or a spec value.
type Value struct {
	Kind ValueKind
	Text string
	// Host, Port and Path are set for URL and host:port tokens (and Host/Port/Path alone for
	// their own kinds).
	Host, Port, Path string
}

// isTimestamp reports whether w starts with a time a log line quotes ("2026-11-24T14:17" or
// "2026-11-24 14:17"), which names nothing in a spec.
func isTimestamp(w string) bool {
	if len(w) < 16 || w[10] != 'T' && w[10] != ' ' || w[4] != '-' || w[7] != '-' || w[13] != ':' {
		return false
	}
	return allDigits(w[:4]) && allDigits(w[5:7]) && allDigits(w[8:10]) && allDigits(w[11:13]) && allDigits(w[14:16])
}

// fileExtensions end names that the host pattern finds but that are source files or
// documents (a logger's caller main.go:71), not hosts.
var fileExtensions = map[string]bool{
	"go": true, "py": true, "java": true, "js": true, "ts": true, "rb": true, "rs": true, "c": true,
	"cc": true, "cpp": true, "h": true, "sh": true, "kt": true, "scala": true, "php": true, "cs": true,
	"yaml": true, "yml": true, "json": true, "toml": true, "conf": true, "cfg": true, "ini": true,
	"log": true, "txt": true, "html": true, "jar": true, "so": true, "pem": true, "crt": true, "key": true,
}

// validHost reports whether h can be a host name or IP address in a message.
func validHost(h string) bool {
	if h == "" {
		return false
	}
	if strings.HasPrefix(h, "[") {
		return net.ParseIP(strings.Trim(h, "[]")) != nil
	}
	// Only digits and dots (IPv4) or a colon (IPv6) can make an IP address; most words are
	// names, and parsing them as addresses costs an allocation each.
	if mayBeIP(h) && net.ParseIP(h) != nil {
		return true
	}
	if !hasLetter(h) || isDateHour(h) {
		return false
	}
	if i := strings.LastIndexByte(h, '.'); i >= 0 {
		last := strings.ToLower(h[i+1:])
		if fileExtensions[last] || last == "" {
			return false
		}
		// A top-level label is never all digits.
		if _, err := strconv.Atoi(last); err == nil {
			return false
		}
	}
	return true
}

// mayBeIP reports whether h is written with the characters of an IP address only: digits and
// dots, or hex digits, dots and colons.
func mayBeIP(h string) bool {
	for i := range len(h) {
		c := h[i]
		if !isHexDigit(c) && c != '.' && c != ':' {
			return false
		}
	}
	return true
}

// ValidPort reports whether p is a port number, 1 to 65535.
func ValidPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n > 0 && n <= 65535
}

// IsIP reports whether h is an IP address (bracketed or not).
func IsIP(h string) bool { return net.ParseIP(strings.Trim(h, "[]")) != nil }

// minQuotedLen is the shortest quoted name worth taking: shorter ones name too much to match.
const minQuotedLen = 3

// Values finds the endpoints, names, paths and flags in s. It splits s into words at
// delimiters and classifies each word with string operations: regular expressions over every
// log line of every copy were the engine's hot spot.
func Values(s string) []Value {
	// Tokens gather in a buffer on the stack and leave in one allocation of the right size.
	var buf [16]Value
	out := buf[:0]
	add := func(t Value) {
		for _, o := range out {
			if o == t {
				return
			}
		}
		out = append(out, t)
	}
	prev := ""
	forEachWord(s, func(w string, quoted bool) {
		if quoted {
			if len(w) >= minQuotedLen && !strings.ContainsAny(w, " \t") && !isTimestamp(w) {
				add(Value{Kind: ValueQuoted, Text: w})
			}
			return
		}
		classifyWord(w, prev, add)
		prev = w
	})
	if len(out) == 0 {
		return nil
	}
	return slices.Clone(out)
}

// isDelimiter reports whether c separates words in a message.
func isDelimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', ',', '(', ')', '[', ']', '{', '}', '<', '>', ';', '=', '\\', '|', '`':
		return true
	}
	return false
}

// forEachWord calls fn with every word of s, and with the text between each pair of double
// quotes (quoted true).
func forEachWord(s string, fn func(w string, quoted bool)) {
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && !isDelimiter(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			fn(s[start:i], false)
			start = -1
		}
		if i < len(s) && s[i] == '"' {
			if j := strings.IndexByte(s[i+1:], '"'); j >= 0 {
				if q := s[i+1 : i+1+j]; !strings.ContainsRune(q, '\\') {
					fn(q, true)
				}
			}
		}
	}
}

// classifyWord adds the tokens one word names; prev is the word before it.
func classifyWord(w, prev string, add func(Value)) {
	w = strings.TrimLeft(w, "*")
	w = strings.TrimRight(w, ".:")
	if w == "" {
		return
	}
	switch {
	case strings.Contains(w, "://"):
		urlTokens(w, add)
		return
	case w[0] == '-':
		name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if len(name) >= 2 && isLetter(name[0]) {
			add(Value{Kind: ValueFlag, Text: name})
		}
		return
	case w[0] == '/':
		if len(w) > 1 {
			add(Value{Kind: ValuePath, Text: w, Path: w})
		}
		return
	}
	if i := strings.LastIndexByte(w, ':'); i >= 0 {
		host, port := strings.ToLower(w[:i]), w[i+1:]
		if ValidPort(port) && allDigits(port) {
			switch {
			case host == "":
				add(Value{Kind: ValuePort, Text: port, Port: port})
			case hostChars(host) && validHost(host):
				add(Value{Kind: ValueHostPort, Text: host + ":" + port, Host: host, Port: port})
				add(Value{Kind: ValueHost, Text: host, Host: host})
			}
		}
		return
	}
	if n := strings.TrimLeft(w, "$"); isEnvName(n) {
		add(Value{Kind: ValueEnvName, Text: n})
		return
	}
	h := strings.ToLower(w)
	if (strings.Contains(h, ".") || prev == "lookup") && hostChars(h) && validHost(h) {
		add(Value{Kind: ValueHost, Text: h, Host: h})
	}
}

// urlTokens adds a URL and its host, port and path.
func urlTokens(w string, add func(Value)) {
	if i := strings.IndexAny(w, "?#"); i >= 0 {
		w = w[:i]
	}
	scheme, rest, _ := strings.Cut(w, "://")
	if scheme == "" || !isLetter(scheme[0]) || rest == "" {
		return
	}
	authority, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		authority, path = rest[:i], rest[i:]
	}
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = authority[i+1:]
	}
	host, port := strings.ToLower(authority), ""
	if h, p, err := net.SplitHostPort(authority); err == nil {
		host = strings.ToLower(h)
		if ValidPort(p) && allDigits(p) {
			port = p
		}
	}
	add(Value{Kind: ValueURL, Text: w, Host: host, Port: port, Path: path})
	if port != "" {
		add(Value{Kind: ValueHostPort, Text: host + ":" + port, Host: host, Port: port})
	}
	if validHost(host) {
		add(Value{Kind: ValueHost, Text: host, Host: host})
	}
	if len(path) > 1 {
		add(Value{Kind: ValuePath, Text: path, Path: path})
	}
}

func hasLetter(s string) bool {
	for i := range len(s) {
		if isLetter(s[i]) {
			return true
		}
	}
	return false
}

// isDateHour reports whether h is the date-and-hour part of an RFC 3339 time
// ("2026-11-24t14" of 2026-11-24T14:17:56Z), which looks like host:port.
func isDateHour(h string) bool {
	if len(h) != 13 || h[4] != '-' || h[7] != '-' || h[10] != 't' && h[10] != 'T' {
		return false
	}
	return allDigits(h[:4]) && allDigits(h[5:7]) && allDigits(h[8:10]) && allDigits(h[11:])
}

// notEnvNames are upper-case words that logs use for other things than variables.
var notEnvNames = map[string]bool{
	"ERROR": true, "WARN": true, "WARNING": true, "INFO": true, "DEBUG": true, "FATAL": true, "PANIC": true,
	"TRACE": true, "CRITICAL": true, "NOTICE": true, "SEVERE": true, "GET": true, "POST": true, "PUT": true,
	"HEAD": true, "PATCH": true, "DELETE": true, "OPTIONS": true, "HTTP": true, "HTTPS": true, "TCP": true,
	"UDP": true, "TLS": true, "DNS": true, "EOF": true, "NOT": true, "FOUND": true, "NULL": true, "NONE": true,
}

// isEnvName reports whether w is written like an environment variable: upper-case letters,
// digits and underscores, starting with a letter.
func isEnvName(w string) bool {
	if len(w) < 3 || w[0] < 'A' || w[0] > 'Z' || notEnvNames[w] {
		return false
	}
	for i := range len(w) {
		c := w[i]
		if !isUpper(c) && !isDigit(c) && c != '_' {
			return false
		}
	}
	return true
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

func isHexDigit(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// hostChars reports whether s is made of the characters of a host name or IPv4 address.
func hostChars(s string) bool {
	for i := range len(s) {
		c := s[i]
		if !isLetter(c) && !isDigit(c) && c != '.' && c != '-' && c != '_' {
			return false
		}
	}
	return s != "" && s[0] != '-' && s[0] != '.'
}

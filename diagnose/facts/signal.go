package facts

import (
	"sort"
	"strings"
)

// Severity grades a failure signal.
type Severity uint8

// The severities, least first. SeverityNone is a fact that signals no failure.
const (
	SeverityNone Severity = iota
	SeverityInfo
	SeverityWarning
	SeverityError
)

var severityNames = [...]string{SeverityNone: "", SeverityInfo: "info", SeverityWarning: "warning", SeverityError: "error"}

// String names the severity ("" for none).
func (s Severity) String() string {
	if int(s) < len(severityNames) {
		return severityNames[s]
	}
	return ""
}

// Class says what kind of failure a message reports, for ranking what it names: the program
// refusing its own configuration points at the spec, a refused connection at the endpoint, a
// rejected credential at the credential.
type Class uint8

// The classes. ClassOther: a failure of no known kind.
const (
	ClassOther Class = iota
	// ClassConfig: the program rejects its configuration (an unknown flag, an invalid value, a
	// variable that must be set).
	ClassConfig
	// ClassAuth: a credential or a permission was refused.
	ClassAuth
	// ClassConnection: a connection could not be made or was lost (refused, timed out, no such
	// host, reset).
	ClassConnection
	// ClassNotFound: something named does not exist (a file, a key, an object).
	ClassNotFound
	// ClassResource: memory, disk or descriptors ran out.
	ClassResource
)

var classNames = [...]string{ClassOther: "other", ClassConfig: "config", ClassAuth: "auth", ClassConnection: "connection", ClassNotFound: "not-found", ClassResource: "resource"}

// String names the class.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "other"
}

// classPhrases say which kind of failure a message reports, the most telling kind first: a
// line that says "invalid value ... connection refused" is the program rejecting its config.
var classPhrases = []struct {
	class   Class
	phrases []string
}{
	{ClassConfig, []string{
		"flag provided but not defined", "unknown flag", "unknown option", "unknown shorthand flag",
		"unrecognized argument", "unrecognized arguments", "unrecognized option", "illegal option",
		"invalid value", "invalid argument", "invalid option", "invalid configuration", "bad flag",
		"must be set", "not set", "unbound variable", "is required", "cannot parse", "could not parse",
		"failed to parse", "parse error", "unknown field", "could not resolve placeholder",
	}},
	{ClassAuth, []string{
		"password authentication", "access denied", "permission denied", "authentication failed",
		"authentication required", "unauthorized", "forbidden", "invalid credentials", "invalid password",
		"certificate signed by unknown authority", "certificate has expired", "noauth", "eacces", "eperm",
	}},
	{ClassConnection, []string{
		"connection refused", "econnrefused", "connection reset", "econnreset", "no such host",
		"enotfound", "eai_again", "unknown host", "timed out", "timeout", "etimedout",
		"deadline exceeded", "no route to host", "network is unreachable", "unreachable",
		"ehostunreach", "enetunreach", "broken pipe", "unexpected eof", "connection lost",
		"connection dropped", "disconnected", "communications link failure", "connection rejected",
		// A server that refuses a connection for want of room: MySQL's error 1040, PostgreSQL's
		// "sorry, too many clients already".
		"too many connections", "too many clients",
	}},
	{ClassNotFound, []string{"not found", "no such file or directory", "does not exist", "enoent"}},
	{ClassResource, []string{
		"out of memory", "oom", "cannot allocate memory", "enomem", "no space left", "enospc",
		"too many open files", "emfile", "exhausted", "read-only file system", "erofs",
	}},
}

// ClassOf is the kind of failure a message reports.
func ClassOf(msg string) Class {
	lower := strings.ToLower(msg)
	for _, cp := range classPhrases {
		for _, p := range cp.phrases {
			if i := strings.Index(lower, p); i >= 0 && wholeWord(lower, i, i+len(p)) {
				return cp.class
			}
		}
	}
	return ClassOther
}

// Signal is the one verdict on whether a fact reports a failure.
type Signal struct {
	Failing  bool
	Severity Severity
	// Class is the kind of failure it reports.
	Class Class
	// Key names the failure: the same for every copy, level and encoding that reports it
	// (words lowercased, variable parts such as ids, addresses and counts as #, field names
	// and the level left out).
	Key string
	// Text is the failure as evidence shows it.
	Text string
}

// failurePhrases say that something failed, read in what a line reports (never in its field
// names: "upstream_errors":0 is no failure), as whole words. A word that ends in "error" or
// "exception" (IOError, ConnectException) is read too (wordFailure).
var failurePhrases = []string{
	"error", "errors:", "failed", "failure", "failing", "fatal", "panic", "exception", "traceback",
	"refused", "denied", "unauthorized", "forbidden", "timed out", "timeout", "no such host",
	"not found", "unreachable", "cannot", "can't", "unable", "invalid", "could not",
	"flag provided but not defined", "unknown flag", "unrecognized argument", "unrecognized arguments",
	"reset by peer", "broken pipe", "not set", "unbound variable", "must be set",
	"read-only file system", "no such file or directory", "killed", "unhealthy", "out of memory", "oom", "retrying",
	"no route to host", "unexpected eof", "certificate signed by unknown authority",
	"certificate has expired", "refusing", "missing", "rejected", "disconnected", "unknown host",
	"does not exist", "took too long", "deadline exceeded", "will not start", "not configured",
	"at capacity", "not reachable", "unsuccessful", "did not succeed", "not allowed",
	"authentication required", "unrecognized option", "exhausted", "connection dropped",
}

// errnoNames are the POSIX and getaddrinfo error names runtimes print for a failed call
// (Node's ECONNREFUSED, Rust's and glibc's ETIMEDOUT): each is a failure whatever the
// words around it. Matched as whole words, in upper case only.
var errnoNames = []string{
	"ECONNREFUSED", "ECONNRESET", "ECONNABORTED", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH",
	"ENOTFOUND", "EAI_AGAIN", "EACCES", "EPERM", "ENOENT", "EPIPE", "ENOMEM", "EADDRINUSE",
	"EADDRNOTAVAIL", "ENOSPC", "EROFS", "EMFILE",
}

// negations before a failure word say there was none ("0 errors", "no failures").
var negations = []string{"0 ", "no ", "without ", "zero "}

// lineSignal is the verdict on a line whose message readMessage found.
func lineSignal(line string, m *message) Signal {
	if strings.HasPrefix(line, "Request log error:") || strings.HasPrefix(line, "unable to retrieve container logs") {
		// kubectl's and the kubelet's own words for a container that never started: its
		// state says more.
		return Signal{}
	}
	if stackFrame(line) {
		// A frame of a stack trace says where, not what: the exception line above it and
		// its "Caused by:" lines are the failure.
		return Signal{}
	}
	failing := false
	switch {
	case m.format == "access":
		failing = m.status >= 400
	case m.level == LevelDebug:
		// Debug output narrates what the program tries; it is not its verdict.
	case m.level == LevelError:
		// A line that ends in a colon announces the lines below it (Spring Boot's
		// LoggingFailureAnalysisReporter writes "ERROR ... :" and its analysis after):
		// those say the failure, its own level does not.
		failing = !strings.HasSuffix(strings.TrimSpace(m.says), ":") || saysFailure(m.says)
	default:
		failing = saysFailure(m.says)
	}
	if !failing {
		return Signal{}
	}
	sev := SeverityWarning
	switch m.level {
	case LevelError:
		sev = SeverityError
	case LevelInfo:
		sev = SeverityInfo
	}
	if m.format == "access" && m.status >= 500 {
		sev = SeverityError
	}
	text := m.shown
	if text == "" {
		text = m.says
	}
	return Signal{Failing: true, Severity: sev, Class: ClassOf(m.says), Key: Key(m.says), Text: text}
}

// stackFrame reports a line of a stack trace that names a place in the code: Java's "\tat
// pkg.Class.method(File.java:12)" and "... 42 common frames omitted", Python's '  File
// "x.py", line 3, in f', Go's "\t/src/x.go:12 +0x1d" and "main.f(...)".
func stackFrame(line string) bool {
	t := strings.TrimLeft(line, " \t")
	switch {
	case strings.HasPrefix(t, "at ") && strings.HasSuffix(strings.TrimSpace(strings.SplitN(t, "~", 2)[0]), ")"):
		return true
	case strings.HasPrefix(t, "... ") && (strings.HasSuffix(t, " more") || strings.HasSuffix(t, "frames omitted")):
		return true
	case strings.HasPrefix(t, `File "`) && strings.Contains(t, `", line `):
		return true
	case len(t) < len(line) && strings.HasPrefix(t, "/") && strings.Contains(t, ".go:"):
		return true
	case pythonTraceHeads[t]:
		return true
	}
	return false
}

// pythonTraceHeads are the lines with which Python announces a traceback and chains one to
// another: the exception line at its end says what failed.
var pythonTraceHeads = map[string]bool{
	"Traceback (most recent call last):":                                   true,
	"During handling of the above exception, another exception occurred:":  true,
	"The above exception was the direct cause of the following exception:": true,
}

func saysFailure(msg string) bool {
	lower := strings.ToLower(msg)
	for _, p := range failurePhrases {
		for from := 0; ; {
			i := strings.Index(lower[from:], p)
			if i < 0 {
				break
			}
			i += from
			from = i + 1
			if wholeWord(lower, i, i+len(p)) && !negated(lower, i) {
				return true
			}
		}
	}
	for _, n := range errnoNames {
		if i := strings.Index(msg, n); i >= 0 && wholeWord(msg, i, i+len(n)) {
			return true
		}
	}
	return wordFailure(msg)
}

// wholeWord reports whether s[i:j] stands as a word (or words) of its own.
func wholeWord(s string, i, j int) bool {
	if i > 0 && isWordByte(s[i-1]) {
		return false
	}
	if last := s[j-1]; !isWordByte(last) {
		// A phrase that ends in punctuation ("errors:") ends there.
		return true
	}
	return j == len(s) || !isWordByte(s[j])
}

func isWordByte(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' }

// negated reports whether the word at lower[i] follows a word that says there was none.
func negated(lower string, i int) bool {
	for _, n := range negations {
		if i >= len(n) && lower[i-len(n):i] == n && (i == len(n) || !isWordByte(lower[i-len(n)-1])) {
			return true
		}
	}
	return false
}

// wordFailure reports a word that names an error or exception by its ending (IOError,
// ConnectionRefusedError, java.net.ConnectException), which the phrases cannot list.
func wordFailure(msg string) bool {
	for i := 0; i < len(msg); {
		for i < len(msg) && !isLetter(msg[i]) {
			i++
		}
		j := i
		for j < len(msg) && isLetter(msg[j]) {
			j++
		}
		w := msg[i:j]
		if len(w) > 5 && (strings.HasSuffix(w, "Error") || strings.HasSuffix(w, "ERROR") || strings.HasSuffix(w, "Exception") || strings.HasSuffix(w, "EXCEPTION")) {
			return true
		}
		i = j
	}
	return false
}

// Key is what a failure message says without its variable parts: words lowercased, a word
// holding a digit as #, a field's name (the word before '=') left out, punctuation as one
// space. One failure logged by five copies, at two levels, as JSON or as text, has one key.
func Key(msg string) string {
	var b strings.Builder
	b.Grow(len(msg))
	hash := false
	for i := 0; i < len(msg); {
		if !isWordByte(msg[i]) {
			i++
			continue
		}
		j, digit := i, false
		for j < len(msg) && isWordByte(msg[j]) {
			digit = digit || isDigit(msg[j])
			j++
		}
		w := msg[i:j]
		i = j
		if j < len(msg) && msg[j] == '=' {
			// A field's name: the same failure written as text may not name its fields.
			continue
		}
		if digit {
			if hash {
				continue
			}
			w, hash = "#", true
		} else {
			hash = false
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		for k := range len(w) {
			c := w[k]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
		}
	}
	return b.String()
}

func sortStrings(s []string) { sort.Strings(s) }

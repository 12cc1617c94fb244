package metamorph

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// ErrNotApplicable is wrapped by the error a transformation returns when the snapshot gives it
// nothing to change, or nothing it could change faithfully; the error says which.
var ErrNotApplicable = errors.New("not applicable")

func notApplicable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotApplicable, fmt.Sprintf(format, args...))
}

// WithoutLogs returns a copy of s with no log tail at all, as a source that could not read
// pods/log (rotated, forbidden, the kubelet unreachable) produces.
func WithoutLogs(s *snapshot.Snapshot) (*snapshot.Snapshot, error) {
	if len(s.Logs) == 0 {
		return nil, notApplicable("the snapshot holds no log tail")
	}
	c := Clone(s)
	c.Logs = nil
	return c, nil
}

// mapLines returns a copy of s with every log line passed through f; it is not applicable when
// f changes none.
func mapLines(s *snapshot.Snapshot, what string, f func(string) string) (*snapshot.Snapshot, error) {
	c := Clone(s)
	changed := 0
	for i := range c.Logs {
		for j, line := range c.Logs[i].Lines {
			if out := f(line); out != line {
				c.Logs[i].Lines[j] = out
				changed++
			}
		}
	}
	if changed == 0 {
		return nil, notApplicable("no log line %s", what)
	}
	return c, nil
}

// Relevel returns a copy of s in which every failing line that carries a level (warn, error or
// fatal, in a JSON, logfmt or plain line) carries level instead: "error", "warn", or "" for no
// level at all. The words of the line stay: a level alone says nothing about what failed.
func Relevel(s *snapshot.Snapshot, level string) (*snapshot.Snapshot, error) {
	return mapLines(s, "has a failing level to change to "+strings.TrimSpace(level+" (none)"), func(line string) string {
		if !mayHaveFailingLevel(line) {
			return line
		}
		r := parseLine(line)
		if r.format == unstructured || !failingLevel(r.levelName()) {
			return line
		}
		return r.withLevel(level).render()
	})
}

// rewordings are meaning-preserving rewordings of failure words, as other runtimes and
// libraries write the same failure (Go, glibc, Node, Rust, POSIX errno names). Each phrase
// has two synonyms, one per variant; a line is rewritten in one pass, so a synonym is never
// rewritten again.
var rewordings = []struct {
	phrase   string
	synonyms [2]string
}{
	// Variant 0 writes errno names and library wordings; variant 1 plain prose that shares no
	// word with the phrase it replaces.
	{"connection refused", [2]string{"ECONNREFUSED", "connection rejected"}},
	{"connection reset by peer", [2]string{"ECONNRESET", "connection closed by the peer"}},
	{"connection lost", [2]string{"disconnected", "connection dropped"}},
	{"no such host", [2]string{"getaddrinfo ENOTFOUND", "unknown host"}},
	{"no such file or directory", [2]string{"ENOENT", "file does not exist"}},
	{"context deadline exceeded", [2]string{"ETIMEDOUT", "took too long"}},
	{"timed out", [2]string{"ETIMEDOUT", "took too long"}},
	{"timeout", [2]string{"ETIMEDOUT", "deadline passed"}},
	{"refusing to start", [2]string{"cannot start", "will not start"}},
	{"missing credential", [2]string{"no credential configured", "credential not set"}},
	{"queue full", [2]string{"buffer full", "queue at capacity"}},
	{"unavailable", [2]string{"down", "not reachable"}},
	{"failed", [2]string{"did not succeed", "unsuccessful"}},
	{"permission denied", [2]string{"EACCES", "not allowed"}},
	{"unauthorized", [2]string{"HTTP 401", "authentication required"}},
	{"flag provided but not defined", [2]string{"unrecognized option", "unknown flag"}},
	{"out of memory", [2]string{"cannot allocate memory", "memory exhausted"}},
}

// rewordPattern matches every phrase, longest first, as whole words in any case.
var rewordPattern = func() *regexp.Regexp {
	phrases := make([]string, len(rewordings))
	for i, r := range rewordings {
		phrases[i] = regexp.QuoteMeta(r.phrase)
	}
	// Longest first, so "connection refused" wins over a shorter phrase at the same place.
	for i := range phrases {
		for j := i + 1; j < len(phrases); j++ {
			if len(phrases[j]) > len(phrases[i]) {
				phrases[i], phrases[j] = phrases[j], phrases[i]
			}
		}
	}
	return regexp.MustCompile(`(?i)\b(?:` + strings.Join(phrases, "|") + `)\b`)
}()

// failingLevelWords are in every line whose level is warn or worse, in any of the forms
// parseLine reads (pino's numbers among them); most lines have none and are done at once.
var failingLevelWords = []string{"warn", "err", "fatal", "crit", "panic", `"level":4`, `"level":5`, `"level":6`}

func mayHaveFailingLevel(line string) bool {
	return containsAny(strings.ToLower(line), failingLevelWords)
}

// failurePhrases are the rewordings table's phrases, for a quick look before a line is read.
var failurePhrases = func() []string {
	out := make([]string, len(rewordings))
	for i, r := range rewordings {
		out[i] = r.phrase
	}
	return out
}()

func mayReword(line string) bool {
	return containsAny(strings.ToLower(line), failurePhrases)
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func reword(text string, variant int) string {
	return rewordPattern.ReplaceAllStringFunc(text, func(m string) string {
		for _, r := range rewordings {
			if strings.EqualFold(r.phrase, m) {
				return r.synonyms[variant%2]
			}
		}
		return m
	})
}

// Reword returns a copy of s in which the failure words of every application log line are
// replaced by a synonym from the rewordings table (variant 0 or 1 picks which): in a JSON or
// logfmt line the values but for time and level, in a plain line the text after its level.
// Keys, times and kubectl's own lines stay.
func Reword(s *snapshot.Snapshot, variant int) (*snapshot.Snapshot, error) {
	return mapLines(s, "holds a failure word of the rewordings table", func(line string) string {
		if kubectlLine(line) || !mayReword(line) {
			return line
		}
		r := parseLine(line)
		switch r.format {
		case jsonLine, logfmtLine:
			ps := append([]pair(nil), r.pairs...)
			skipT, skipL := findKey(ps, timeKeys), findKey(ps, levelKeys)
			for i := range ps {
				if i != skipT && i != skipL && !ps[i].raw {
					ps[i].value = reword(ps[i].value, variant)
				}
			}
			r.pairs = ps
			return r.render()
		case plainLine:
			r.post = reword(r.post, variant)
			return r.render()
		}
		return reword(line, variant)
	})
}

// Encoding is a log line format Reencode writes.
type Encoding int

// The encodings.
const (
	JSON Encoding = iota
	Logfmt
	Plain
)

func (e Encoding) String() string { return [...]string{"json", "logfmt", "plain"}[e] }

// Reencode returns a copy of s in which every structured application log line (JSON, logfmt,
// or plain with a stamp or a level) is written in enc, keeping its time, level, message and
// fields: JSON with ts, level and msg first; logfmt likewise; plain as stamp, level in
// capitals, message and the fields as logfmt pairs. Times are written in RFC 3339 with
// milliseconds. Unstructured lines stay as they are, as a program's stray output does whatever
// its logger writes.
func Reencode(s *snapshot.Snapshot, enc Encoding) (*snapshot.Snapshot, error) {
	f := [...]lineFormat{jsonLine, logfmtLine, plainLine}[enc]
	return mapLines(s, "is structured to re-encode as "+enc.String(), func(line string) string {
		e, ok := parseLine(line).entry()
		if !ok {
			return line
		}
		return e.encode(f)
	})
}

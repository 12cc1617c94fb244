package dump

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// The markers kubectl cluster-info dump writes around each container's log; previousSuffix marks
// this package's own block for a previous instance's log.
const (
	startMarker    = "==== START logs for container "
	previousSuffix = " (previous)"
)

var startLine = regexp.MustCompile(`^==== START logs for container (\S+) of pod ([^/\s]+)/(\S+?)( \(previous\))? ====\r?$`)

func endMarker(l *snapshot.ContainerLog) string {
	prev := ""
	if l.Previous {
		prev = previousSuffix
	}
	return fmt.Sprintf("==== END logs for container %s of pod %s/%s%s ====", l.Container, l.Namespace, l.Pod, prev)
}

func startMarkerFor(l *snapshot.ContainerLog) string {
	prev := ""
	if l.Previous {
		prev = previousSuffix
	}
	return fmt.Sprintf("==== START logs for container %s of pod %s/%s%s ====", l.Container, l.Namespace, l.Pod, prev)
}

// extractLogs finds the log blocks in data and returns them with a copy of data in which every
// byte of those blocks except newlines is a space, so that what remains parses as JSON or YAML
// with its line numbers and offsets unchanged. data is returned as is when it holds no block.
func extractLogs(data []byte) ([]snapshot.ContainerLog, []byte, error) {
	if !bytes.Contains(data, []byte(startMarker)) {
		return nil, data, nil
	}
	var logs []snapshot.ContainerLog
	out := data
	copied := false
	line := 1
	for pos := 0; pos < len(data); {
		eol := bytes.IndexByte(data[pos:], '\n')
		next := len(data)
		if eol >= 0 {
			next = pos + eol + 1
		}
		text := data[pos:next]
		var m [][]byte
		if bytes.HasPrefix(text, []byte(startMarker)) {
			m = startLine.FindSubmatch(bytes.TrimRight(text, "\n"))
		}
		if m == nil {
			line++
			pos = next
			continue
		}
		l := snapshot.ContainerLog{
			Container: string(m[1]), Namespace: string(m[2]), Pod: string(m[3]),
			Previous: len(m[4]) > 0,
		}
		content, blockEnd, ok := findEnd(data, next, []byte(endMarker(&l)))
		if !ok {
			return nil, nil, fmt.Errorf("line %d: log block of container %s of pod %s/%s has no END line; the file is truncated",
				line, l.Container, l.Namespace, l.Pod)
		}
		l.Lines = splitLines(content)
		logs = append(logs, l)
		if !copied {
			out = bytes.Clone(data)
			copied = true
		}
		for j := pos; j < blockEnd; j++ {
			if out[j] != '\n' {
				out[j] = ' '
			}
		}
		line += bytes.Count(data[pos:blockEnd], []byte("\n"))
		pos = blockEnd
	}
	return logs, out, nil
}

// findEnd finds the END marker of a block whose content starts at from. The marker ends its line;
// the same text with more after it on the line is log content.
func findEnd(data []byte, from int, end []byte) (content []byte, blockEnd int, ok bool) {
	for at := from; at <= len(data); {
		i := bytes.Index(data[at:], end)
		if i < 0 {
			return nil, 0, false
		}
		e := at + i + len(end)
		for e < len(data) && data[e] == '\r' {
			e++
		}
		if e == len(data) || data[e] == '\n' {
			return data[from : at+i], e, true
		}
		at += i + 1
	}
	return nil, 0, false
}

// splitLines turns a block's content into lines. kubectl copies the log verbatim, so the last line
// may lack its newline; an empty block has no lines.
func splitLines(content []byte) []string {
	if len(content) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(content), "\n")
	return strings.Split(s, "\n")
}

// writeLog writes one block in the format extractLogs reads.
func writeLog(w io.Writer, l *snapshot.ContainerLog) error {
	var b strings.Builder
	b.WriteString(startMarkerFor(l))
	b.WriteByte('\n')
	for _, line := range l.Lines {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteString(endMarker(l))
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

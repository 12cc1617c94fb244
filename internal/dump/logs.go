package dump

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// The markers kubectl cluster-info dump writes around each container's log; previousSuffix marks
// this package's own block for a previous instance's log.
const (
	startMarker    = "==== START logs for container "
	endMarkerStart = "==== END logs for container "
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

// writtenMarker follows a line of a container's log that reads as a block's START or END line,
// so that what a container prints cannot end its own block and open another pod's on reading.
const writtenMarker = " [kubectl-diagnose: a marker line the container wrote]"

// neutral returns line as it is written inside a block: a line that holds a marker gets
// writtenMarker after it. A block ends at a line that ends with its END marker, and a START
// line is one whole line, so text after the marker undoes both.
func neutral(line string) string {
	if strings.Contains(line, endMarkerStart) || strings.Contains(line, startMarker) {
		return line + writtenMarker
	}
	return line
}

// writeLog writes one block in the format extractLogs reads.
func writeLog(w io.Writer, l *snapshot.ContainerLog) error {
	var b strings.Builder
	b.WriteString(startMarkerFor(l))
	b.WriteByte('\n')
	for _, line := range l.Lines {
		b.WriteString(neutral(line))
		b.WriteByte('\n')
	}
	b.WriteString(endMarker(l))
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// podDir is the pod whose directory a logs.txt is in, in the layout of kubectl cluster-info dump
// --output-directory (NS/POD/logs.txt), which Write follows too.
type podDir struct{ namespace, pod string }

// podDirOf returns the pod whose directory holds the file rel (relative to the dump's root);
// ok is false for a file not in that layout.
func podDirOf(rel string) (podDir, bool) {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	n := len(parts)
	if n < 3 || parts[n-1] != "logs.txt" {
		return podDir{}, false
	}
	return podDir{namespace: parts[n-3], pod: parts[n-2]}, true
}

// logNotes collects the log blocks a read doubts: blocks in another pod's logs.txt (a
// container that printed marker lines can forge them) and second blocks of one container.
// Each kind is one note, naming the first, so a hostile dump cannot flood the warnings.
type logNotes struct {
	foreign, twice           int
	firstForeign, firstTwice string
}

func (n *logNotes) addForeign(file string, l *snapshot.ContainerLog, dir podDir) {
	if n.foreign == 0 {
		n.firstForeign = fmt.Sprintf("%q holds a block of %s, not of pod %s/%s whose directory it is in",
			file, logName(l), dir.namespace, dir.pod)
	}
	n.foreign++
}

func (n *logNotes) addTwice(l *snapshot.ContainerLog, first, second string) {
	if n.twice == 0 {
		where := fmt.Sprintf("in %q, then in %q", first, second)
		if first == second {
			where = fmt.Sprintf("both in %q", first)
		}
		n.firstTwice = fmt.Sprintf("the log of %s is in the dump twice (%s); the first block is read", logName(l), where)
	}
	n.twice++
}

// foreignRead says what becomes of a block in another pod's logs.txt.
const foreignRead = "such a block is read only when the pod's own logs.txt has none for its container"

func (n *logNotes) notes() []snapshot.Visibility {
	var out []snapshot.Visibility
	switch n.foreign {
	case 0:
	case 1:
		out = append(out, snapshot.Visibility{Kind: "pods/log", Reason: n.firstForeign + "; " + foreignRead})
	default:
		out = append(out, snapshot.Visibility{Kind: "pods/log", Reason: fmt.Sprintf(
			"%d log blocks are in another pod's logs.txt (%s); %s", n.foreign, n.firstForeign, foreignRead)})
	}
	switch n.twice {
	case 0:
	case 1:
		out = append(out, snapshot.Visibility{Kind: "pods/log", Reason: n.firstTwice})
	default:
		out = append(out, snapshot.Visibility{Kind: "pods/log", Reason: fmt.Sprintf(
			"%d container logs are in the dump more than once; the first block of each is read (%s)", n.twice, n.firstTwice)})
	}
	return out
}

// logName names a block's container as the notes do.
func logName(l *snapshot.ContainerLog) string {
	prev := ""
	if l.Previous {
		prev = previousSuffix
	}
	return fmt.Sprintf("container %s of pod %s/%s%s", l.Container, l.Namespace, l.Pod, prev)
}

package dump

import (
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

package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/redact"
)

// logTailLines is how much of each container's log the Logs tab shows.
const logTailLines = 200

// tailKey names one container's log tail in a copy: its current or previous instance.
type tailKey struct {
	pod, container string
	previous       bool
}

// citedLines are the log lines a diagnosis cites: those its evidence items and suspects name
// (Evidence.Observations and Suspect.Observations, indexes into Detail.Observations), by tail,
// as indexes into the tail's lines.
//
// The engine observes a tail's lines in order, one observation each, so a line's index is how
// far its observation is from its tail's first; the line's text is checked against the
// snapshot's, and a line not found there is looked for by its text.
func (ds *dataset) citedLines(d *diagnose.Diagnosis) map[tailKey]map[int]bool {
	if d.Detail == nil {
		return nil
	}
	var idx []int32
	for _, e := range d.Evidence {
		idx = append(idx, e.Observations...)
	}
	for _, s := range d.Suspects {
		idx = append(idx, s.Observations...)
	}
	if len(idx) == 0 {
		return nil
	}
	obs := d.Detail.Observations()
	sameTail := func(a, b *diagnose.Observation) bool {
		return a.Kind == diagnose.ObsLogLine && a.Object != nil && a.Object.Name == b.Object.Name &&
			a.Container() == b.Container() && a.Last == b.Last
	}
	// first remembers each tail's first observation: most cited lines share a few tails.
	first := map[tailKey]int{}
	out := map[tailKey]map[int]bool{}
	for _, i := range idx {
		if int(i) < 0 || int(i) >= len(obs) {
			continue
		}
		o := &obs[i]
		if o.Kind != diagnose.ObsLogLine || o.Object == nil {
			continue
		}
		k := tailKey{o.Object.Name, o.Container(), o.Last}
		start, ok := first[k]
		if !ok || start > int(i) || !sameTail(&obs[start], o) {
			start = int(i)
			for start > 0 && sameTail(&obs[start-1], o) {
				start--
			}
			first[k] = start
		}
		l := ds.snap.Log(d.Namespace, k.pod, k.container, k.previous)
		if l == nil {
			continue
		}
		if out[k] == nil {
			out[k] = map[int]bool{}
		}
		if at := int(i) - start; at < len(l.Lines) && l.Lines[at] == o.Text {
			out[k][at] = true
			continue
		}
		for j, line := range l.Lines {
			if line == o.Text {
				out[k][j] = true
			}
		}
	}
	return out
}

// logsLines is the Logs tab: the tails of the copies' containers, worst copy first, the previous
// (crashed) instance before the current one, the lines the diagnosis cites marked ▶. Wrapped,
// a line breaks between words onto indented lines; unwrapped, it stays whole and the tab
// scrolls sideways.
func (ds *dataset) logsLines(st Styles, sc *redact.Scope, pods []*corev1.Pod, cited map[tailKey]map[int]bool, width int, wrapped bool) []paneLine {
	var out []paneLine
	const gutter = 2
	marked := false
	for _, p := range pods {
		names := make([]string, 0, len(p.Spec.InitContainers)+len(p.Spec.Containers))
		for _, c := range p.Spec.InitContainers {
			names = append(names, c.Name)
		}
		for _, c := range p.Spec.Containers {
			names = append(names, c.Name)
		}
		for _, c := range names {
			for _, prev := range []bool{true, false} {
				l := ds.snap.Log(p.Namespace, p.Name, c, prev)
				if l == nil {
					continue
				}
				title := "── " + Sanitize(p.Name) + "/" + Sanitize(c)
				if prev {
					title += " (previous instance)"
				}
				out = append(out, fixedLine(st.Title.Render(ansi.Truncate(title+" ──", width, "…"))))
				// Hidden line by line: the cited marks index the lines as the snapshot has them.
				lines := sc.Lines(l.Lines)
				from := max(len(lines)-logTailLines, 0)
				if len(lines) == 0 {
					out = append(out, fixedLine(st.Dim.Render("(empty)")))
				}
				marks := cited[tailKey{p.Name, c, prev}]
				for i := from; i < len(lines); i++ {
					mark := "  "
					if marks[i] {
						mark, marked = st.Mark.Render("▶")+" ", true
					}
					for _, s := range SanitizeLines(lines[i]) {
						if !wrapped {
							out = append(out, paneLine{gutter: mark, body: s})
						} else {
							// The telling part of a line (the error, the address) is often at
							// its end: wrapped, nothing is cut.
							for j, piece := range wordWrap(s, width-gutter, width-gutter-2) {
								if j == 0 {
									out = append(out, paneLine{gutter: mark, body: piece, fixed: true})
								} else {
									out = append(out, paneLine{gutter: "  ", body: "  " + piece, fixed: true, continued: true})
								}
							}
						}
						mark = "  "
					}
				}
				out = append(out, fixedLine(""))
			}
		}
	}
	if len(out) == 0 {
		return []paneLine{fixedLine(st.Dim.Render("no logs in the snapshot"))}
	}
	if marked {
		out = append([]paneLine{fixedLine(st.Dim.Render(ansi.Truncate("▶ the lines the diagnosis cites as evidence", width, "…")))}, out...)
	}
	return out
}

// wordWrap breaks s into lines of at most first cells, then at most rest cells, between words:
// after a space or a comma (a JSON log line has few spaces and many commas). A word longer
// than a line is broken where the line ends.
func wordWrap(s string, first, rest int) []string { return wordWrapAt(s, first, rest, " ,") }

// wordWrapAt is wordWrap breaking after any of breaks; a space is always one.
func wordWrapAt(s string, first, rest int, breaks string) []string {
	first, rest = max(first, 1), max(rest, 1)
	if ansi.StringWidth(s) <= first {
		return []string{s}
	}
	var out []string
	limit := first
	var line strings.Builder
	lineW := 0
	flush := func() {
		out = append(out, strings.TrimRight(line.String(), " "))
		line.Reset()
		lineW = 0
		limit = rest
	}
	for _, w := range words(s, breaks) {
		ww := ansi.StringWidth(w)
		// A space that ends a line is not carried to the next.
		trimmed := ansi.StringWidth(strings.TrimRight(w, " "))
		if lineW > 0 && lineW+trimmed > limit {
			flush()
			w = strings.TrimLeft(w, " ")
			ww = ansi.StringWidth(w)
		}
		for ww > limit && lineW == 0 {
			head := ansi.Truncate(w, limit, "")
			out = append(out, head)
			limit = rest
			w = strings.TrimPrefix(w, head)
			ww = ansi.StringWidth(w)
		}
		if lineW == 0 {
			w = strings.TrimLeft(w, " ")
			ww = ansi.StringWidth(w)
		}
		line.WriteString(w)
		lineW += ww
	}
	if lineW > 0 {
		flush()
	}
	return out
}

// words splits s after each space and each of breaks, keeping them: the pieces join back
// into s.
func words(s, breaks string) []string {
	var out []string
	start := 0
	for i, r := range s {
		if r == ' ' || strings.ContainsRune(breaks, r) {
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

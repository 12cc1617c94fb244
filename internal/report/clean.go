package report

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Clean makes text from a cluster safe to write to a terminal or a one-line cell: escape
// sequences are removed, tabs and line breaks become one space, and every other C0 or C1 control
// character, DEL, bytes that are not UTF-8, and the Unicode bidirectional embeddings, overrides and isolates (which can
// reorder what a person reads) are dropped. The console and the printers both clean through it,
// so a name reads the same in either.
func Clean(s string) string {
	return CleanTabs(s, 1)
}

// CleanTabs is Clean with each tab widened to tab spaces, for panes where a log line's
// indentation helps the reader.
func CleanTabs(s string, tab int) string {
	if isPlain(s) {
		return s
	}
	// ansi.Strip parses escape sequences as a terminal does (CSI, OSC up to BEL or ST, DCS,
	// charset designations), so no parameter bytes survive as text.
	s = ansi.Strip(s)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteString(strings.Repeat(" ", max(tab, 1)))
		case r == '\n' || r == '\r':
			b.WriteByte(' ')
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
			// C0 and C1 controls, DEL: dropped.
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			// Bidi embeddings, overrides and isolates.
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// CleanLines splits text on line breaks and cleans each line as CleanTabs does.
func CleanLines(s string, tab int) []string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = CleanTabs(l, tab)
	}
	return lines
}

// isPlain reports whether s is printable ASCII, the common case, which needs no copy.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

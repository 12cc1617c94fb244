package tui

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Sanitize makes a string from the cluster safe to draw on one line: escape sequences are
// removed, tabs become spaces, and every other C0 or C1 control character, DEL, and the Unicode
// bidirectional overrides (which can reorder what a person reads) are dropped. Line breaks become
// spaces; callers split multi-line text first when lines matter.
func Sanitize(s string) string {
	if isPlain(s) {
		return s
	}
	s = ansi.Strip(s)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			b.WriteRune('\uFFFD')
		case r == '\t':
			b.WriteString("    ")
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

// SanitizeLines splits text on line breaks and sanitizes each line.
func SanitizeLines(s string) []string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = Sanitize(l)
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

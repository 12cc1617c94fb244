package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// invisible reports whether r is a character a terminal draws as nothing or uses to rearrange
// what follows: controls (C0, DEL, C1), format characters (bidi overrides and isolates,
// zero-width spaces and joiners, the byte order mark, tag characters) and the Unicode line and
// paragraph separators. `cat report.json` must show such a character as an escape, not obey it.
func invisible(r rune) bool {
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' ||
		noncharacter(r)
}

// noncharacter reports whether r is one of the code points Unicode reserves never to assign
// (U+FDD0..U+FDEF and the last two of every plane), which terminals draw as nothing or a box.
func noncharacter(r rune) bool {
	return r >= 0xfdd0 && r <= 0xfdef || r&0xfffe == 0xfffe
}

// escapeJSON rewrites the invisible characters encoding/json leaves raw in its output (DEL and
// the invisible characters past ASCII) as \u escapes, surrogate pairs above the BMP. The output is the same JSON value: such characters
// only occur inside strings, where an escape means the character itself.
func escapeJSON(in []byte) []byte {
	if !hasInvisible(in) {
		return in
	}
	out := make([]byte, 0, len(in)+16)
	for len(in) > 0 {
		r, size := utf8.DecodeRune(in)
		switch {
		case r < utf8.RuneSelf && r != 0x7f, r >= utf8.RuneSelf && !invisible(r):
			out = append(out, in[:size]...)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		in = in[size:]
	}
	return out
}

// hasInvisible reports whether b holds a raw invisible character other than ASCII controls,
// which encoding/json has already escaped.
func hasInvisible(b []byte) bool {
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == 0x7f || (r >= utf8.RuneSelf && invisible(r)) {
			return true
		}
		b = b[size:]
	}
	return false
}

// yamlMark stands for an invisible character on its way through the YAML encoder. The encoder
// writes a non-printable character such as U+FFFE as an escape in a double-quoted string, but
// writes U+202E and most other format characters raw; so each invisible character (U+FFFE
// among them) becomes U+FFFE plus its code point in six hex digits, and the escapes of the
// marks are rewritten into escapes of the characters afterwards.
const yamlMark = '\ufffe'

var yamlMarkEscape = regexp.MustCompile(`\\uFFFE([0-9A-F]{6})`)

// markInvisibleJSON replaces, in JSON text, the invisible characters the YAML encoder would
// write raw (format characters, and U+2028 and U+2029, which encoding/json escapes) by their
// marks, and C1 controls too: the encoder writes U+0085 as "\N", which its own decoder reads
// back as a line break. C0 controls and DEL it escapes itself ("\e", "\x7F"); DEL, which
// encoding/json leaves raw, goes in escaped.
func markInvisibleJSON(in []byte) ([]byte, bool) {
	marked := false
	var out bytes.Buffer
	out.Grow(len(in))
	mark := func(r rune) {
		marked = true
		fmt.Fprintf(&out, `\u%04x%06X`, yamlMark, r)
	}
	for i := 0; i < len(in); {
		if in[i] == '\\' && i+1 < len(in) {
			if in[i+1] == 'u' && i+6 <= len(in) {
				if v, err := strconv.ParseUint(string(in[i+2:i+6]), 16, 32); err == nil && markable(rune(v)) {
					mark(rune(v))
					i += 6
					continue
				}
				out.Write(in[i : i+6])
				i += 6
				continue
			}
			out.Write(in[i : i+2])
			i += 2
			continue
		}
		r, size := utf8.DecodeRune(in[i:])
		switch {
		case markable(r):
			mark(r)
		case r == 0x7f:
			// encoding/json writes DEL raw, and the YAML decoder refuses it raw in its input;
			// escaped, the encoder writes it as an escape of its own.
			out.WriteString(`\u007f`)
		default:
			out.Write(in[i : i+size])
		}
		i += size
	}
	return out.Bytes(), marked
}

// markable reports whether r must go through the YAML encoder as a mark; the mark itself is a
// noncharacter, so marked too.
func markable(r rune) bool {
	return r >= utf8.RuneSelf && !utf16.IsSurrogate(r) && invisible(r)
}

// unmarkYAML turns the encoder's escapes of marks into YAML escapes of the characters.
func unmarkYAML(in []byte) []byte {
	return yamlMarkEscape.ReplaceAllFunc(in, func(m []byte) []byte {
		v, _ := strconv.ParseUint(string(m[len(m)-6:]), 16, 32) // six hex digits by the pattern
		if v > 0xffff {
			return fmt.Appendf(nil, `\U%08X`, v)
		}
		return fmt.Appendf(nil, `\u%04X`, v)
	})
}

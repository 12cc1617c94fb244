package report

// indentJSON indents compact JSON as json.Indent(dst, src, "", "  ") does. encoding/json's
// Encoder with SetIndent marshals compact and then re-reads the whole document through its
// validating scanner to indent it, which cost four times the marshalling itself on a fleet's
// report list. src here is what encoding/json has just marshalled, valid by construction, so
// only strings need tracking; TestIndentJSONIsJSONIndent holds the two to the same bytes.
func indentJSON(src []byte) []byte {
	dst := make([]byte, 0, len(src)+len(src)/2)
	depth := 0
	newline := func() {
		dst = append(dst, '\n')
		for range depth {
			dst = append(dst, ' ', ' ')
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '"':
			// Copy the string whole: up to its closing quote, past escaped characters.
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j, len(src)-1)
			dst = append(dst, src[i:j+1]...)
			i = j
		case '{', '[':
			dst = append(dst, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				// json.Indent writes an empty object or array on one line.
				dst = append(dst, src[i+1])
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

package diagnose

import "strings"

// shellQuote quotes a name for a suggested command, as POSIX sh reads it: a name the API server
// accepts is left as it is, and anything else (a hand-made dump's "api;curl x|sh") is one
// single-quoted word, so that a command copied and pasted runs nothing but kubectl.
func shellQuote(s string) string {
	safe := s != ""
	for i := 0; i < len(s) && safe; i++ {
		c := s[i]
		safe = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._/:@%+=,", c) >= 0
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

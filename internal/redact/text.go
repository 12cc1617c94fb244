package redact

import (
	"sort"
	"strings"
)

// span is a value found in a text, [start, end).
type span struct{ start, end int }

// Text hides the credentials free text shows by its own form: a URL's password
// (scheme://user:PASSWORD@host, as url.URL.Redacted hides it), an Authorization header's
// credentials, a bearer token, and the value of a pair whose key is a credential's name
// (password=..., --db-password=..., "apiKey":"...", Password:...). It is what a log line, an
// event message or an argument is passed through.
func (r *Redactor) Text(s string) string { return r.text(s, nil) }

// text is Text that also hides every occurrence of the known values (longest first).
func (r *Redactor) text(s string, known []string) string {
	if r == nil || s == "" {
		return s
	}
	spans := findSpans(s, nil)
	out := s
	if len(spans) > 0 {
		out = r.replace(s, spans)
	}
	cut := strings.Contains(out, ellipsis)
	for _, k := range known {
		if strings.Contains(out, k) {
			out = strings.ReplaceAll(out, k, r.Mark(k))
		}
		if cut {
			out = r.cutKnown(out, k)
		}
	}
	return out
}

// ellipsis ends a text the engine cut short (a log line quoted in a reason).
const ellipsis = "…"

// minCut is the shortest start of a credential that is hidden where a text was cut after it.
const minCut = 4

// cutKnown hides the start of k where a text was cut right after it: "password is hunt…".
func (r *Redactor) cutKnown(s, k string) string {
	for l := len(k) - 1; l >= minCut; l-- {
		if p := k[:l] + ellipsis; strings.Contains(s, p) {
			return strings.ReplaceAll(s, p, r.Mark(k)+ellipsis)
		}
	}
	return s
}

// replace writes s with each span's text replaced by its mark; spans are sorted and do not
// overlap.
func (r *Redactor) replace(s string, spans []span) string {
	var b strings.Builder
	b.Grow(len(s) + 8*len(spans))
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(r.Mark(s[sp.start:sp.end]))
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// findSpans appends to out the credentials s shows by its own form, sorted, without overlaps.
func findSpans(s string, out []span) []span {
	n := len(out)
	url, words := cues(s)
	if url {
		out = urlPasswords(s, out)
	}
	if words {
		out = pairValues(s, out)
		out = bearerTokens(s, out)
	}
	found := out[n:]
	if len(found) < 2 {
		return out
	}
	sort.Slice(found, func(i, j int) bool { return found[i].start < found[j].start })
	kept := found[:1]
	for _, sp := range found[1:] {
		if last := &kept[len(kept)-1]; sp.start < last.end {
			last.end = max(last.end, sp.end)
			continue
		}
		kept = append(kept, sp)
	}
	return out[:n+len(kept)]
}

// cues says, in one pass over s, whether it may hold a URL's password ("://" and "@") and
// whether it holds any of the words a credential's key or scheme holds (pass, pw, secret,
// token, credential, key, auth, bearer), in any case: most texts hold none, and are left
// at that. A report's texts are megabytes: this runs at several hundred MB/s.
func cues(s string) (url, words bool) {
	scheme, at := false, false
	for i := 0; i < len(s); i++ {
		switch cueOf[s[i]] {
		case 0:
		case cueColon:
			scheme = scheme || i+2 < len(s) && s[i+1] == '/' && s[i+2] == '/'
		case cueAt:
			at = true
		default:
			if !words {
				rest := s[i:]
				switch s[i] | 0x20 {
				case 'p':
					words = hasFold(rest, "pass") || hasFold(rest, "pw")
				case 's':
					words = hasFold(rest, "secret")
				case 't':
					words = hasFold(rest, "token")
				case 'c':
					words = hasFold(rest, "credential")
				case 'k':
					words = hasFold(rest, "key")
				case 'a':
					words = hasFold(rest, "auth")
				case 'b':
					words = hasFold(rest, "bearer")
				}
			}
		}
		if words && scheme && at {
			break
		}
	}
	return scheme && at, words
}

// The bytes cues stops at.
const (
	cueColon = 1 + iota
	cueAt
	cueLetter
)

var cueOf = func() (t [256]uint8) {
	t[':'], t['@'] = cueColon, cueAt
	for _, c := range "pstckab" {
		t[c], t[c-'a'+'A'] = cueLetter, cueLetter
	}
	return t
}()

// hasFold says whether s begins with prefix, an ASCII lower-case word, in any case.
func hasFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if s[i]|0x20 != prefix[i] {
			return false
		}
	}
	return true
}

// urlPasswords finds the password of every scheme://user:password@host in s.
func urlPasswords(s string, out []span) []span {
	for from := 0; ; {
		i := strings.Index(s[from:], "://")
		if i < 0 {
			return out
		}
		i += from
		from = i + 3
		// The scheme: a letter, then letters, digits, + - . (RFC 3986).
		j := i
		for j > 0 && (isAlnum(s[j-1]) || s[j-1] == '+' || s[j-1] == '-' || s[j-1] == '.') {
			j--
		}
		if j == i || !isLower(s[j]|0x20) {
			continue
		}
		end := from
		for end < len(s) && !strings.ContainsRune("/?# \t\r\n\"'<>`", rune(s[end])) {
			end++
		}
		auth := s[from:end]
		at := strings.LastIndexByte(auth, '@')
		if at < 0 {
			continue
		}
		colon := strings.IndexByte(auth[:at], ':')
		if colon < 0 || colon+1 == at || IsMark(auth[colon+1:at]) {
			continue
		}
		out = append(out, span{from + colon + 1, from + at})
		from = from + at
	}
}

// pairValues finds the value of every key=value and key:value pair of s whose key is a
// credential's name, and the credentials of an Authorization header. A key followed by a colon
// and a space is a pair only when the key or the value is quoted, as in JSON (prose reads
// "failed to refresh token: connection refused").
func pairValues(s string, out []span) []span {
	for i := 0; i < len(s); i++ {
		sep := s[i]
		if sep != '=' && sep != ':' {
			continue
		}
		// The key, back from the separator: spaces (around '=' only), a quote, the name.
		ke := i
		if sep == '=' {
			for ke > 0 && s[ke-1] == ' ' {
				ke--
			}
		}
		quotedKey := false
		if ke > 0 && (s[ke-1] == '"' || s[ke-1] == '\'') {
			quotedKey = true
			ke--
			if ke > 0 && s[ke-1] == '\\' {
				ke-- // JSON inside a string: {\"password\":\"...\"}
			}
		}
		ks := ke
		for ks > 0 && (isAlnum(s[ks-1]) || s[ks-1] == '_' || s[ks-1] == '-' || s[ks-1] == '.') {
			ks--
		}
		if ks == ke {
			continue
		}
		key := s[ks:ke]
		authz := strings.EqualFold(strings.TrimLeft(key, "-"), "authorization") || strings.EqualFold(key, "proxy-authorization")
		class := classify(key)
		if class == notCredential && !authz {
			continue
		}
		v := i + 1
		if sep == ':' && v < len(s) && (s[v] == '/' || s[v] == ':') {
			continue // a URL's scheme or an IPv6 address, not a pair
		}
		spaced := false
		for v < len(s) && (s[v] == ' ' || s[v] == '\t') {
			v++
			spaced = true
		}
		if v >= len(s) {
			continue
		}
		vs, ve, quoted := valueAt(s, v)
		if sep == ':' && spaced && !quotedKey && !quoted && !authz {
			continue
		}
		if authz {
			// "Bearer abc", "Basic dXNlcjpw": the scheme stays, the credentials go.
			if sp := strings.IndexByte(s[vs:ve], ' '); sp > 0 && isScheme(s[vs:vs+sp]) {
				vs += sp + 1
			} else if !quoted && isScheme(s[vs:ve]) {
				ws := ve
				for ws < len(s) && s[ws] == ' ' {
					ws++
				}
				if ws > ve && ws < len(s) {
					vs, ve, _ = valueAt(s, ws)
				}
			}
		}
		val := s[vs:ve]
		if val == "" || IsMark(val) || !authz && !hidden(class, val) {
			continue
		}
		out = append(out, span{vs, ve})
		i = ve - 1
	}
	return out
}

// valueAt reads the value that starts at v: up to the matching quote (a backslash-escaped one
// too, as JSON inside a log line has it), else up to a space or punctuation that ends a value.
func valueAt(s string, v int) (start, end int, quoted bool) {
	switch {
	case s[v] == '"' || s[v] == '\'':
		q := s[v]
		end := strings.IndexByte(s[v+1:], q)
		if end < 0 {
			return v + 1, len(s), true
		}
		return v + 1, v + 1 + end, true
	case s[v] == '\\' && v+1 < len(s) && (s[v+1] == '"' || s[v+1] == '\''):
		closing := s[v : v+2]
		end := strings.Index(s[v+2:], closing)
		if end < 0 {
			return v + 2, len(s), true
		}
		return v + 2, v + 2 + end, true
	}
	end = v
	for end < len(s) && !strings.ContainsRune(" \t\r\n,;&\"'<>(){}[]`\\", rune(s[end])) {
		end++
	}
	return v, end, false
}

// isScheme says whether w is an HTTP authentication scheme's name (Bearer, Basic, Token...): a
// word of letters.
func isScheme(w string) bool {
	if w == "" || len(w) > 20 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if !isLower(w[i]) && !isUpper(w[i]) && w[i] != '-' {
			return false
		}
	}
	return true
}

// bearerTokens finds the token after every "Bearer " of s (RFC 6750's b64token) that has at
// least eight characters and a digit: prose says "a bearer token", a token is not a word.
func bearerTokens(s string, out []span) []span {
	for from := 0; ; {
		i := indexFold(s[from:], "bearer")
		if i < 0 {
			return out
		}
		i += from
		from = i + 6
		if i > 0 && isAlnum(s[i-1]) {
			continue
		}
		v := from
		for v < len(s) && (s[v] == ' ' || s[v] == '\t') {
			v++
		}
		if v == from {
			continue
		}
		e, digit := v, false
		for e < len(s) && (isAlnum(s[e]) || strings.IndexByte("-._~+/", s[e]) >= 0) {
			digit = digit || '0' <= s[e] && s[e] <= '9'
			e++
		}
		for e < len(s) && s[e] == '=' {
			e++
		}
		if e-v >= 8 && digit {
			out = append(out, span{v, e})
			from = e
		}
	}
}

// indexFold is strings.Index for an ASCII lower-case sub, in any case.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i]|0x20 == sub[0] && strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

package redact

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Redactor hides credentials in what the tool prints and serves. A nil *Redactor hides
// nothing: it is what --show-secrets gives.
type Redactor struct {
	key []byte
}

// New returns a Redactor whose marks are keyed by 32 random bytes: equal values get equal marks
// for as long as it lives (one command, one serve), and no mark can be checked against a guess.
func New() *Redactor {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read never fails; it crashes the program instead
	return &Redactor{key: key}
}

// For returns New(), or nil (nothing hidden) when show is true.
func For(show bool) *Redactor {
	if show {
		return nil
	}
	return New()
}

// markPrefix starts every mark.
const markPrefix = "[redacted:"

// Mark is what v reads as once redacted: "[redacted:" and four hex digits of an HMAC of v.
func (r *Redactor) Mark(v string) string {
	h := hmac.New(sha256.New, r.key)
	_, _ = h.Write([]byte(v)) // a hash.Hash never fails to write
	sum := h.Sum(nil)
	return markPrefix + hex.EncodeToString(sum[:2]) + "]"
}

// IsMark says whether v begins with a mark: such a value was redacted already.
func IsMark(v string) bool { return strings.HasPrefix(v, markPrefix) }

// nameClass says how strongly a name says its value is a credential.
type nameClass uint8

const (
	notCredential nameClass = iota
	// weakCredential: a word that names credentials among other things (KEY, AUTH): its value
	// is a credential unless it is a setting or an address.
	weakCredential
	// strongCredential: PASSWORD, SECRET, TOKEN...: its value is a credential, whatever it is.
	strongCredential
)

// strongParts make a name a credential's wherever they appear in it, in any case:
// DB_PASSWORD, dbPassword, --db-passwd, client_secret, GITHUB_TOKEN, accessToken.
var strongParts = [][]byte{
	[]byte("password"), []byte("passwd"), []byte("passphrase"), []byte("secret"),
	[]byte("token"), []byte("credential"),
}

// strongWords make a name a credential's when they are one of its words: DB_PASS, REDIS_PWD.
// As parts they would match too much (PASSENGER, PATHWAY).
var strongWords = [][]byte{[]byte("pass"), []byte("pwd"), []byte("pw")}

// classify says whether an env var, flag or field of this name holds a credential, and how
// surely: a name with PASSWORD, PASSWD, PASSPHRASE, SECRET, TOKEN or CREDENTIAL in it, in any
// case; one with a word PASS, PWD or PW; or one with a word ending in KEY or beginning with AUTH
// (API_KEY, accessKey, AWS_SECRET_ACCESS_KEY, SSHKEY, AUTH_HEADER, authorization), except the
// bare words KEY and AUTH, which name too many other things. Words are split at anything not a
// letter or digit and where a lower-case letter meets an upper-case one.
func classify(name string) nameClass {
	if name == "" || len(name) > 256 {
		return notCredential
	}
	var buf [256]byte
	lower := buf[:len(name)]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	for _, p := range strongParts {
		if bytes.Contains(lower, p) {
			return strongCredential
		}
	}
	weak, bare, words := false, false, 0
	start := -1
	for i := 0; i <= len(name); i++ {
		boundary := i == len(name) || !isAlnum(name[i])
		camel := i > 0 && i < len(name) && isLower(name[i-1]) && isUpper(name[i])
		if start >= 0 && (boundary || camel) {
			w := lower[start:i]
			words++
			for _, sw := range strongWords {
				if bytes.Equal(w, sw) {
					return strongCredential
				}
			}
			switch {
			case bytes.Equal(w, []byte("key")) || bytes.Equal(w, []byte("auth")):
				bare = true
			case bytes.HasSuffix(w, []byte("key")) || bytes.HasPrefix(w, []byte("auth")):
				weak = true
			}
			start = -1
		}
		if i < len(name) && !boundary && start < 0 {
			start = i
		}
	}
	if weak || bare && words > 1 {
		return weakCredential
	}
	return notCredential
}

func isAlnum(c byte) bool { return isLower(c) || isUpper(c) || '0' <= c && c <= '9' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

// hidden says whether the value of a name of class c is to be hidden: always under a strong
// name; under a weak one unless the value is a setting (a boolean, a number, a duration) or an
// address without a password (AUTH_URL=https://auth.shop.svc:8443), which no credential is.
func hidden(c nameClass, value string) bool {
	switch c {
	case strongCredential:
		return true
	case weakCredential:
		return !setting(value) && !plainURL(value)
	}
	return false
}

func setting(v string) bool {
	switch strings.ToLower(v) {
	case "", "true", "false", "yes", "no", "on", "off", "enabled", "disabled":
		return true
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return true
	}
	_, err := time.ParseDuration(v)
	return err == nil
}

func plainURL(v string) bool {
	u, err := url.Parse(v)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return false
	}
	_, hasPassword := u.User.Password()
	return !hasPassword
}

// distinctive says whether a credential's value is long and odd enough to be looked for in free
// text: a short value, a setting or a word of a few letters would match ordinary words and
// numbers there. Such a value is still hidden where it stands (its own env var, flag or field).
func distinctive(v string) bool {
	return len(v) >= minSearched && !setting(v) && !IsMark(v) && !strings.Contains(markPrefix, v)
}

// minSearched is the shortest credential looked for in free text.
const minSearched = 6

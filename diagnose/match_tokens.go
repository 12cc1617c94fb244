package diagnose

import (
	"net"
	"regexp"
	"strconv"
	"strings"
)

// tokenKind says what a token names.
type tokenKind int

const (
	tokQuoted   tokenKind = iota // a quoted name: secret "db-credentials"
	tokURL                       // scheme://host[:port][/path]
	tokHostPort                  // host:port
	tokHost                      // a host name or IP address
	tokPort                      // a port with no host (":8080")
	tokPath                      // an absolute URL or file path
	tokFlag                      // a command-line flag, dashes removed
)

// token is an endpoint, name, path or flag found in a message or a spec value.
type token struct {
	Kind tokenKind
	Text string
	// Host, Port and Path are set for URL and host:port tokens (and Host/Port/Path alone for
	// their own kinds).
	Host, Port, Path string
}

var (
	reURL      = regexp.MustCompile(`\b([a-zA-Z][a-zA-Z0-9+.\-]*)://([^\s"'<>\\/?#]+)(/[^\s"'<>\\?#]*)?`)
	reHostPort = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.\-/:@])(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.\-]*[A-Za-z0-9])?)?:(\d{1,5})\b`)
	reHost     = regexp.MustCompile(`(?i)\b[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?)+\b`)
	reLookup   = regexp.MustCompile(`lookup ([A-Za-z0-9.\-]+)(?: on |: )`)
	rePath     = regexp.MustCompile(`(?:^|[\s"'(=\[])(/[A-Za-z0-9._~%!$&*+,;=:@\-/]+)`)
	reFlag     = regexp.MustCompile(`(?:^|[\s"'\[(=,])(--?[A-Za-z][A-Za-z0-9_.\-]*)`)
	reQuoted   = regexp.MustCompile(`"([^"\\\s]{3,})"`)
	reDateHost = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[Tt]\d{2}$`)
	reLetter   = regexp.MustCompile(`[A-Za-z]`)
)

// fileExtensions end names that the host pattern finds but that are source files or
// documents (a logger's caller main.go:71), not hosts.
var fileExtensions = map[string]bool{
	"go": true, "py": true, "java": true, "js": true, "ts": true, "rb": true, "rs": true, "c": true,
	"cc": true, "cpp": true, "h": true, "sh": true, "kt": true, "scala": true, "php": true, "cs": true,
	"yaml": true, "yml": true, "json": true, "toml": true, "conf": true, "cfg": true, "ini": true,
	"log": true, "txt": true, "html": true, "jar": true, "so": true, "pem": true, "crt": true, "key": true,
}

// validHost reports whether h can be a host name or IP address in a message.
func validHost(h string) bool {
	if h == "" {
		return false
	}
	if strings.HasPrefix(h, "[") {
		return net.ParseIP(strings.Trim(h, "[]")) != nil
	}
	if net.ParseIP(h) != nil {
		return true
	}
	if !reLetter.MatchString(h) || reDateHost.MatchString(h) {
		return false
	}
	if i := strings.LastIndexByte(h, '.'); i >= 0 {
		last := strings.ToLower(h[i+1:])
		if fileExtensions[last] || last == "" {
			return false
		}
		// A top-level label is never all digits.
		if _, err := strconv.Atoi(last); err == nil {
			return false
		}
	}
	return true
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n > 0 && n <= 65535
}

// isIP reports whether h is an IP address (bracketed or not).
func isIP(h string) bool { return net.ParseIP(strings.Trim(h, "[]")) != nil }

// tokenize finds the endpoints, names, paths and flags in s.
func tokenize(s string) []token {
	var out []token
	seen := map[token]bool{}
	add := func(t token) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, m := range reURL.FindAllStringSubmatch(s, -1) {
		host, port := m[2], ""
		if i := strings.LastIndexByte(host, '@'); i >= 0 {
			host = host[i+1:]
		}
		if h, p, err := net.SplitHostPort(host); err == nil {
			host, port = h, p
		}
		path := strings.TrimRight(m[3], ".,;:)")
		host = strings.ToLower(host)
		add(token{Kind: tokURL, Text: strings.TrimRight(m[0], ".,;:)"), Host: host, Port: port, Path: path})
		if port != "" {
			add(token{Kind: tokHostPort, Text: host + ":" + port, Host: host, Port: port})
		}
		if validHost(host) {
			add(token{Kind: tokHost, Text: host, Host: host})
		}
		if len(path) > 1 {
			add(token{Kind: tokPath, Text: path, Path: path})
		}
	}
	for _, m := range reHostPort.FindAllStringSubmatch(s, -1) {
		host, port := strings.ToLower(m[1]), m[2]
		if !validPort(port) {
			continue
		}
		switch {
		case host == "":
			add(token{Kind: tokPort, Text: port, Port: port})
		case validHost(host):
			add(token{Kind: tokHostPort, Text: host + ":" + port, Host: host, Port: port})
			add(token{Kind: tokHost, Text: host, Host: host})
		}
	}
	for _, h := range reHost.FindAllString(s, -1) {
		if h = strings.ToLower(h); validHost(h) {
			add(token{Kind: tokHost, Text: h, Host: h})
		}
	}
	for _, m := range reLookup.FindAllStringSubmatch(s, -1) {
		if h := strings.ToLower(m[1]); validHost(h) {
			add(token{Kind: tokHost, Text: h, Host: h})
		}
	}
	for _, m := range rePath.FindAllStringSubmatch(s, -1) {
		p := strings.TrimRight(m[1], ".,;:)")
		if len(p) > 1 {
			add(token{Kind: tokPath, Text: p, Path: p})
		}
	}
	for _, m := range reFlag.FindAllStringSubmatch(s, -1) {
		name, _, _ := strings.Cut(strings.TrimLeft(m[1], "-"), "=")
		if len(name) >= 2 {
			add(token{Kind: tokFlag, Text: name})
		}
	}
	for _, m := range reQuoted.FindAllStringSubmatch(s, -1) {
		add(token{Kind: tokQuoted, Text: m[1]})
	}
	return out
}

// Strengths of a match between what a failure names and a spec value; the general rule's
// score starts from these.
const (
	strengthExact    = 60 // the failure names the whole value, a host:port, a URL or a flag
	strengthHost     = 45 // the same host name, or the same URL path
	strengthPort     = 30 // the same port, host unknown or resolved
	strengthSubpath  = 25 // a file under a path the value names
	minExactValueLen = 3
)

// match is the best link found between a failure's tokens and one spec value.
type match struct {
	Strength int
	// What names the shared token as a person reads it: "host:port x:9443".
	What string
}

// matchValue finds the strongest link between failure tokens ev and the spec value val.
// ownHosts are the workload's own pod and node IPs: a port on them is the pod itself (a probe
// or a peer), not an endpoint the spec names.
func matchValue(ev []token, val string, ownHosts map[string]bool) match {
	var best match
	better := func(s int, what string) {
		if s > best.Strength {
			best = match{s, what}
		}
	}
	vt := tokenize(val)
	if strings.HasPrefix(val, "-") {
		// A flag written alone in args ("--port=8080") is a flag even with no space before it.
		name, _, _ := strings.Cut(strings.TrimLeft(val, "-"), "=")
		if len(name) >= 2 {
			vt = append(vt, token{Kind: tokFlag, Text: name})
		}
	}
	if strings.HasPrefix(val, "/") && !strings.ContainsAny(val, " \t") && len(val) > 1 {
		vt = append(vt, token{Kind: tokPath, Text: val, Path: val})
	}
	for _, e := range ev {
		if (e.Kind == tokQuoted || e.Kind == tokURL || e.Kind == tokHostPort) && len(val) >= minExactValueLen && e.Text == val {
			better(strengthExact, val)
		}
		for _, t := range vt {
			switch {
			case e.Kind == tokURL && t.Kind == tokURL && e.Text == t.Text:
				better(strengthExact, "URL "+t.Text)
			case e.Kind == tokFlag && t.Kind == tokFlag && e.Text == t.Text:
				better(strengthExact, "flag "+t.Text)
			case e.Kind == tokHostPort && t.Kind == tokHostPort && e.Text == t.Text:
				better(strengthExact, "host:port "+t.Text)
			case e.Kind == tokHost && t.Kind == tokHost && e.Host == t.Host:
				better(strengthHost, "host "+t.Host)
			case e.Kind == tokPath && t.Kind == tokPath && e.Path == t.Path:
				better(strengthHost, "path "+t.Path)
			case e.Kind == tokPath && t.Kind == tokPath && strings.HasPrefix(e.Path, strings.TrimRight(t.Path, "/")+"/") && len(t.Path) > 1:
				better(strengthSubpath, "path "+e.Path+" under "+t.Path)
			case (e.Kind == tokHostPort || e.Kind == tokPort) && (t.Kind == tokHostPort || t.Kind == tokPort) &&
				e.Port == t.Port && !ownHosts[e.Host]:
				if e.Host == "" || t.Host == "" || isIP(e.Host) != isIP(t.Host) {
					better(strengthPort, "port "+t.Port)
				}
			}
		}
	}
	return best
}

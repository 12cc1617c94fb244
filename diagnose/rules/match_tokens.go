package rules

import (
	"strings"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
)

// Strengths of a match between what a failure names and a spec value; the general rule's
// score starts from these.
const (
	strengthExact   = 60 // the failure names the whole value, a host:port, a URL or a flag
	strengthHost    = 45 // the same host name, or the same URL path
	strengthPort    = 30 // the same port, host unknown or resolved
	strengthSubpath = 25 // a file under a path the value names
)

// MinExactValueLen is the shortest spec value a failure can name whole: shorter ones (a "1",
// an "on") turn up in any text.
const MinExactValueLen = 3

// match is the best link found between a failure's tokens and one spec value.
type match struct {
	Strength int
	// What names the shared token as a person reads it: "host:port x:9443".
	What string
}

// valueTokens are the tokens of a spec value: those tokenize finds, plus the value itself as a
// flag or a path when it is one written alone.
func valueTokens(val string) []facts.Value {
	vt := facts.Values(val)
	if strings.HasPrefix(val, "-") {
		// A flag written alone in args ("--port=8080") is a flag even with no space before it.
		name, _, _ := strings.Cut(strings.TrimLeft(val, "-"), "=")
		if len(name) >= 2 {
			vt = append(vt, facts.Value{Kind: facts.ValueFlag, Text: name})
		}
	}
	if strings.HasPrefix(val, "/") && !strings.ContainsAny(val, " \t") && len(val) > 1 {
		vt = append(vt, facts.Value{Kind: facts.ValuePath, Text: val, Path: val})
	}
	return vt
}

// matchTokens finds the strongest link between failure tokens ev and the spec value val, whose
// tokens are vt. ownHosts are the workload's own pod and node IPs: a port on them is the pod
// itself (a probe or a peer), not an endpoint the spec names.
func matchTokens(ev []facts.Value, val string, vt []facts.Value, ownHosts map[string]bool) match {
	var best match
	better := func(s int, what string) {
		if s > best.Strength {
			best = match{s, what}
		}
	}
	for _, e := range ev {
		if (e.Kind == facts.ValueQuoted || e.Kind == facts.ValueURL || e.Kind == facts.ValueHostPort) && len(val) >= MinExactValueLen && e.Text == val {
			better(strengthExact, val)
		}
		for _, t := range vt {
			switch {
			case e.Kind == facts.ValueURL && t.Kind == facts.ValueURL && e.Text == t.Text:
				better(strengthExact, "URL "+t.Text)
			case e.Kind == facts.ValueFlag && t.Kind == facts.ValueFlag && e.Text == t.Text:
				better(strengthExact, "flag -"+t.Text)
			case e.Kind == facts.ValueHostPort && t.Kind == facts.ValueHostPort && e.Text == t.Text:
				better(strengthExact, "host:port "+t.Text)
			case e.Kind == facts.ValueHost && t.Kind == facts.ValueHost && e.Host == t.Host:
				better(strengthHost, "host "+t.Host)
			case e.Kind == facts.ValuePath && t.Kind == facts.ValuePath && e.Path == t.Path:
				better(strengthHost, "path "+t.Path)
			case e.Kind == facts.ValuePath && t.Kind == facts.ValuePath && strings.HasPrefix(e.Path, strings.TrimRight(t.Path, "/")+"/") && len(t.Path) > 1:
				better(strengthSubpath, "path "+e.Path+" under "+t.Path)
			case (e.Kind == facts.ValueHostPort || e.Kind == facts.ValuePort) && (t.Kind == facts.ValueHostPort || t.Kind == facts.ValuePort) &&
				e.Port == t.Port && !ownHosts[e.Host]:
				if e.Host == "" || t.Host == "" || facts.IsIP(e.Host) != facts.IsIP(t.Host) {
					better(strengthPort, "port "+t.Port)
				}
			}
		}
	}
	return best
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || isUpper(c) }

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

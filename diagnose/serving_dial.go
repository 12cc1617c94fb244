package diagnose

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
)

// A copy can be Ready and routed to and still do no work: its probe answers from a thread of
// its own while the work it exists for keeps failing to reach the one dependency its own env
// names (a sweeper whose REDIS_ADDR refuses, a dispatcher whose broker is gone). Readiness says
// nothing of that, so such a copy does not count as serving: its log repeats a connection
// failure to a host:port that is exactly one of its env values, through to the end of the log.
// Only a copy whose log the snapshot holds is read, and only when its env names an endpoint:
// a healthy workload without either costs nothing.

// minDialFailures is how many failing dials make a loop rather than a blip at start-up (a
// dependency that came up a moment after the app).
const minDialFailures = 3

// dialLoop is a copy that keeps failing to connect to an endpoint its env names.
type dialLoop struct {
	// Variable and Endpoint: the env variable and the host:port of it the failures name.
	Variable, Endpoint string
	// Failures counts the failing lines; Line is the last one, at index obs of the
	// workload's observations.
	Failures int
	Line     string
	obs      int
	// Like names the copy of the same revision whose log showed the loop, when this copy's
	// log was not read.
	Like string
}

func (d *dialLoop) String() string {
	if d.Like != "" {
		return fmt.Sprintf("presumed to fail like copy %s of the same revision, which keeps failing to connect to %s (%s); this copy's log was not read", d.Like, d.Endpoint, d.Variable)
	}
	return fmt.Sprintf("keeps failing to connect to %s (%s), %d times", d.Endpoint, d.Variable, d.Failures)
}

// detail is String with the last failing line.
func (d *dialLoop) detail() string { return d.String() + ": " + d.Line }

// envEndpoints maps each host:port that a plain env value of the copy names
// (facts.EnvEndpoints) to the variable's name, the last that names it.
func envEndpoints(p *corev1.Pod) map[string]string {
	var eps map[string]string
	for _, ep := range facts.EnvEndpoints(&p.Spec) {
		if eps == nil {
			eps = map[string]string{}
		}
		eps[ep.Host+":"+ep.Port] = ep.Variable
	}
	return eps
}

// findDialLoop reads copy i's current log for a connection failure to one of its env
// endpoints that repeats through to the log's end; nil when there is none.
func findDialLoop(w *workload, i int) *dialLoop {
	eps := envEndpoints(w.Pods[i])
	if len(eps) == 0 {
		return nil
	}
	obs := w.observe()
	var (
		found               *dialLoop
		first, last, end, t time.Time
		lastHit, lastFail   int
		line                int
	)
	for _, tail := range obs.tailsOf(i) {
		for k := tail.from; k < tail.to; k++ {
			l := &obs.list[k]
			if l.Last {
				// The previous container's log: the copy restarted since, and its Ready
				// condition speaks of the current one.
				continue
			}
			line++
			// A line without its own time (a traceback's last line, where Python says what
			// failed) belongs to the dated line that opened it.
			if l.Dated() && !l.At.IsZero() {
				t = l.At
				if t.After(end) {
					end = t
				}
			}
			sig := l.Signal()
			if !sig.Failing {
				continue
			}
			lastFail = line
			if sig.Class != facts.ClassConnection {
				continue
			}
			ep, name := namedEndpoint(l, eps)
			if ep == "" {
				continue
			}
			if found == nil {
				found = &dialLoop{Variable: name, Endpoint: ep}
				first = t
			}
			if found.Endpoint != ep {
				// Failures to two of its endpoints: not one value at fault.
				return nil
			}
			found.Failures++
			found.Line, found.obs = sig.Text, int(k)
			last, lastHit = t, line
		}
	}
	if found == nil || found.Failures < minDialFailures {
		return nil
	}
	if last.IsZero() || first.IsZero() {
		// An undated log cannot say how far apart the failures are: the loop goes on when
		// the last failure the log holds is a failing dial.
		if lastHit != lastFail {
			return nil
		}
		return found
	}
	// Still failing at the log's end: no longer since the last failure than a few of the
	// loop's own intervals (a retry every 30 s, a backoff that grew to minutes).
	gap := last.Sub(first) / time.Duration(found.Failures-1)
	if end.Sub(last) > max(3*gap, time.Minute) || last.Equal(first) {
		return nil
	}
	return found
}

// namedEndpoint returns the env endpoint a log line names, with its variable.
func namedEndpoint(l *Observation, eps map[string]string) (string, string) {
	var vals []facts.Value
	if l.Reading != nil {
		vals = l.Reading.Values(l.Text)
	} else {
		vals = facts.Values(l.Text)
	}
	for _, v := range vals {
		if v.Host == "" || v.Port == "" {
			continue
		}
		ep := strings.ToLower(v.Host) + ":" + v.Port
		if name, ok := eps[ep]; ok {
			return ep, name
		}
	}
	return "", ""
}

// seeDialLoops takes the copies that count as serving but keep failing to reach one of their
// env endpoints out of the serving count. Most Ready copies' logs name no endpoint of theirs
// three times: their raw lines are scanned for one before any line is read as a fact.
func seeDialLoops(w *workload) {
	w.cls.dialing = nil
	if len(w.Logs) == 0 || isBatch(w.Kind) {
		return
	}
	// The endpoints of the serving copies, once per revision: its copies share one env.
	var byPod, byHash map[string]map[string]string
	for i, p := range w.Pods {
		if !w.serving[i] {
			continue
		}
		hash, ok := p.Labels[podTemplateHashLabel]
		eps, seen := byHash[hash]
		if !ok || !seen {
			eps = envEndpoints(p)
			if ok {
				if byHash == nil {
					byHash = map[string]map[string]string{}
				}
				byHash[hash] = eps
			}
		}
		if len(eps) > 0 {
			if byPod == nil {
				byPod = map[string]map[string]string{}
			}
			byPod[p.Name] = eps
		}
	}
	if byPod == nil {
		return
	}
	var suspects, read map[string]bool
	for _, l := range w.Logs {
		if l == nil {
			continue
		}
		if read == nil {
			read = map[string]bool{}
		}
		read[l.Pod] = true
		eps := byPod[l.Pod]
		if l.Previous || eps == nil || suspects[l.Pod] {
			continue
		}
		if namesEndpoint(l.Lines, eps) {
			if suspects == nil {
				suspects = map[string]bool{}
			}
			suspects[l.Pod] = true
		}
	}
	for i, p := range w.Pods {
		if !w.serving[i] || !suspects[p.Name] {
			continue
		}
		d := findDialLoop(w, i)
		if d == nil {
			continue
		}
		if w.cls.dialing == nil {
			w.cls.dialing = make([]*dialLoop, len(w.Pods))
		}
		w.cls.dialing[i] = d
		w.serving[i] = false
		w.Counts.Serving--
	}
	if w.cls.dialing != nil {
		presumeDialLoops(w, read)
	}
}

// presumeDialLoops takes out of the serving count the serving copies whose log was not read
// (a live read samples a workload's copies) when a copy of the same revision keeps failing to
// reach its endpoint: they run the same spec, with the same env, against the same endpoint.
// The copy list says it is presumed.
func presumeDialLoops(w *workload, read map[string]bool) {
	byHash := map[string]*dialLoop{}
	for i, d := range w.cls.dialing {
		if hash, ok := w.Pods[i].Labels[podTemplateHashLabel]; d != nil && ok && byHash[hash] == nil {
			c := *d
			c.Like = w.Pods[i].Name
			byHash[hash] = &c
		}
	}
	for i, p := range w.Pods {
		hash, ok := p.Labels[podTemplateHashLabel]
		if !w.serving[i] || read[p.Name] || !ok || byHash[hash] == nil {
			continue
		}
		w.cls.dialing[i] = byHash[hash]
		w.serving[i] = false
		w.Counts.Serving--
	}
}

// namesEndpoint reports whether minDialFailures of lines name one of the endpoints as written
// (host names are lower case; a line that writes one otherwise is not counted here).
func namesEndpoint(lines []string, eps map[string]string) bool {
	for ep := range eps {
		n := 0
		for _, l := range lines {
			if strings.Contains(l, ep) {
				if n++; n >= minDialFailures {
					return true
				}
			}
		}
	}
	return false
}

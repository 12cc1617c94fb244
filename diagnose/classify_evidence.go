package diagnose

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// evidenceBuilder aggregates signals: one item per signal, covering every copy that shows it.
type evidenceBuilder struct {
	items map[evidenceKey]*Evidence
	order []evidenceKey
	seen  map[evidenceKey]map[string]bool
}

// evidenceKey identifies one signal; a struct rather than a joined string so that a lookup,
// done for every log line of every copy, allocates nothing.
type evidenceKey struct {
	src       EvidenceSource
	kind, key string
}

func newEvidence() *evidenceBuilder {
	return &evidenceBuilder{items: map[evidenceKey]*Evidence{}, seen: map[evidenceKey]map[string]bool{}}
}

// add records one sighting of a signal on one object; count is how many times it was seen.
func (b *evidenceBuilder) add(src EvidenceSource, kind, key, message, object string, count int32, at *time.Time) {
	k := evidenceKey{src, kind, key}
	e := b.items[k]
	if e == nil {
		e = &Evidence{Kind: kind, Message: message, Source: src, Objects: []string{}}
		b.items[k] = e
		b.order = append(b.order, k)
		b.seen[k] = map[string]bool{}
	}
	if object != "" && !b.seen[k][object] {
		b.seen[k][object] = true
		e.Objects = append(e.Objects, object)
	}
	e.Count += count
	if at != nil && !at.IsZero() && (e.LastSeen == nil || at.After(*e.LastSeen)) {
		t := at.UTC()
		e.LastSeen = &t
		e.Message = message
	}
}

var sourceOrder = map[EvidenceSource]int{
	SourcePodStatus: 0, SourceControllerStatus: 1, SourceService: 2, SourceEvent: 3, SourceLog: 4,
	SourceRevisionHistory: 5, SourceVisibility: 6,
}

// list returns the items by source, then most objects covered, then kind: deterministic.
func (b *evidenceBuilder) list() []Evidence {
	out := make([]Evidence, 0, len(b.order))
	for _, k := range b.order {
		e := *b.items[k]
		sort.Strings(e.Objects)
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, c := out[i], out[j]
		if sourceOrder[a.Source] != sourceOrder[c.Source] {
			return sourceOrder[a.Source] < sourceOrder[c.Source]
		}
		if len(a.Objects) != len(c.Objects) {
			return len(a.Objects) > len(c.Objects)
		}
		if a.Count != c.Count {
			return a.Count > c.Count
		}
		if a.Kind != c.Kind {
			return a.Kind < c.Kind
		}
		return a.Message < c.Message
	})
	return out
}

// gatherEvidence lists the signals behind the verdict. Count is never evidence of health, so a
// met count adds nothing here.
func gatherEvidence(s *snapshot.Snapshot, w *workload, ref time.Time) []Evidence {
	b := newEvidence()
	podEvidence(b, w, ref)
	controllerEvidence(b, w)
	serviceEvidence(s, b, w)
	eventEvidence(b, w)
	logEvidence(b, w)
	revisionEvidence(b, w, ref)
	visibilityEvidence(s, b, w)
	if len(w.Events) == 0 && (w.Shape.Broken() || w.Shape == ShapeUnknown) {
		// Events are support, never the verdict; still say they are missing so nobody reads
		// their absence as calm.
		b.add(SourceVisibility, "NoEvents", "", "no event about the workload or its copies in the snapshot (the API server keeps events for an hour by default)", "", 1, nil)
	}
	return b.list()
}

func podEvidence(b *evidenceBuilder, w *workload, ref time.Time) {
	for _, f := range w.cls.copies {
		obj := "Pod/" + f.Pod.Name
		switch {
		case f.NeverStarts != "":
			kind, msg := f.NeverStarts, f.Message
			// The kubelet alternates ErrImagePull and ImagePullBackOff on one failing pull:
			// one signal, one item.
			if kind == "ErrImagePull" || kind == "ImagePullBackOff" {
				kind, msg = "ImagePullBackOff", backoffPull.ReplaceAllString(msg, "")
			}
			b.add(SourcePodStatus, kind, f.Container, withContainer(f.Container, msg), obj, 1, nil)
		case f.Dies != "":
			b.add(SourcePodStatus, f.Dies, f.Container, withContainer(f.Container, f.Message), obj, 1, nil)
		case f.Active && f.Running && !f.Ready:
			msg := "Running, not Ready"
			if rc := readyCondition(f.Pod); rc != nil && rc.Message != "" {
				msg += ": " + rc.Message
				if wasReady(f.Pod) {
					msg += fmt.Sprintf(" (was Ready until %s ago)", humanDuration(ref.Sub(rc.LastTransitionTime.Time)))
				}
			}
			b.add(SourcePodStatus, "NotReady", "", msg, obj, 1, nil)
		case f.Active && f.Ready && !f.Serving:
			b.add(SourceService, "NotAnEndpoint", "", "Ready, but not a ready endpoint of any Service meant for the workload", obj, 1, nil)
		}
		if lt := f.LastTerminated; lt != nil && f.NeverStarts == "" {
			at := lt.FinishedAt.Time
			msg := fmt.Sprintf("last terminated %s ago: %s", humanDuration(ref.Sub(at)), terminationText(lt))
			if f.Dies == "" && f.Running {
				msg += "; running since"
			}
			kind := lt.Reason
			if kind == "" {
				kind = "Terminated"
			}
			// Keyed by reason and exit code only: the times differ from copy to copy.
			b.add(SourcePodStatus, kind, "last"+strconv.Itoa(int(lt.ExitCode)), msg, obj, 1, &at)
		}
	}
}

func controllerEvidence(b *evidenceBuilder, w *workload) {
	obj := w.Kind + "/" + w.Name
	r := w.cls.rollout
	if r.Reason != "" && r.Reason != reasonNewRSAvailable {
		b.add(SourceControllerStatus, r.Reason, "", r.Message, obj, 1, r.Since)
	}
	if w.cls.failedCreate != "" {
		b.add(SourceControllerStatus, "FailedCreate", "", w.cls.failedCreate, obj, 1, nil)
	}
	switch o := w.Object.(type) {
	case *appsv1.Deployment:
		for _, c := range o.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionFalse {
				at := c.LastTransitionTime.Time
				b.add(SourceControllerStatus, c.Reason, "", c.Message, obj, 1, &at)
			}
		}
	case *appsv1.StatefulSet:
		if o.Status.AvailableReplicas < w.Declared {
			b.add(SourceControllerStatus, "ReplicasUnavailable", "",
				fmt.Sprintf("%d of %d replicas available, %d created", o.Status.AvailableReplicas, w.Declared, o.Status.Replicas), obj, 1, nil)
		}
	case *appsv1.DaemonSet:
		if o.Status.NumberUnavailable > 0 || o.Status.NumberReady < o.Status.DesiredNumberScheduled {
			b.add(SourceControllerStatus, "NumberUnavailable", "",
				fmt.Sprintf("%d of %d nodes have a Ready copy", o.Status.NumberReady, o.Status.DesiredNumberScheduled), obj, 1, nil)
		}
	}
}

func serviceEvidence(s *snapshot.Snapshot, b *evidenceBuilder, w *workload) {
	for _, svc := range w.UnmatchedServices {
		b.add(SourceService, "SelectorMatchesNoCopy", svc.Name,
			fmt.Sprintf("Service %s selects %s, which matches none of the workload's copies (template labels %s)",
				svc.Name, selectorString(svc.Spec.Selector), selectorString(w.Template.Labels)),
			"Service/"+svc.Name, 1, nil)
	}
	for _, svc := range w.Services {
		if len(s.EndpointSlicesFor(svc.Namespace, svc.Name)) == 0 {
			b.add(SourceVisibility, "NoEndpointSlices", svc.Name,
				fmt.Sprintf("no EndpointSlice of Service %s in the snapshot; Ready copies were counted as serving", svc.Name),
				"Service/"+svc.Name, 1, nil)
		}
	}
}

// eventEvidence groups warning events (and the kubelet's Normal "Killing" of a container that
// failed its liveness probe) by reason and message, with the object names, generated suffixes
// and variable words (addresses, counters) taken out of the key.
func eventEvidence(b *evidenceBuilder, w *workload) {
	for _, e := range w.Events {
		if e.Type != corev1.EventTypeWarning && !(e.Reason == "Killing" && strings.Contains(e.Message, "liveness probe")) {
			continue
		}
		key := normalizeEventMessage(e)
		at := eventTime(e)
		b.add(SourceEvent, e.Reason, key, e.Message, e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name, eventCount(e), &at)
	}
}

var backoffDuration = regexp.MustCompile(`(?i)back-off [0-9hms.]+`)

func normalizeEventMessage(e *corev1.Event) string {
	m := e.Message
	if e.InvolvedObject.Name != "" {
		m = strings.ReplaceAll(m, e.InvolvedObject.Name, "<name>")
	}
	if e.InvolvedObject.UID != "" {
		m = strings.ReplaceAll(m, string(e.InvolvedObject.UID), "<uid>")
	}
	// client-go's EventCorrelator rewrites the tenth similar event with this prefix.
	m = strings.TrimPrefix(m, "(combined from similar events): ")
	m = generatedSuffix.ReplaceAllString(m, "$1-<suffix>")
	return withoutVariables(backoffDuration.ReplaceAllString(m, "back-off <d>"))
}

// generatedSuffix is the random suffix the API server appends to generateName (its alphabet has
// no vowels and no 0, 1, 3), as in a pod named in a ReplicaSet's FailedCreate.
var generatedSuffix = regexp.MustCompile(`(<name>)-[bcdfghjklmnpqrstvwxz2456789]{5}\b`)

var (
	logTimestamp = regexp.MustCompile(`^\[?\d{4}[-/]\d{2}[-/]\d{2}[T ][0-9:.,]+(Z|[+-]\d{2}:?\d{2})?\]?\s*`)
	backoffPull  = regexp.MustCompile(`^Back-off pulling image "[^"]*": (ErrImagePull: )?`)
)

// maxLogSignals bounds the distinct log lines kept per workload: the evidence is the pattern.
const maxLogSignals = 3

// logEvidence keeps failure lines from the copies' logs, grouped by their text without
// timestamps. kubectl's own "Request log error" lines say only that a container never started.
func logEvidence(b *evidenceBuilder, w *workload) {
	lb := newEvidence()
	failing := map[string]bool{}
	for _, f := range w.cls.copies {
		failing[f.Pod.Name] = !f.Serving
	}
	// Every copy logs the same failure: reduce each distinct line once. A nil entry is a line
	// that reports no failure.
	lines := map[string]*reducedLine{}
	for _, l := range w.Logs {
		// A serving copy's log does not explain a failure.
		if !failing[l.Pod] {
			continue
		}
		obj := "Pod/" + l.Pod
		for _, line := range l.Lines {
			rd, known := lines[line]
			if !known {
				rd = reduceLogLine(line)
				lines[line] = rd
			}
			if rd == nil {
				continue
			}
			lb.add(SourceLog, "LogLine", rd.key, rd.text, obj, 1, nil)
		}
	}
	keys := append([]evidenceKey(nil), lb.order...)
	sort.SliceStable(keys, func(i, j int) bool { return lb.items[keys[i]].Count > lb.items[keys[j]].Count })
	for i, k := range keys {
		if i == maxLogSignals {
			break
		}
		sort.Strings(lb.items[k].Objects)
		b.items[k] = lb.items[k]
		b.order = append(b.order, k)
	}
}

// reducedLine is a failing log line as evidence shows it: its text, and the key that groups
// the same failure across copies.
type reducedLine struct{ key, text string }

// reduceLogLine reduces a log line to its evidence, or nil when it reports no failure.
func reduceLogLine(line string) *reducedLine {
	if strings.HasPrefix(line, "Request log error:") || strings.HasPrefix(line, "unable to retrieve container logs") {
		return nil
	}
	// The reduced text is part of the line: a line without a failure word is done.
	if !logFailure(line) {
		return nil
	}
	text := logText(line)
	if text == "" || !logFailure(text) {
		return nil
	}
	return &reducedLine{key: withoutVariables(text), text: text}
}

// logFailureWords mark a log line as a failure signal.
var logFailureWords = []string{"error", "fatal", "panic", "exception", "refused", "timeout", "timed out",
	"no such host", "denied", "killed", "failed", "unhealthy", "traceback", "out of memory", "oom"}

func logFailure(text string) bool {
	lower := strings.ToLower(text)
	for _, w := range logFailureWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// withoutVariables replaces the words that change from line to line (ids, counters, addresses,
// times: any run of letters, digits and '_' holding a digit) with '#', so one failure on five
// copies groups as one signal.
func withoutVariables(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	word := func(c byte) bool {
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	for i := 0; i < len(text); {
		if !word(text[i]) {
			b.WriteByte(text[i])
			i++
			continue
		}
		j, digit := i, false
		for j < len(text) && word(text[j]) {
			digit = digit || text[j] >= '0' && text[j] <= '9'
			j++
		}
		if digit {
			b.WriteByte('#')
		} else {
			b.WriteString(text[i:j])
		}
		i = j
	}
	return b.String()
}

// logFields are the fields of a JSON log line that say what failed.
type logFields struct {
	Level    string `json:"level"`
	Msg      string `json:"msg"`
	Message  string `json:"message"`
	Error    string `json:"error"`
	Err      string `json:"err"`
	Endpoint string `json:"endpoint"`
}

// decodeLogFields reads the logFields of a JSON object line as json.Unmarshal does (a field of
// another type leaves the rest filled); valid is false when the line is not JSON. Most lines
// are flat objects of plain strings: those are read by a scan, and anything else (escapes,
// non-ASCII keys, invalid UTF-8) goes to json.Unmarshal, so both read the same.
func decodeLogFields(line string) (m logFields, valid bool) {
	if !json.Valid([]byte(line)) {
		return m, false
	}
	if scanLogFields(line, &m) {
		return m, true
	}
	m = logFields{}
	err := json.Unmarshal([]byte(line), &m)
	var syntax *json.SyntaxError
	return m, !errors.As(err, &syntax)
}

// scanLogFields fills m from line, a valid JSON value; it reports false when the line needs
// json.Unmarshal (not an object, or a key or wanted value that is not plain ASCII or UTF-8
// without escapes).
func scanLogFields(line string, m *logFields) bool {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	i++
	for {
		i = skipSpace(line, i)
		if line[i] == '}' {
			return true
		}
		if line[i] == ',' {
			i = skipSpace(line, i+1)
		}
		// A key: a valid line has a string here.
		end := strings.IndexByte(line[i+1:], '"') + i + 1
		key := line[i+1 : end]
		if strings.IndexByte(key, '\\') >= 0 || !isASCII(key) {
			return false
		}
		i = skipSpace(line, end+1) + 1 // past ':'
		i = skipSpace(line, i)
		var dst *string
		switch {
		case strings.EqualFold(key, "level"):
			dst = &m.Level
		case strings.EqualFold(key, "msg"):
			dst = &m.Msg
		case strings.EqualFold(key, "message"):
			dst = &m.Message
		case strings.EqualFold(key, "error"):
			dst = &m.Error
		case strings.EqualFold(key, "err"):
			dst = &m.Err
		case strings.EqualFold(key, "endpoint"):
			dst = &m.Endpoint
		}
		if line[i] == '"' {
			end := closingQuote(line, i)
			if dst != nil {
				v := line[i+1 : end]
				if strings.IndexByte(v, '\\') >= 0 || !utf8.ValidString(v) {
					return false
				}
				*dst = v
			}
			i = end + 1
			continue
		}
		// Any other value leaves the field as it is, as a type mismatch does for Unmarshal.
		i = skipValue(line, i)
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// closingQuote returns the index of the quote that ends the JSON string opened at s[i].
func closingQuote(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(s)
}

// skipValue returns the index just past the JSON value (not a string) that starts at s[i].
func skipValue(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '"':
			i = closingQuote(s, i)
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

// quietLevels are JSON log levels that are not failures; checked before decoding the line.
var quietLevels = []string{`"level":"info"`, `"level":"debug"`, `"level":"INFO"`, `"level":"DEBUG"`}

// logText reduces a log line to what repeats across copies: a JSON line to its level, message
// and error fields; a text line to itself without its leading timestamp.
func logText(line string) string {
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "{") {
		for _, q := range quietLevels {
			if strings.Contains(line, q) {
				return ""
			}
		}
		m, valid := decodeLogFields(line)
		if valid {
			if strings.EqualFold(m.Level, "info") || strings.EqualFold(m.Level, "debug") {
				return ""
			}
			var parts []string
			for _, kv := range [][2]string{{"msg", m.Msg}, {"message", m.Message}, {"error", m.Error}, {"err", m.Err}, {"endpoint", m.Endpoint}} {
				if kv[1] != "" {
					parts = append(parts, kv[0]+"="+kv[1])
				}
			}
			if len(parts) == 0 {
				return ""
			}
			return strings.Join(parts, " ")
		}
	}
	return logTimestamp.ReplaceAllString(line, "")
}

func revisionEvidence(b *evidenceBuilder, w *workload, ref time.Time) {
	h := &w.cls.history
	obj := w.Kind + "/" + w.Name
	switch {
	case h.NoReplicaSets:
		b.add(SourceVisibility, "NoReplicaSets", "", "the snapshot holds no ReplicaSet of the Deployment: copies were found by its selector and revisions are unknown", obj, 1, nil)
		return
	case h.Current == nil:
		return
	case h.LastServing == nil:
		msg := fmt.Sprintf("revision %d is the only revision and no copy of it has served", h.Current.Number)
		if len(h.Revisions) > 1 {
			msg = fmt.Sprintf("no revision of %d shows that it served", len(h.Revisions))
		}
		b.add(SourceRevisionHistory, "NeverServed", "", msg, obj, 1, nil)
	case h.LastServing == h.Current:
		b.add(SourceRevisionHistory, "UnchangedSinceServing", "",
			fmt.Sprintf("revision %d is current and served (%s): the spec is unchanged since it served", h.Current.Number, h.Current.Served), obj, 1, nil)
	default:
		paths := changedPaths(w.Changes)
		shown := paths
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(paths)-5))
		}
		b.add(SourceRevisionHistory, "ChangedSinceServing", "",
			fmt.Sprintf("revision %d changed %d field(s) since revision %d served (%s): %s",
				h.Current.Number, len(paths), h.LastServing.Number, h.LastServing.Served, strings.Join(shown, ", ")), obj, 1, nil)
	}
}

// visibilityEvidence says what the source could not read in the workload's namespace.
func visibilityEvidence(s *snapshot.Snapshot, b *evidenceBuilder, w *workload) {
	for _, v := range s.Visibility {
		if v.Namespace != "" && v.Namespace != w.Namespace {
			continue
		}
		b.add(SourceVisibility, "NotVisible", v.Kind, fmt.Sprintf("could not read %s: %s", v.Kind, v.Reason), "", 1, nil)
	}
}

func sortStrings(s []string) { sort.Strings(s) }

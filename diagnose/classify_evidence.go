package diagnose

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// evidenceBuilder aggregates signals: one item per signal, covering every copy that shows it.
type evidenceBuilder struct {
	// keys and vals are the items, a key once each; order lists them as added (a key put
	// again is listed again, as a map and a list of its keys would). A workload has a few
	// items: keys are scanned until index, a map, is worth building.
	keys  []evidenceKey
	vals  []*Evidence
	order []int32
	index map[evidenceKey]int32
	// many holds the objects of an item that covers more than smallUIDs of them; a smaller
	// item's list is scanned (most cover a few copies, and a map each showed in profiles).
	many map[*Evidence]map[string]bool
	// items hands out the items of a builder in a worker's room (list copies them out); nil
	// for a builder of its own, whose items are allocated one by one.
	items *blockRoom[Evidence]
}

// newItem returns a pointer to a copy of e.
func (b *evidenceBuilder) newItem(e Evidence) *Evidence {
	if b.items == nil {
		p := new(Evidence)
		*p = e
		return p
	}
	return b.items.put(e, 16)
}

// cover adds object to the objects the item covers, once.
func (b *evidenceBuilder) cover(e *Evidence, object string) {
	if m := b.many[e]; m != nil {
		if !m[object] {
			m[object] = true
			e.Objects = append(e.Objects, object)
		}
		return
	}
	if slices.Contains(e.Objects, object) {
		return
	}
	e.Objects = append(e.Objects, object)
	if len(e.Objects) > smallUIDs {
		if b.many == nil {
			b.many = map[*Evidence]map[string]bool{}
		}
		m := make(map[string]bool, 2*len(e.Objects))
		for _, o := range e.Objects {
			m[o] = true
		}
		b.many[e] = m
	}
}

// evidenceKey identifies one signal; a struct rather than a joined string so that a lookup,
// done for every log line of every copy, allocates nothing.
type evidenceKey struct {
	src       EvidenceSource
	kind, key string
}

func newEvidence() *evidenceBuilder {
	return &evidenceBuilder{}
}

// find returns the place of key k in keys, or -1.
func (b *evidenceBuilder) find(k evidenceKey) int {
	if b.index != nil {
		if i, ok := b.index[k]; ok {
			return int(i)
		}
		return -1
	}
	for i := range b.keys {
		if b.keys[i] == k {
			return i
		}
	}
	return -1
}

// get returns the item of key k, or nil.
func (b *evidenceBuilder) get(k evidenceKey) *Evidence {
	if i := b.find(k); i >= 0 {
		return b.vals[i]
	}
	return nil
}

// put makes e the item of key k and lists k again.
func (b *evidenceBuilder) put(k evidenceKey, e *Evidence) {
	i := b.find(k)
	if i < 0 {
		i = len(b.keys)
		b.keys = append(b.keys, k)
		b.vals = append(b.vals, e)
		if b.index != nil {
			b.index[k] = int32(i)
		} else if len(b.keys) > smallUIDs {
			b.index = make(map[evidenceKey]int32, 2*len(b.keys))
			for j, x := range b.keys {
				b.index[x] = int32(j)
			}
		}
	}
	b.vals[i] = e
	b.order = append(b.order, int32(i))
}

// addObserved is add for a signal read from observation obs, which the item then cites.
func (b *evidenceBuilder) addObserved(obs int, src EvidenceSource, kind, key, message, object string, count int32, at *time.Time) *Evidence {
	e := b.add(src, kind, key, message, object, count, at)
	if obs >= 0 {
		e.Observations = append(e.Observations, int32(obs))
	}
	return e
}

// add records one sighting of a signal on one object; count is how many times it was seen.
func (b *evidenceBuilder) add(src EvidenceSource, kind, key, message, object string, count int32, at *time.Time) *Evidence {
	k := evidenceKey{src, kind, key}
	e := b.get(k)
	if e == nil {
		e = b.newItem(Evidence{Kind: kind, Message: message, Source: src, Objects: []string{}})
		b.put(k, e)
	}
	if object != "" {
		b.cover(e, object)
	}
	e.Count += count
	if at != nil && !at.IsZero() && (e.LastSeen == nil || at.After(*e.LastSeen)) {
		t := at.UTC()
		e.LastSeen = &t
		e.Message = message
	}
	return e
}

var sourceOrder = map[EvidenceSource]int{
	SourcePodStatus: 0, SourceControllerStatus: 1, SourceService: 2, SourceEvent: 3, SourceLog: 4,
	SourceRevisionHistory: 5, SourceVisibility: 6,
}

// list returns the items by source, then most objects covered, then kind: deterministic.
func (b *evidenceBuilder) list() []Evidence {
	out := make([]Evidence, 0, len(b.order))
	for _, i := range b.order {
		e := *b.vals[i]
		sort.Strings(e.Objects)
		out = append(out, e)
	}
	sortStable(out, func(a, c Evidence) bool { return evidenceLess(&a, &c) })
	return out
}

// evidenceLess is the order list gives evidence items (Rediagnose merges by it too).
func evidenceLess(a, c *Evidence) bool {
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
}

// gatherEvidence lists the signals behind the verdict. Count is never evidence of health, so a
// met count adds nothing here.
func gatherEvidence(s *snapshot.Snapshot, w *workload, ref time.Time) []Evidence {
	b := w.texts.evidenceRoom()
	podEvidence(b, w, ref)
	controllerEvidence(b, w)
	serviceEvidence(s, b, w)
	eventEvidence(b, w)
	logEvidence(b, w)
	revisionEvidence(b, w)
	visibilityEvidence(s, b, w)
	if n, ok := failingLogsUnread(w); ok {
		b.add(SourceVisibility, "LogsNotRead", "", fmt.Sprintf("the logs of the %d failing copies were not read: the suspects are the fields changed in the revision current when the failure began, ranked by what the failure looks like", n), "", 1, nil)
	}
	if len(w.Events) == 0 && (w.Shape.Broken() || w.Shape == ShapeUnknown) {
		// Events are support, never the verdict; still say they are missing so nobody reads
		// their absence as calm.
		b.add(SourceVisibility, "NoEvents", "", "no event about the workload or its copies in the snapshot (the API server keeps events for an hour by default)", "", 1, nil)
	}
	return b.list()
}

func podEvidence(b *evidenceBuilder, w *workload, ref time.Time) {
	for _, f := range w.cls.copies {
		// Named only for an item: most copies of a large cluster have none.
		if !podHasEvidence(f) {
			continue
		}
		obj := "Pod/" + f.Pod.Name
		switch {
		case f.NeverStarts != "":
			kind, msg := f.NeverStarts, f.Message
			// The kubelet alternates ErrImagePull and ImagePullBackOff on one failing pull:
			// one signal, one item.
			if kind == "ErrImagePull" || kind == "ImagePullBackOff" {
				kind, msg = "ImagePullBackOff", backoffPull.ReplaceAllString(msg, "")
			}
			b.addObserved(f.signalObs, SourcePodStatus, kind, f.Container, withContainer(f.Container, msg), obj, 1, nil)
		case f.Dies != "":
			b.addObserved(f.signalObs, SourcePodStatus, f.Dies, f.Container, withContainer(f.Container, f.Message), obj, 1, nil)
		case f.Active && f.Running && !f.Ready:
			msg := "Running, not Ready"
			if rc := &f.Life.ReadyCondition; rc.Seen && rc.Message != "" {
				msg += ": " + rc.Message
				if f.Life.WasReady() {
					msg += fmt.Sprintf(" (was Ready until %s ago)", humanDuration(ref.Sub(rc.Changed)))
				}
			}
			b.addObserved(f.readyObs, SourcePodStatus, "NotReady", "", msg, obj, 1, nil)
		case f.Active && f.Ready && f.Dialing != nil:
			b.addObserved(f.Dialing.obs, SourceLog, "ConnectFailing", "", "Ready, but "+f.Dialing.detail(), obj, 1, nil)
		case f.Active && f.Ready && !f.Serving:
			b.add(SourceService, "NotAnEndpoint", "", "Ready, but not a ready endpoint of any Service meant for the workload", obj, 1, nil)
		}
		if lt := f.LastTerminated; lt != nil && f.NeverStarts == "" {
			at := lt.At
			msg := fmt.Sprintf("last terminated %s ago: %s", humanDuration(ref.Sub(at)), lt.TerminationText())
			if f.Dies == "" && f.Running {
				if since := f.Life.RunningSince(); !since.IsZero() {
					msg += fmt.Sprintf("; running again since %s ago", humanDuration(ref.Sub(since)))
				}
			}
			kind := lt.Reason
			if kind == "" {
				kind = "Terminated"
			}
			// Keyed by reason and exit code only: the times differ from copy to copy.
			b.addObserved(f.lastTerminatedObs, SourcePodStatus, kind, "last"+strconv.Itoa(int(lt.ExitCode)), msg, obj, 1, &at)
		}
	}
}

// podHasEvidence reports whether podEvidence writes an item for the copy.
func podHasEvidence(f *copyFacts) bool {
	return f.NeverStarts != "" || f.Dies != "" || f.Active && f.Running && !f.Ready ||
		f.Active && f.Ready && !f.Serving || f.LastTerminated != nil && f.NeverStarts == ""
}

func controllerEvidence(b *evidenceBuilder, w *workload) {
	obj := w.object()
	r := &w.cls.rollout
	if r.Reason != "" && r.Reason != reasonNewRSAvailable {
		// add takes no time for a zero one, as for none.
		b.add(SourceControllerStatus, r.Reason, "", r.Message, obj, 1, &r.Since)
	}
	if w.cls.failedCreate != "" {
		b.add(SourceControllerStatus, "FailedCreate", "", w.cls.failedCreate, obj, 1, nil)
	}
	controllerStatusEvidence(b, w)
	batchEvidence(b, w)
	switch o := w.Object.(type) {
	case *appsv1.Deployment:
		for _, c := range w.controller().Conditions {
			if c.Type == string(appsv1.DeploymentAvailable) && c.Status == string(corev1.ConditionFalse) {
				at := c.Changed
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
			w.texts.serviceRef(svc), 1, nil)
	}
	// One item for all the workload's Services without slices: it is one gap in what was read
	// (a dump without EndpointSlices lacks every one of them), and a workload that many Services
	// select had as many items saying the same, which buried its other evidence.
	var unsliced []*corev1.Service
	for i, svc := range w.Services {
		if len(s.EndpointSlicesFor(svc.Namespace, svc.Name)) == 0 {
			if unsliced == nil {
				unsliced = make([]*corev1.Service, 0, len(w.Services)-i)
			}
			unsliced = append(unsliced, svc)
		}
	}
	if len(unsliced) == 0 {
		return
	}
	slices.SortFunc(unsliced, func(a, b *corev1.Service) int { return strings.Compare(a.Name, b.Name) })
	e := b.add(SourceVisibility, "NoEndpointSlices", "", noSlicesMessage(unsliced), "", int32(len(unsliced)), nil)
	if len(e.Objects) > 0 {
		for _, svc := range unsliced {
			b.cover(e, w.texts.serviceRef(svc))
		}
		return
	}
	// A workload has each of its Services once, so no Service is covered twice: the objects are
	// written at their count, without cover's set (a workload that a hundred Services select
	// made one, and grew the list seven times).
	e.Objects = make([]string, len(unsliced))
	for i, svc := range unsliced {
		e.Objects[i] = w.texts.serviceRef(svc)
	}
}

// noSlicesMessage says which Services (in name order) had no EndpointSlice, naming at most
// three.
func noSlicesMessage(svcs []*corev1.Service) string {
	const tail = " in the snapshot; Ready copies were counted as serving"
	switch n := len(svcs); n {
	case 1:
		return "no EndpointSlice of Service " + svcs[0].Name + tail
	case 2:
		return "no EndpointSlice of Services " + svcs[0].Name + " and " + svcs[1].Name + tail
	case 3:
		return "no EndpointSlice of Services " + svcs[0].Name + ", " + svcs[1].Name + " and " + svcs[2].Name + tail
	default:
		return "no EndpointSlice of " + strconv.Itoa(n) + " Services (" + svcs[0].Name + ", " + svcs[1].Name + ", " + svcs[2].Name + ", …)" + tail
	}
}

// eventEvidence groups warning events (and the kubelet's Normal "Killing" of a container that
// failed its liveness probe) by reason and message, with the object names, generated suffixes
// and variable words (addresses, counters) taken out of the key.
func eventEvidence(b *evidenceBuilder, w *workload) {
	obs := w.observe()
	for k := obs.events.from; k < obs.events.to; k++ {
		o := &obs.list[k]
		if !facts.EventFailing(o.Status, o.Reason, o.Text) {
			continue
		}
		at := o.At
		b.addObserved(int(k), SourceEvent, o.Reason, normalizeEventText(o.Object.Name, string(o.Object.UID), o.Text), o.Text, o.Object.String(), o.Count, &at)
	}
}

var backoffDuration = regexp.MustCompile(`(?i)back-off [0-9hms.]+`)

// normalizeEventText is message m about the object name (uid) with what varies between
// occurrences of the same event taken out.
func normalizeEventText(name, uid, m string) string {
	if name != "" {
		m = strings.ReplaceAll(m, name, "<name>")
	}
	if uid != "" {
		m = strings.ReplaceAll(m, uid, "<uid>")
	}
	// client-go's EventCorrelator rewrites the tenth similar event with this prefix.
	m = strings.TrimPrefix(m, "(combined from similar events): ")
	// Each expression runs only where its literal part is: "<name>-", and "-off" (its letters
	// fold to no other, so (?i) matches nothing without them).
	if strings.Contains(m, "<name>-") {
		m = generatedSuffix.ReplaceAllString(m, "$1-<suffix>")
	}
	if hasDashOff(m) {
		m = backoffDuration.ReplaceAllString(m, "back-off <d>")
	}
	return facts.Key(m)
}

// hasDashOff reports whether s holds "-off" in any case.
func hasDashOff(s string) bool {
	for i := 0; i+4 <= len(s); i++ {
		if s[i] == '-' && s[i+1]|0x20 == 'o' && s[i+2]|0x20 == 'f' && s[i+3]|0x20 == 'f' {
			return true
		}
	}
	return false
}

// generatedSuffix is the random suffix the API server appends to generateName (its alphabet has
// no vowels and no 0, 1, 3), as in a pod named in a ReplicaSet's FailedCreate.
var generatedSuffix = regexp.MustCompile(`(<name>)-[bcdfghjklmnpqrstvwxz2456789]{5}\b`)

var backoffPull = regexp.MustCompile(`^Back-off pulling image "[^"]*": (ErrImagePull: )?`)

// maxLogSignals bounds the distinct log lines kept per workload: the evidence is the pattern.
const maxLogSignals = 3

// logEvidence keeps failure lines from the copies' logs, grouped by their text without
// timestamps. kubectl's own "Request log error" lines say only that a container never started.
func logEvidence(b *evidenceBuilder, w *workload) {
	// A serving copy's log does not explain a failure: a workload whose copies all serve (most
	// workloads) has nothing to read.
	if !slices.ContainsFunc(w.cls.copies, func(f *copyFacts) bool { return !f.Serving }) {
		return
	}
	lb := newEvidence()
	obs := w.observe()
	// The lines each item was read from are noted in the worker's room and given to the items
	// kept, at their length: appended to every item, they were a tenth of what a broken
	// workload allocated, most of it for items dropped or room to spare.
	cites := w.texts.citeRoom()
	for i, f := range w.cls.copies {
		// A serving copy's log does not explain a failure.
		if f.Serving {
			continue
		}
		obj := "Pod/" + f.Pod.Name
		// Every copy logs the same failure: each distinct line is reduced once (its
		// observations share the text's facts). A nil reduction reports no failure.
		from, to := obs.logLines(i)
		for k := from; k < to; k++ {
			ob := &obs.list[k]
			lf := obs.lineAt(k)
			if lf == nil || lf.logItem == nil || lf.logOwner != lb {
				sig := ob.Signal()
				if !sig.Failing {
					continue
				}
				e := lb.add(SourceLog, "LogLine", sig.Key, sig.Text, obj, 1, nil)
				cites = append(cites, lineCite{e, int32(k)})
				if lf != nil {
					lf.logItem, lf.logOwner = e, lb
				}
				continue
			}
			// The same text again: its item is known, and mostly so is the copy.
			e := lf.logItem
			if e.Objects[len(e.Objects)-1] != obj {
				lb.cover(e, obj)
			}
			e.Count++
			cites = append(cites, lineCite{e, int32(k)})
		}
	}
	defer func() { w.texts.keepCiteRoom(cites) }()
	if len(lb.order) == 0 {
		return
	}
	keys := make([]evidenceKey, len(lb.order))
	for i, j := range lb.order {
		keys[i] = lb.keys[j]
	}
	sortStable(keys, func(a, b evidenceKey) bool { return lb.get(a).Count > lb.get(b).Count })
	for i, k := range keys {
		if i == maxLogSignals {
			break
		}
		e := lb.get(k)
		sort.Strings(e.Objects)
		e.Observations = citesOf(e, cites)
		b.put(k, e)
	}
}

// lineCite is a log line (its index in the observations) an evidence item was read from.
type lineCite struct {
	item *Evidence
	obs  int32
}

// citesOf returns the lines cites notes for e, in order.
func citesOf(e *Evidence, cites []lineCite) []int32 {
	n := 0
	for _, c := range cites {
		if c.item == e {
			n++
		}
	}
	out := make([]int32, 0, n)
	for _, c := range cites {
		if c.item == e {
			out = append(out, c.obs)
		}
	}
	return out
}

func revisionEvidence(b *evidenceBuilder, w *workload) {
	h := &w.cls.history
	obj := w.object()
	switch {
	case w.Kind == "Job":
		// A Job has one template: its conditions say how it ended, there is nothing to compare.
		return
	case h.NoReplicaSets && w.cls.sight.byController():
		b.add(SourceVisibility, "NoReplicaSets", "", "the snapshot holds no ReplicaSet of the Deployment: revisions are unknown", obj, 1, nil)
		return
	case h.NoReplicaSets:
		b.add(SourceVisibility, "NoReplicaSets", "", "the snapshot holds no ReplicaSet of the Deployment: copies were found by its selector and revisions are unknown", obj, 1, nil)
		return
	case h.Current == nil:
		return
	case h.LastServing == nil && w.cls.sight.byController() && w.cls.ctrl.Available > 0:
		// Whether a revision served is read from its copies; without them the controller's
		// available count is the only word, and it is in ControllerCounts.
		return
	case h.LastServing == nil:
		msg := fmt.Sprintf("revision %d is the only revision and no copy of it has served", h.Current.Number)
		switch {
		case h.ServedEarly:
			// It served, but the failure began in its early life: no revision served apart from it.
			msg = fmt.Sprintf("revision %d served (%s) but the failure began in its first moments, and no revision before it served", h.Current.Number, h.Current.Served)
		case len(h.Revisions) > 1:
			msg = fmt.Sprintf("no revision of %d shows that it served", len(h.Revisions))
		}
		b.add(SourceRevisionHistory, "NeverServed", "", msg+failedFromStartText(h.Current), obj, 1, nil)
	case h.LastServing == h.Current:
		b.add(SourceRevisionHistory, "UnchangedSinceServing", "",
			"revision "+strconv.FormatInt(h.Current.Number, 10)+" is current and served ("+h.Current.Served+"): the spec is unchanged since it served", obj, 1, nil)
	default:
		paths := changedPaths(w.Changes)
		shown := paths
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(paths)-5))
		}
		b.add(SourceRevisionHistory, "ChangedSinceServing", "",
			fmt.Sprintf("revision %d changed %d field(s) since revision %d served (%s): %s",
				h.Current.Number, len(paths), h.LastServing.Number, h.LastServing.Served, strings.Join(shown, ", "))+failedFromStartText(h.Current), obj, 1, nil)
	}
}

// failedFromStartText says why a revision whose copies were Ready for a while is not counted as
// served.
func failedFromStartText(rev *revision) string {
	ff := rev.FailedFromStart
	if ff == nil {
		return ""
	}
	return fmt.Sprintf("; revision %d's copies were Ready for a while but failed from their first moments: %s logged %q at %s, %s after it started, and still logs it",
		rev.Number, ff.Pod, rules.Clip(facts.ReadLine(ff.Line).Text, 120), clock(ff.At), humanDuration(ff.At.Sub(ff.Started)))
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

package diagnose

import (
	"cmp"
	"runtime"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Diagnose classifies every Deployment, StatefulSet, DaemonSet, ownerless ReplicaSet, CronJob and
// Job no CronJob owns of the snapshot. It is pure: the snapshot's reference time is "now", and
// the snapshot is only read (its indexes are built if they were not).
func Diagnose(s *snapshot.Snapshot) *Report { return diagnose(s, nil) }

func diagnose(s *snapshot.Snapshot, done <-chan struct{}) *Report {
	s.Index()
	r := newReport(s)
	// Each workload is diagnosed by the worker that read it, right after: no worker waits for
	// the others between reading and diagnosing, and the working state goes as it is done.
	p := planCollect(s, nil)
	defer p.fileServicesAhead()()
	ds := diagnoseEach(s, p.len(), p.workload, done, runtime.GOMAXPROCS(0))
	if ds == nil && closed(done) {
		return r
	}
	for i := range ds {
		r.Summary[ds[i].Shape]++
	}
	if ds != nil {
		r.Workloads = ds
	}
	sortWorkloads(r)
	groupSharedDependencies(r)
	return r
}

// newReport is the report of s with no workload in it yet.
func newReport(s *snapshot.Snapshot) *Report {
	r := &Report{
		APIVersion: APIVersion, Kind: ReportKind, ReferenceTime: s.ReferenceTime, Source: s.Source,
		Visibility: append([]snapshot.Visibility{}, s.Visibility...), Summary: map[Shape]int{},
		SharedDependencies: []SharedDependency{}, Workloads: []Diagnosis{},
	}
	for _, sh := range Shapes {
		r.Summary[sh] = 0
	}
	return r
}

// sortWorkloads orders a report's workloads worst first, then by namespace, name and kind.
func sortWorkloads(r *Report) {
	// A diagnosis is large: sort its place, with its severity read once, then move each into
	// place along the permutation's cycles, without a second list of diagnoses (2.5 MB at
	// 10,000 workloads).
	type key struct {
		severity int
		at       int
	}
	ws := r.Workloads
	keys := make([]key, len(ws))
	for i := range ws {
		keys[i] = key{ws[i].Shape.Severity(), i}
	}
	slices.SortStableFunc(keys, func(x, y key) int {
		return compareWorkloads(&ws[x.at], &ws[y.at], x.severity, y.severity)
	})
	// Place i takes the diagnosis at keys[i].at; a place is marked done by at = -1.
	for i := range keys {
		if keys[i].at < 0 || keys[i].at == i {
			continue
		}
		held := ws[i]
		j := i
		for {
			from := keys[j].at
			keys[j].at = -1
			if from == i {
				ws[j] = held
				break
			}
			ws[j] = ws[from]
			j = from
		}
	}
}

// compareWorkloads is the report's order of a and b, whose shapes' severities are sa and sb.
func compareWorkloads(a, b *Diagnosis, sa, sb int) int {
	if sa != sb {
		return cmp.Compare(sa, sb)
	}
	if a.Namespace != b.Namespace {
		return strings.Compare(a.Namespace, b.Namespace)
	}
	if a.Name != b.Name {
		return strings.Compare(a.Name, b.Name)
	}
	return strings.Compare(a.Kind, b.Kind)
}

// diagnoseWorkload runs the passes in order: counts, revisions, copies, rollout, shape, evidence;
// then the suspect half (rankSuspects, signalGaps); then cause, headline and fix.
func diagnoseWorkload(s *snapshot.Snapshot, w *workload) Diagnosis {
	ref := s.ReferenceTime
	w.Snap = s
	indexRevisions(w)
	youngest, oldest := count(s, w, ref)
	if isBatch(w.Kind) {
		batchCounts(w)
	}
	w.findServing()
	w.observe()
	w.cls.copies = w.texts.copyRefs(len(w.Pods))
	facts := w.texts.copyFacts(len(w.Pods))
	for i := range w.Pods {
		fillCopy(&facts[i], w, i, ref)
		w.cls.copies[i] = &facts[i]
	}
	w.cls.rollout = readRollout(w, ref)
	w.cls.failedCreate = readFailedCreate(w)
	w.Shape = classify(w, ref)
	// The onset places the failure in the life of its revision: one that began in the early
	// life of a revision that served only then is that revision's, and the spec it is
	// compared with is the one that served before it.
	var o onset
	if w.Shape.Broken() {
		o = findOnset(w)
		w.settleBaseline(o)
	}
	w.diffRevisions()
	w.Evidence = gatherEvidence(s, w, ref)
	tp := readThroughput(s, w)

	d := Diagnosis{
		Kind: w.Kind, Namespace: w.Namespace, Name: w.Name, Shape: w.Shape, Counts: w.Counts,
		YoungestCopySeconds: youngest, OldestCopySeconds: oldest,
		Suspects: []Suspect{}, Evidence: w.Evidence, SignalGaps: []SignalGap{},
	}
	// A field is only a suspect of a failure: healthy workloads have none, and a rollout still
	// progressing has them only when its new copies show a failure signal, at low confidence
	// since the rollout may yet complete. An intended state names the field that holds it
	// (spec.suspend, the node selector), so the row says what to change when it is not meant.
	switch {
	case w.Shape.Broken() || w.Shape == ShapeUnknown || w.Shape.Intended():
		if ss := rankSuspects(w); ss != nil {
			d.Suspects = ss
		}
	case w.Shape == ShapeProgressing && w.cls.failingWhileProgressing != "":
		if ss := rankSuspects(w); ss != nil {
			for i := range ss {
				ss[i].Confidence = ConfidenceLow
			}
			d.Suspects = ss
		}
	}
	for i := range d.Suspects {
		d.Suspects[i].Segments = fieldpath.Of(d.Suspects[i].Path)
	}
	if gs := signalGaps(w); gs != nil {
		d.SignalGaps = gs
	}
	var top *Suspect
	if len(d.Suspects) > 0 {
		top = &d.Suspects[0]
	}
	d.Cause, d.Argument = argueCause(w, w.Shape, top, o)
	if isBatch(w.Kind) && w.Shape.Broken() {
		if c := batchCause(top, d.Cause); c != d.Cause {
			d.Cause, d.Argument = c, batchArgument(top, c)
		}
	}
	if e := onsetEvidence(w, top, d.Cause, o); e != nil {
		d.Evidence = append(d.Evidence, *e)
	}
	d.Timeline = buildTimeline(w, top, o)
	d.Headline = withControllerWord(w, headline(w, w.Shape))
	d.Fix = fix(w, w.Shape, d.Cause, top)
	if h := &w.cls.history; h.Current != nil {
		d.Revisions = &Revisions{Current: w.CurrentRevision, LastServing: w.LastServingRevision, ChangedPaths: changedPaths(w.Changes)}
	}
	d.Detail = &Detail{CurrentRevision: w.CurrentRevision, LastServingRevision: w.LastServingRevision, Changes: w.Changes}
	if t := w.cls.target; t != nil && w.Shape.Broken() {
		t.changed = changedAddress(w, t)
		d.Detail.target = t
	}
	d.Detail.copies = newCopyList(w, ref)
	tp.settle(w, &d)
	if isBatch(w.Kind) {
		settleBatch(w, &d)
	}
	nameElements(w, d.Suspects)
	d.Waived = waiverOf(w, &d)
	w.obs.settle()
	d.Detail.observations = w.obs.report()
	return d
}

// indexRevisions files each copy's revision by its place in w.Pods, which collectShared
// wrote as the revisions' copies in order, then those of none: a lookup by UID compared
// strings for every copy, and took a map beyond a few.
func indexRevisions(w *workload) {
	revAt := w.texts.revRoom(len(w.Pods))
	i := 0
	for _, rev := range w.cls.Revisions {
		for _, p := range rev.Pods {
			if i == len(w.Pods) || w.Pods[i] != p {
				// Not collectShared's order (a workload put together by hand): by pod.
				indexRevisionsByPod(w, revAt)
				return
			}
			revAt[i] = rev
			i++
		}
	}
	clear(revAt[i:])
	w.cls.revAt = revAt
}

func indexRevisionsByPod(w *workload, revAt []*revision) {
	clear(revAt)
	of := make(map[*corev1.Pod]*revision)
	for _, rev := range w.cls.Revisions {
		for _, p := range rev.Pods {
			of[p] = rev
		}
	}
	for i, p := range w.Pods {
		revAt[i] = of[p]
	}
	w.cls.revAt = revAt
}

// sortCopies orders copies worst first: not serving before serving, the current revision before
// older ones, then by name.
func sortCopies(cs []Copy, current string) {
	rank := func(c Copy) int {
		r := 0
		if c.Serving {
			r += 2
		}
		if c.Revision != current {
			r++
		}
		return r
	}
	sortStable(cs, func(a, b Copy) bool {
		if ri, rj := rank(a), rank(b); ri != rj {
			return ri < rj
		}
		if a.Revision != b.Revision {
			ni, _ := strconv.Atoi(a.Revision)
			nj, _ := strconv.Atoi(b.Revision)
			return ni > nj
		}
		return a.Name < b.Name
	})
}

// Find returns the diagnosis of one workload, or nil.
func (r *Report) Find(kind, namespace, name string) *Diagnosis {
	for i := range r.Workloads {
		w := &r.Workloads[i]
		if w.Kind == kind && w.Namespace == namespace && w.Name == name {
			return w
		}
	}
	return nil
}

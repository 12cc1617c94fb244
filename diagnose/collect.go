package diagnose

import (
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Annotations and labels the controllers write and the engine reads.
const (
	revisionAnnotation    = "deployment.kubernetes.io/revision"
	podTemplateHashLabel  = "pod-template-hash"
	controllerRevisionKey = "controller-revision-hash"
)

// specTemplate is where the workload kinds keep their pod template, but a CronJob: the one
// path the adapters of internal/kinds share. A path is never changed once made (Child makes a
// new one), so every workload shares this one, and specOf and the gap checks know it by its
// pointer.
var specTemplate = kinds.Deployment.TemplatePath

// specTemplateSpec is specTemplate.Child("spec"), shared as specTemplate is: every workload's
// gap checks and suspect rules start from it.
var specTemplateSpec = specTemplate.Child("spec")

// specOf is tp.Child("spec"), the shared one under specTemplate.
func specOf(tp *field.Path) *field.Path {
	if tp == specTemplate {
		return specTemplateSpec
	}
	return tp.Child("spec")
}

// revision is one pod template a workload has run, as its controller recorded it: a ReplicaSet
// of a Deployment, or a ControllerRevision of a StatefulSet or DaemonSet.
type revision struct {
	// Number is the controller's revision number; Name the ReplicaSet or ControllerRevision name.
	Number  int64
	Name    string
	Created time.Time
	// Template is nil when a ControllerRevision's data could not be decoded.
	Template *corev1.PodTemplateSpec
	// ReplicaSet is set for Deployments, Job for Jobs and CronJobs.
	ReplicaSet *appsv1.ReplicaSet
	Job        *batchv1.Job
	// Run is what the Job's status says (its conditions, its start), read once; zero
	// without a Job.
	Run facts.Controller
	// GonePodEvents are the events of a finished Job's pods that are no longer there.
	GonePodEvents []*corev1.Event
	Pods          []*corev1.Pod
	// Served is why the engine believes the revision served; empty when it does not.
	Served string
	// Episode is the longest stretch it is known to have served without this failure
	// (serving.go); nil when none is known.
	Episode *episode
	// Contested is a controller's record of the revision serving that its copies' restarts
	// put in doubt (a crash loop passes for available between kills), when no line they
	// logged settles it.
	Contested *episode
	// FailedFromStart is set when the revision looked as if it served (Ready for a while) but
	// its copies showed the failure from their first moments.
	FailedFromStart *failedFromStart
}

// collectSome gathers the workloads of the snapshot that want accepts with their copies,
// revisions, events, logs and Services, using only the snapshot's indexes so the whole pass is
// linear; want is asked once about every workload of the snapshot, and nil accepts all.
func collectSome(s *snapshot.Snapshot, want func(kind, namespace, name string) bool) []*workload {
	p := planCollect(s, want)
	out := make([]*workload, p.len())
	forEach(len(out), runtime.GOMAXPROCS(0), func(k int) { out[k] = p.workload(k, nil) })
	return out
}

// collectPlan is what collecting needs decided before any workload is read: which objects are
// workloads, in the snapshot's order, and the indexes every workload's reading shares. Reading
// each workload (workload) is independent of the others, so workers share them, and the
// engine diagnoses a workload as soon as it is read (diagnoseEach), while its objects are
// still in the cache, instead of reading them all first.
type collectPlan struct {
	s      *snapshot.Snapshot
	tasks  []collectTask
	built  []*workload // StatefulSets and DaemonSets, read in planCollect
	batch  []*workload // CronJobs and Jobs, read in planCollect
	svcs   *serviceIndex
	logged *podFacts
	podsIn func(ns string, ls *metav1.LabelSelector) []*corev1.Pod
}

// planCollect decides the workloads of s that want accepts (nil accepts all); want is asked in
// the snapshot's order, once each.
func planCollect(s *snapshot.Snapshot, want func(kind, namespace, name string) bool) *collectPlan {
	take := func(kind, namespace, name string) bool { return want == nil || want(kind, namespace, name) }
	p := &collectPlan{s: s, svcs: newServiceIndex(s)}
	// The index of logged pods depends on nothing below: built beside it.
	var wg sync.WaitGroup
	wg.Go(func() {
		if want == nil {
			p.logged = newPodFacts(s)
		}
	})
	p.tasks = make([]collectTask, 0, len(s.Deployments))
	deployments := make(map[types.UID]bool, len(s.Deployments))
	for i, d := range s.Deployments {
		deployments[d.UID] = true
		if take("Deployment", d.Namespace, d.Name) {
			p.tasks = append(p.tasks, collectTask{kind: taskDeployment, i: i})
		}
	}
	// A ReplicaSet is a workload of its own unless a Deployment of the snapshot owns it: one
	// made by hand, or by a controller the engine does not model, is still diagnosed. Each
	// ReplicaSet is read, and there are more than Deployments: when want asks nothing, they
	// are read beside the kinds below.
	var rsTasks []collectTask
	readReplicaSets := func() {
		for i, rs := range s.ReplicaSets {
			owned := false
			for j := range rs.OwnerReferences {
				if deployments[rs.OwnerReferences[j].UID] {
					owned = true
					break
				}
			}
			if !owned && take("ReplicaSet", rs.Namespace, rs.Name) {
				rsTasks = append(rsTasks, collectTask{kind: taskReplicaSet, i: i})
			}
		}
	}
	if want == nil {
		wg.Go(readReplicaSets)
	}
	// StatefulSets and DaemonSets are read here: ControllerRevisionsOwnedBy sorts the
	// snapshot's own list in place, which two workers must not do at once.
	for _, st := range s.StatefulSets {
		if take("StatefulSet", st.Namespace, st.Name) {
			p.tasks = append(p.tasks, collectTask{kind: taskBuilt, i: len(p.built)})
			p.built = append(p.built, collectStatefulSet(s, st))
		}
	}
	for _, ds := range s.DaemonSets {
		if take("DaemonSet", ds.Namespace, ds.Name) {
			p.tasks = append(p.tasks, collectTask{kind: taskBuilt, i: len(p.built)})
			p.built = append(p.built, collectDaemonSet(s, ds))
		}
	}
	if want != nil {
		// want is asked in the snapshot's order, from one goroutine.
		readReplicaSets()
	}
	p.batch = collectBatch(s)
	// The pods a ReplicaSet controls are filed by namespace and label only when a Deployment
	// without ReplicaSets needs them: thousands of such Deployments in one namespace would
	// otherwise each test every pod of it.
	rsPods := sync.OnceValue(func() map[string]*labelIndex { return newLabelIndexes(s.Pods) })
	p.podsIn = func(ns string, ls *metav1.LabelSelector) []*corev1.Pod {
		idx := rsPods()[ns]
		if idx == nil {
			return nil
		}
		return idx.candidates(ls)
	}
	wg.Wait()
	p.tasks = append(p.tasks, rsTasks...)
	if want != nil {
		// Rediagnose collects the workloads that changed, most often a few: asking the
		// snapshot about each of their copies costs less than filing every event and log
		// tail of the namespace on every update.
		if p.len() <= fewWorkloads {
			p.logged = &podFacts{every: true}
		} else {
			p.logged = newPodFacts(s)
		}
	}
	return p
}

// fewWorkloads is how many workloads a plan collects before filing the snapshot's events and
// logs by copy pays.
const fewWorkloads = 64

// len is how many workloads the plan holds.
func (p *collectPlan) len() int { return len(p.tasks) + len(p.batch) }

// workload reads the plan's k-th workload; each k is read once, by one worker.
func (p *collectPlan) workload(k int, room *workload) *workload {
	s := p.s
	var w *workload
	if k < len(p.tasks) {
		switch t := p.tasks[k]; t.kind {
		case taskDeployment:
			w = collectDeployment(s, s.Deployments[t.i], p.podsIn, room)
		case taskBuilt:
			w = p.built[t.i]
		case taskReplicaSet:
			w = collectReplicaSet(s, s.ReplicaSets[t.i], room)
		}
	} else {
		w = p.batch[k-len(p.tasks)]
	}
	collectShared(s, p.svcs, p.logged, w)
	return w
}

// namespace is the namespace of workload k.
func (p *collectPlan) namespace(k int) string {
	if k >= len(p.tasks) {
		return p.batch[k-len(p.tasks)].Namespace
	}
	switch t := p.tasks[k]; t.kind {
	case taskDeployment:
		return p.s.Deployments[t.i].Namespace
	case taskBuilt:
		return p.built[t.i].Namespace
	default:
		return p.s.ReplicaSets[t.i].Namespace
	}
}

// fileServicesAhead files the Services of the namespaces of the plan's workloads, in their
// order, on a goroutine of its own, and returns what waits for it to finish. The workers find
// most namespaces filed already, and one that waits for a namespace being filed gives its
// core to the filing: filed by the workers alone, the namespace both were reading was filed
// by one while the other waited.
func (p *collectPlan) fileServicesAhead() (wait func()) {
	var wg sync.WaitGroup
	wg.Go(func() {
		last := ""
		for k := range p.len() {
			if ns := p.namespace(k); k == 0 || ns != last {
				p.svcs.in(ns)
				last = ns
			}
		}
	})
	return wg.Wait
}

// collectTask is one object of the snapshot that is a workload: its kind and index in the
// snapshot's list of that kind (or in the workloads read already).
type collectTask struct {
	kind uint8
	i    int
}

const (
	taskDeployment uint8 = iota
	taskReplicaSet
	taskBuilt // read before the workers start
)

// collectShared fills what every kind gathers the same way once its revisions are known: the
// copies, their events and logs, claims and Services.
func collectShared(s *snapshot.Snapshot, svcs *serviceIndex, pf *podFacts, w *workload) {
	for _, rev := range w.cls.Revisions {
		sortPods(rev.Pods)
		w.Pods = append(w.Pods, rev.Pods...)
	}
	sortPods(w.cls.Unrevisioned)
	w.Pods = append(w.Pods, w.cls.Unrevisioned...)
	if w.cls.Current != nil {
		w.CurrentPods = w.cls.Current.Pods
		w.CurrentRevision = strconv.FormatInt(w.cls.Current.Number, 10)
	}
	events := pf.appendEvents(s, nil, w.Kind, w.Namespace, w.Name, w.UID)
	for _, rs := range w.ReplicaSets {
		events = pf.appendEvents(s, events, "ReplicaSet", rs.Namespace, rs.Name, rs.UID)
	}
	for _, rev := range w.cls.Revisions {
		if j := rev.Job; j != nil && j.UID != w.UID {
			events = pf.appendEvents(s, events, "Job", j.Namespace, j.Name, j.UID)
		}
		events = append(events, rev.GonePodEvents...)
	}
	claims := map[string]bool{}
	for _, p := range w.Pods {
		events = pf.appendEvents(s, events, "Pod", p.Namespace, p.Name, p.UID)
		for ix := range p.Spec.Volumes {
			v := &p.Spec.Volumes[ix]
			if v.PersistentVolumeClaim != nil {
				claims[v.PersistentVolumeClaim.ClaimName] = true
			}
		}
		if !pf.mayHaveLogs(p) {
			continue
		}
		// By index: a container is large, and copying them per pod showed in profiles.
		for _, cs := range [2][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
			for i := range cs {
				for _, prev := range [2]bool{false, true} {
					if l := s.Log(p.Namespace, p.Name, cs[i].Name, prev); l != nil {
						w.Logs = append(w.Logs, l)
					}
				}
			}
		}
	}
	// A StatefulSet's claims exist before (and without) a scheduled pod: name them from the
	// templates so an unbound claim is seen even when its pod never got a volume.
	if st, ok := w.Object.(*appsv1.StatefulSet); ok {
		for _, t := range st.Spec.VolumeClaimTemplates {
			for i := int32(0); i < replicasOrOne(st.Spec.Replicas); i++ {
				claims[t.Name+"-"+st.Name+"-"+strconv.Itoa(int(i))] = true
			}
		}
	}
	names := make([]string, 0, len(claims))
	for n := range claims {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if pvc := s.PersistentVolumeClaim(w.Namespace, n); pvc != nil {
			w.Claims = append(w.Claims, pvc)
			events = pf.appendEvents(s, events, "PersistentVolumeClaim", pvc.Namespace, pvc.Name, pvc.UID)
		}
	}
	w.Events = dedupeEvents(withoutNotes(events), w.texts)
	attachServices(s, svcs, w)
}

// sortPods orders copies by name; one comparison a pair, where sortStable's less is asked twice.
func sortPods(pods []*corev1.Pod) {
	slices.SortStableFunc(pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
}

// dedupeEvents drops events found twice (by UID and by name: the same event) and orders them
// oldest first by eventTime, then by name, then as found. The worker's room, when texts has one,
// holds the times while they are sorted.
func dedupeEvents(events []*corev1.Event, texts *textCache) []*corev1.Event {
	out := events[:0]
	if len(events) <= fewEvents {
		for _, e := range events {
			if !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	} else {
		seen := make(map[*corev1.Event]bool, len(events))
		for _, e := range events {
			if !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	if len(out) < 2 {
		return out
	}
	// Each event's time is read once: compared through a less function, each comparison read
	// four, which was a tenth of the engine's time on a dump whose every pod has its events.
	ds := texts.eventRoom(len(out))
	for i, e := range out {
		ds[i] = datedEvent{at: eventTime(e), e: e}
	}
	slices.SortStableFunc(ds, func(a, b datedEvent) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return strings.Compare(a.e.Name, b.e.Name)
	})
	for i := range ds {
		out[i] = ds[i].e
	}
	return out
}

// fewEvents is the longest list dedupeEvents scans for events found twice rather than making
// a map: most workloads have a few events per copy.
const fewEvents = 64

// datedEvent is an event and its eventTime, as dedupeEvents sorts them.
type datedEvent struct {
	at time.Time
	e  *corev1.Event
}

// eventTime is when an event was last seen, from whichever of the core/v1 and events.k8s.io/v1
// fields its writer filled.
func eventTime(e *corev1.Event) time.Time {
	t := e.LastTimestamp.Time
	if e.Series != nil && e.Series.LastObservedTime.After(t) {
		t = e.Series.LastObservedTime.Time
	}
	if e.EventTime.After(t) {
		t = e.EventTime.Time
	}
	if t.IsZero() {
		t = e.FirstTimestamp.Time
	}
	if t.IsZero() {
		t = e.CreationTimestamp.Time
	}
	return t
}

// eventCount is how many times an event was seen.
func eventCount(e *corev1.Event) int32 {
	if e.Series != nil && e.Series.Count > 0 {
		return e.Series.Count
	}
	if e.Count > 0 {
		return e.Count
	}
	return 1
}

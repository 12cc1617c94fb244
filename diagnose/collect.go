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
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Annotations and labels the controllers write and the engine reads.
const (
	revisionAnnotation    = "deployment.kubernetes.io/revision"
	podTemplateHashLabel  = "pod-template-hash"
	controllerRevisionKey = "controller-revision-hash"
)

// specTemplate is where the workload kinds the engine reads keep their pod template. A path is
// never changed once made (Child makes a new one), so every workload shares this one.
var specTemplate = field.NewPath("spec", "template")

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
	// GonePodEvents are the events of a finished Job's pods that are no longer there.
	GonePodEvents []*corev1.Event
	Pods          []*corev1.Pod
	// Served is why the engine believes the revision served; empty when it does not.
	Served string
	// FailedFromStart is set when the revision looked as if it served (Ready for a while) but
	// its copies showed the failure from their first moments.
	FailedFromStart *failedFromStart
}

// collectWorkloads gathers every workload of the snapshot with its copies, revisions, events,
// logs and Services, using only the snapshot's indexes so the whole pass is linear.
func collectWorkloads(s *snapshot.Snapshot) []*workload { return collectSome(s, nil) }

// collectSome is collectWorkloads for the workloads want accepts; want is asked once about every
// workload of the snapshot, and nil accepts all.
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

// serviceIndex finds the Services that may concern a workload without testing every Service of
// a namespace against every workload: a Service selecting the workload has all its selector
// pairs among the pods' labels, so it is filed under one of them. A namespace's Services are
// filed when a workload of it first asks (in), by the worker that asks: filing every
// namespace's before the workers started was the longest step no worker shared, and a
// Rediagnose of a few workloads files only their namespaces. The snapshot keeps what is filed
// (ServicesFiled) for as long as the Services are unchanged: a watch's next snapshot files no
// namespace again.
type serviceIndex struct {
	snap *snapshot.Snapshot
	// list, mu and nss file Services given as a list (serviceIndexOf), for tests.
	list func(namespace string) []*corev1.Service
	mu   sync.Mutex
	nss  map[string]*nsServices
}

// nsServices is one namespace's Services, filed.
type nsServices struct {
	once    sync.Once
	byPair  map[labelPair][]*corev1.Service // the selector's first pair
	byName  map[string]*corev1.Service
	byLabel map[string][]*corev1.Service // app.kubernetes.io/name label value
	// firstKeys are the distinct keys byPair files the Services under: a label of another key
	// finds nothing there, so a copy is asked for these rather than walked.
	firstKeys []string
}

// labelPair is a key=value; struct keys make lookups allocation-free.
type labelPair struct{ key, value string }

// newServiceIndex files the snapshot's Services.
func newServiceIndex(s *snapshot.Snapshot) *serviceIndex { return &serviceIndex{snap: s} }

// fileServices is nsServices.file as ServicesFiled takes it.
func fileServices(svcs []*corev1.Service) any {
	n := &nsServices{}
	n.file(svcs)
	return n
}

// serviceIndexOf files svcs, whatever their namespaces.
func serviceIndexOf(svcs []*corev1.Service) *serviceIndex {
	byNS := map[string][]*corev1.Service{}
	for _, svc := range svcs {
		byNS[svc.Namespace] = append(byNS[svc.Namespace], svc)
	}
	return &serviceIndex{list: func(ns string) []*corev1.Service { return byNS[ns] }, nss: map[string]*nsServices{}}
}

// in returns the namespace's Services, filed by the first caller; a caller that asks while
// they are being filed waits for them.
func (ix *serviceIndex) in(namespace string) *nsServices {
	if ix.snap != nil {
		return ix.snap.ServicesFiled(namespace, fileServices).(*nsServices)
	}
	ix.mu.Lock()
	n := ix.nss[namespace]
	if n == nil {
		n = &nsServices{}
		ix.nss[namespace] = n
	}
	ix.mu.Unlock()
	n.once.Do(func() { n.file(ix.list(namespace)) })
	return n
}

func (n *nsServices) file(svcs []*corev1.Service) {
	n.byPair = make(map[labelPair][]*corev1.Service, len(svcs))
	n.byName = make(map[string]*corev1.Service, len(svcs))
	n.byLabel = map[string][]*corev1.Service{}
	for _, svc := range svcs {
		n.byName[svc.Name] = svc
		if l := svc.Labels["app.kubernetes.io/name"]; l != "" {
			n.byLabel[l] = append(n.byLabel[l], svc)
		}
		if len(svc.Spec.Selector) == 0 {
			continue
		}
		// Filed under the selector's first key in order.
		first, found := "", false
		for k := range svc.Spec.Selector {
			if !found || k < first {
				first, found = k, true
			}
		}
		pair := labelPair{first, svc.Spec.Selector[first]}
		n.byPair[pair] = append(n.byPair[pair], svc)
		if !slices.Contains(n.firstKeys, first) {
			n.firstKeys = append(n.firstKeys, first)
		}
	}
}

// candidates returns, by name, the Services filed under any of the label sets'
// pairs, under the workload's name, or under its app.kubernetes.io/name.
func (ix *serviceIndex) candidates(w *workload) []*corev1.Service {
	out := serviceSet{room: w.texts}
	n := ix.in(w.Namespace)
	if keys := n.firstKeys; len(keys) <= smallUIDs {
		// Few keys file the namespace's Services (most often one, "app"): the template and
		// each copy are asked for those, and a copy's value its template has was looked up
		// already. A label of any other key finds nothing in byPair.
		for _, k := range keys {
			if v, ok := w.Template.Labels[k]; ok {
				out.add(n.byPair[labelPair{k, v}]...)
			}
		}
		for _, p := range w.Pods {
			for _, k := range keys {
				v, ok := p.Labels[k]
				if !ok {
					continue
				}
				if tv, ok := w.Template.Labels[k]; ok && tv == v {
					continue
				}
				out.add(n.byPair[labelPair{k, v}]...)
			}
		}
	} else {
		n.labelPairs(w, &out)
	}
	out.add(n.byName[w.Name])
	if l := w.Template.Labels["app.kubernetes.io/name"]; l != "" {
		out.add(n.byLabel[l]...)
	}
	// Names are unique in a namespace: no two compare equal.
	slices.SortFunc(out.list, func(a, b *corev1.Service) int { return strings.Compare(a.Name, b.Name) })
	return out.list
}

// serviceSet is the Services taken, each once. Few Services concern a workload: the list is
// scanned for the ones already taken, until it is long enough for a map, the worker's
// (textCache.serviceSeen), emptied for the set.
type serviceSet struct {
	list []*corev1.Service
	seen map[*corev1.Service]bool
	room *textCache
}

func (t *serviceSet) taken(svc *corev1.Service) bool {
	if t.seen != nil {
		return t.seen[svc]
	}
	return slices.Contains(t.list, svc)
}

func (t *serviceSet) add(svcs ...*corev1.Service) {
	if t.list == nil && len(svcs) > 0 {
		// The first Services added are most often all there will be.
		t.list = make([]*corev1.Service, 0, len(svcs))
	}
	for _, svc := range svcs {
		if svc == nil || t.taken(svc) {
			continue
		}
		t.list = append(t.list, svc)
		if t.seen != nil {
			t.seen[svc] = true
		} else if len(t.list) > smallUIDs {
			t.seen = t.room.serviceSeen()
			for _, x := range t.list {
				t.seen[x] = true
			}
		}
	}
}

// labelPairs adds the Services filed under any label pair of the template or of a copy,
// walking their labels: for a namespace whose Services are filed under many keys.
func (n *nsServices) labelPairs(w *workload, out *serviceSet) {
	for k, v := range w.Template.Labels {
		out.add(n.byPair[labelPair{k, v}]...)
	}
	// The pairs a copy has beyond its template's (its revision's hash) are most often its
	// siblings' too: the first few are remembered, so each is looked up once.
	var done [4][2]string
	nDone := 0
	for _, p := range w.Pods {
	labels:
		for k, v := range p.Labels {
			// A copy has its template's labels (and the revision's hash): those pairs
			// were looked up already.
			if tv, ok := w.Template.Labels[k]; ok && tv == v {
				continue
			}
			for _, d := range done[:nDone] {
				if d[0] == k && d[1] == v {
					continue labels
				}
			}
			if nDone < len(done) {
				done[nDone] = [2]string{k, v}
				nDone++
			}
			out.add(n.byPair[labelPair{k, v}]...)
		}
	}
}

func replicasOrOne(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

func selectorOf(ls *metav1.LabelSelector) labels.Selector {
	if ls == nil {
		return labels.Nothing()
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return labels.Nothing()
	}
	return sel
}

// labelIndex files the pods of one namespace whose controller is a ReplicaSet, in snapshot order,
// by each of their labels.
type labelIndex struct {
	all     []*corev1.Pod
	byLabel map[[2]string][]*corev1.Pod
}

func newLabelIndexes(pods []*corev1.Pod) map[string]*labelIndex {
	out := map[string]*labelIndex{}
	for _, p := range pods {
		if c := metav1.GetControllerOfNoCopy(p); c == nil || c.Kind != "ReplicaSet" {
			continue
		}
		idx := out[p.Namespace]
		if idx == nil {
			idx = &labelIndex{byLabel: map[[2]string][]*corev1.Pod{}}
			out[p.Namespace] = idx
		}
		idx.all = append(idx.all, p)
		for k, v := range p.Labels {
			idx.byLabel[[2]string{k, v}] = append(idx.byLabel[[2]string{k, v}], p)
		}
	}
	return out
}

// candidates are the pods that may match ls, in snapshot order: those carrying its rarest
// matchLabels pair (every pod it matches carries all of them), else all of them.
func (idx *labelIndex) candidates(ls *metav1.LabelSelector) []*corev1.Pod {
	if ls == nil || len(ls.MatchLabels) == 0 {
		return idx.all
	}
	var best []*corev1.Pod
	first := true
	for k, v := range ls.MatchLabels {
		if c := idx.byLabel[[2]string{k, v}]; first || len(c) < len(best) {
			best, first = c, false
		}
	}
	return best
}

func collectDeployment(s *snapshot.Snapshot, d *appsv1.Deployment, nsPods func(string, *metav1.LabelSelector) []*corev1.Pod, room *workload) *workload {
	w := inRoom(room)
	*w = workload{
		Kind: "Deployment", Namespace: d.Namespace, Name: d.Name, UID: d.UID, Object: d,
		Declared: replicasOrOne(d.Spec.Replicas),
		Template: &d.Spec.Template, TemplatePath: specTemplate,
		Created: d.CreationTimestamp.Time, texts: w.texts,
	}
	current := d.Annotations[revisionAnnotation]
	owned := s.ReplicaSetsOwnedBy(d.UID)
	if len(owned) > 0 {
		w.cls.Revisions = make([]*revision, 0, len(owned))
		w.ReplicaSets = make([]*appsv1.ReplicaSet, 0, len(owned))
	}
	revs := w.texts.revisionRoom(len(owned))
	for i, rs := range owned {
		n, _ := strconv.ParseInt(rs.Annotations[revisionAnnotation], 10, 64)
		rev := &revs[i]
		*rev = revision{Number: n, Name: rs.Name, Created: rs.CreationTimestamp.Time, Template: &rs.Spec.Template, ReplicaSet: rs}
		rev.Pods = controlledPods(s, rs.UID)
		w.cls.Revisions = append(w.cls.Revisions, rev)
		w.ReplicaSets = append(w.ReplicaSets, rs)
	}
	sortRevisions(w.cls.Revisions)
	w.cls.Current = currentByNumber(w.cls.Revisions, current)
	if len(w.cls.Revisions) == 0 {
		// `kubectl get deploy,pods` has no ReplicaSets: take the pods a ReplicaSet controls that
		// the Deployment's selector matches, with their revisions unknown.
		w.cls.NoReplicaSets = true
		sel := selectorOf(d.Spec.Selector)
		for _, p := range nsPods(d.Namespace, d.Spec.Selector) {
			if sel.Matches(labels.Set(p.Labels)) {
				w.cls.Unrevisioned = append(w.cls.Unrevisioned, p)
			}
		}
	}
	return w
}

// inRoom returns room, the worker's workload once the last it read is diagnosed, or a new one.
func inRoom(room *workload) *workload {
	if room == nil {
		return new(workload)
	}
	return room
}

// currentByNumber picks the revision whose number the workload's annotation names, else the newest.
func currentByNumber(revs []*revision, number string) *revision {
	n, err := strconv.ParseInt(number, 10, 64)
	if err == nil {
		for _, r := range revs {
			if r.Number == n {
				return r
			}
		}
	}
	if len(revs) == 0 {
		return nil
	}
	return revs[len(revs)-1]
}

func sortRevisions(revs []*revision) {
	sortStable(revs, func(a, b *revision) bool {
		if a.Number != b.Number {
			return a.Number < b.Number
		}
		return a.Created.Before(b.Created)
	})
}

// controlledPods returns the pods whose controller is uid; a pod adopted elsewhere is not a copy.
func controlledPods(s *snapshot.Snapshot, uid types.UID) []*corev1.Pod {
	owned := s.PodsOwnedBy(uid)
	var out []*corev1.Pod
	if len(owned) > 0 {
		out = make([]*corev1.Pod, 0, len(owned))
	}
	for _, p := range owned {
		// The index files a pod under each owner it names: with one, that owner is uid, and
		// the pod's controller is uid or none.
		if len(p.OwnerReferences) == 1 {
			out = append(out, p)
			continue
		}
		if c := metav1.GetControllerOfNoCopy(p); c == nil || c.UID == uid {
			out = append(out, p)
		}
	}
	return out
}

func collectStatefulSet(s *snapshot.Snapshot, st *appsv1.StatefulSet) *workload {
	w := &workload{
		Kind: "StatefulSet", Namespace: st.Namespace, Name: st.Name, UID: st.UID, Object: st,
		Declared: replicasOrOne(st.Spec.Replicas),
		Template: &st.Spec.Template, TemplatePath: specTemplate,
		VolumeClaimTemplates: st.Spec.VolumeClaimTemplates, Created: st.CreationTimestamp.Time,
	}
	// A StatefulSet's pods carry the full ControllerRevision name in controller-revision-hash.
	byName := map[string]*revision{}
	for _, cr := range s.ControllerRevisionsOwnedBy(st.UID) {
		rev := revisionOf(cr)
		w.cls.Revisions = append(w.cls.Revisions, rev)
		byName[cr.Name] = rev
	}
	pods := controlledPods(s, st.UID)
	w.cls.Current = byName[st.Status.UpdateRevision]
	if w.cls.Current == nil && len(w.cls.Revisions) > 0 {
		w.cls.Current = w.cls.Revisions[len(w.cls.Revisions)-1]
	}
	for _, p := range pods {
		if rev := byName[p.Labels[controllerRevisionKey]]; rev != nil {
			rev.Pods = append(rev.Pods, p)
		} else {
			w.cls.Unrevisioned = append(w.cls.Unrevisioned, p)
		}
	}
	return w
}

func collectDaemonSet(s *snapshot.Snapshot, ds *appsv1.DaemonSet) *workload {
	w := &workload{
		Kind: "DaemonSet", Namespace: ds.Namespace, Name: ds.Name, UID: ds.UID, Object: ds,
		Declared: ds.Status.DesiredNumberScheduled,
		Template: &ds.Spec.Template, TemplatePath: specTemplate,
		Created: ds.CreationTimestamp.Time,
	}
	// A DaemonSet's pods carry only the hash; the ControllerRevision has it as a label too and
	// is named <daemonset>-<hash>.
	byHash := map[string]*revision{}
	for _, cr := range s.ControllerRevisionsOwnedBy(ds.UID) {
		rev := revisionOf(cr)
		w.cls.Revisions = append(w.cls.Revisions, rev)
		if h := cr.Labels[controllerRevisionKey]; h != "" {
			byHash[h] = rev
		}
		byHash[cr.Name] = rev
	}
	if len(w.cls.Revisions) > 0 {
		w.cls.Current = w.cls.Revisions[len(w.cls.Revisions)-1]
	}
	for _, p := range controlledPods(s, ds.UID) {
		h := p.Labels[controllerRevisionKey]
		rev := byHash[h]
		if rev == nil {
			rev = byHash[ds.Name+"-"+h]
		}
		if rev != nil {
			rev.Pods = append(rev.Pods, p)
		} else {
			w.cls.Unrevisioned = append(w.cls.Unrevisioned, p)
		}
	}
	return w
}

func collectReplicaSet(s *snapshot.Snapshot, rs *appsv1.ReplicaSet, room *workload) *workload {
	w := inRoom(room)
	*w = workload{
		Kind: "ReplicaSet", Namespace: rs.Namespace, Name: rs.Name, UID: rs.UID, Object: rs,
		Declared: replicasOrOne(rs.Spec.Replicas),
		Template: &rs.Spec.Template, TemplatePath: specTemplate,
		Created: rs.CreationTimestamp.Time,
	}
	n, _ := strconv.ParseInt(rs.Annotations[revisionAnnotation], 10, 64)
	if n == 0 {
		n = 1
	}
	rev := &revision{Number: n, Name: rs.Name, Created: rs.CreationTimestamp.Time, Template: &rs.Spec.Template, ReplicaSet: rs}
	rev.Pods = controlledPods(s, rs.UID)
	w.cls.Revisions = []*revision{rev}
	w.cls.Current = rev
	w.ReplicaSets = []*appsv1.ReplicaSet{rs}
	return w
}

// podKey names a pod in its namespace.
type podKey struct{ namespace, name string }

// podFacts files which pods the snapshot has log tails and events of, so that a copy without
// them (most copies) costs a lookup or two, not a lookup per container and two for events.
type podFacts struct {
	// every says to ask the snapshot about every copy: nothing is filed.
	every bool
	logs  map[podKey]bool
	// eventUIDs holds the UIDs events name; keyedEvents the pods named by events without a
	// UID, which EventsFor also returns for a pod of that name.
	eventUIDs   map[types.UID]bool
	keyedEvents map[podKey]bool
}

func newPodFacts(s *snapshot.Snapshot) *podFacts {
	f := &podFacts{logs: podsWithLogs(s), eventUIDs: make(map[types.UID]bool, len(s.Events))}
	for _, e := range s.Events {
		if e.InvolvedObject.UID != "" {
			f.eventUIDs[e.InvolvedObject.UID] = true
			continue
		}
		if e.InvolvedObject.Kind != "Pod" {
			continue
		}
		ns := e.InvolvedObject.Namespace
		if ns == "" {
			ns = e.Namespace // as the snapshot's index files it
		}
		if f.keyedEvents == nil {
			f.keyedEvents = map[podKey]bool{}
		}
		f.keyedEvents[podKey{ns, e.InvolvedObject.Name}] = true
	}
	return f
}

// askEveryPodsEvents makes collectShared ask the snapshot for every copy's events: the
// reference TestPodFactsAsEventsFor holds podFacts to. Set only by that test.
var askEveryPodsEvents bool

// mayHaveEvents reports whether EventsFor can return events of p: those naming its UID, and
// those without a UID naming its name.
func (f *podFacts) mayHaveEvents(p *corev1.Pod) bool {
	return askEveryPodsEvents || f.every || p.UID == "" || f.eventUIDs[p.UID] || f.keyedEvents[podKey{p.Namespace, p.Name}]
}

// mayHaveLogs reports whether the snapshot may hold a log tail of p.
func (f *podFacts) mayHaveLogs(p *corev1.Pod) bool {
	return f.every || f.logs[podKey{p.Namespace, p.Name}]
}

// podsWithLogs files the pods the snapshot has a log tail of, so that a copy without one
// (most copies: sources read the logs of failing copies) costs one lookup, not two per
// container.
func podsWithLogs(s *snapshot.Snapshot) map[podKey]bool {
	out := make(map[podKey]bool)
	for i := range s.Logs {
		out[podKey{s.Logs[i].Namespace, s.Logs[i].Pod}] = true
	}
	return out
}

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
	events := append([]*corev1.Event(nil), s.EventsFor(w.Kind, w.Namespace, w.Name, w.UID)...)
	for _, rs := range w.ReplicaSets {
		events = append(events, s.EventsFor("ReplicaSet", rs.Namespace, rs.Name, rs.UID)...)
	}
	for _, rev := range w.cls.Revisions {
		if j := rev.Job; j != nil && j.UID != w.UID {
			events = append(events, s.EventsFor("Job", j.Namespace, j.Name, j.UID)...)
		}
		events = append(events, rev.GonePodEvents...)
	}
	claims := map[string]bool{}
	for _, p := range w.Pods {
		if pf.mayHaveEvents(p) {
			events = append(events, s.EventsFor("Pod", p.Namespace, p.Name, p.UID)...)
		}
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
			events = append(events, s.EventsFor("PersistentVolumeClaim", pvc.Namespace, pvc.Name, pvc.UID)...)
		}
	}
	w.Events = dedupeEvents(withoutNotes(events))
	attachServices(s, svcs, w)
}

// attachServices files the Services the index offers for the workload: those selecting its
// template or any of its copies under Services, those evidently meant for it under
// UnmatchedServices. The rules read only these, never every Service of the namespace.
func attachServices(s *snapshot.Snapshot, svcs *serviceIndex, w *workload) {
	tmplLabels := labels.Set(w.Template.Labels)
	w.NearbyServices = svcs.candidates(w)
	for i, svc := range w.NearbyServices {
		if len(svc.Spec.Selector) == 0 {
			continue
		}
		switch {
		case setSelects(svc.Spec.Selector, tmplLabels) || selectsAny(svc.Spec.Selector, w.Pods):
			if w.Services == nil {
				// Room for the rest: the Services near a workload most often select it.
				w.Services = make([]*corev1.Service, 0, len(w.NearbyServices)-i)
			}
			w.Services = append(w.Services, svc)
		case meantFor(s, svc, w):
			w.UnmatchedServices = append(w.UnmatchedServices, svc)
		}
	}
}

// meantFor reports whether a Service that selects none of the workload's pods was evidently
// written for it: it serves nothing at all (its EndpointSlices hold no endpoint) and it has the
// workload's name or the same app.kubernetes.io/name label as its template. A Service that
// serves another component (a chart's "redis-master" beside "redis-replicas") is not an orphan
// and stays out. Without EndpointSlices only the same name counts.
func meantFor(s *snapshot.Snapshot, svc *corev1.Service, w *workload) bool {
	slices := s.EndpointSlicesFor(svc.Namespace, svc.Name)
	if len(slices) == 0 {
		return svc.Name == w.Name
	}
	for _, es := range slices {
		if len(es.Endpoints) > 0 {
			return false
		}
	}
	if svc.Name == w.Name {
		return true
	}
	n := svc.Labels["app.kubernetes.io/name"]
	return n != "" && n == w.Template.Labels["app.kubernetes.io/name"]
}

func selectsAny(selector map[string]string, pods []*corev1.Pod) bool {
	for _, p := range pods {
		if setSelects(selector, p.Labels) {
			return true
		}
	}
	return false
}

// setSelects reports whether a Service's selector (a set of key=value pairs, not empty)
// matches labels: what labels.SelectorFromSet(selector).Matches(labels) answers, without
// building a selector per Service and workload.
func setSelects(selector, lbls map[string]string) bool {
	for k, v := range selector {
		if got, ok := lbls[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func sortPods(pods []*corev1.Pod) {
	sortStable(pods, func(a, b *corev1.Pod) bool { return a.Name < b.Name })
}

// dedupeEvents drops events found twice (by UID and by name) and orders them oldest first.
func dedupeEvents(events []*corev1.Event) []*corev1.Event {
	seen := map[*corev1.Event]bool{}
	out := events[:0]
	for _, e := range events {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	if len(out) < 2 {
		return out
	}
	sortStable(out, func(a, b *corev1.Event) bool {
		ti, tj := eventTime(a), eventTime(b)
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return a.Name < b.Name
	})
	return out
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

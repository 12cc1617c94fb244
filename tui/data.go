package tui

import (
	"cmp"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// workloadKey names a workload.
type workloadKey struct{ Kind, Namespace, Name string }

// workloadObject is a workload's object in the snapshot, as the console needs it.
type workloadObject struct {
	UID      types.UID
	Template *corev1.PodTemplateSpec
	// Root is the template's field path in the object (its kind's TemplatePath).
	Root *field.Path
}

// dataset is one diagnosed snapshot with everything the screens draw precomputed, so a frame
// only copies strings.
type dataset struct {
	snap   *snapshot.Snapshot
	report *diagnose.Report
	rows   []row
	// objects finds a workload's object; pods finds a pod by namespace/name, made on first use
	// (podsOnce): only a diagnosis screen asks, and a watch makes a dataset per snapshot.
	objects  map[workloadKey]workloadObject
	pods     map[[2]string]*corev1.Pod
	podsOnce sync.Once
	// multiNS is true when the rows span more than one namespace.
	multiNS    bool
	namespaces []string
	// throughput is true when any workload has a throughput section (metrics were read).
	throughput bool
	// counts are workloads per shape, for the header; waived how many of them are waived.
	counts map[diagnose.Shape]int
	waived int
	// shared are the report's shared dependencies as the header names them ("mysql:3306
	// (Service/mysql): 4 workloads"), a context's prefixed with its name in a fleet.
	shared []string
	// partial marks rows listed before their copies were read: no shapes, no diagnoses.
	partial bool
	// contexts are the contexts of a console over several, in the order named; parts holds
	// each read context's own dataset, which its diagnosis screens draw from. Both are nil
	// for one context.
	contexts []string
	parts    map[string]*dataset
}

// part is the dataset of one context, or ds itself with one context.
func (ds *dataset) part(context string) *dataset {
	if p := ds.parts[context]; p != nil {
		return p
	}
	return ds
}

// row is one workload on the workloads screen; every string is sanitized.
type row struct {
	diag  *diagnose.Diagnosis
	key   workloadKey
	shape diagnose.Shape
	// waived: a waiver applies to the verdict; the badge is grey and marked.
	waived    bool
	namespace string
	workload  string
	name      string
	copies    string
	serving   string
	youngest  string
	restarts  string
	suspect   string
	cause     string
	// throughput is the THROUGHPUT cell; "" when the report has no throughput section.
	throughput string
	filterText string
	// context is the row's kube context in a console over several; "" with one.
	context string
}

// rowID tells rows apart across contexts: the same workload may run in several clusters.
type rowID struct {
	context string
	key     workloadKey
}

func (r *row) id() rowID { return rowID{r.context, r.key} }

// newDataset diagnoses a snapshot and prepares its rows, worst first. It is called from a
// tea.Cmd, never from Update.
func newDataset(snap *snapshot.Snapshot, at *time.Time, diag func(*snapshot.Snapshot) *diagnose.Report) *dataset {
	if at != nil {
		snap.ReferenceTime = *at
	}
	snap.Index()
	return datasetOf(snap, diag(snap))
}

// datasetOf prepares the rows of a report on snap; tests call it with reports made by hand.
func datasetOf(snap *snapshot.Snapshot, rep *diagnose.Report) *dataset {
	return datasetAfter(nil, snap, rep)
}

// datasetAfter is datasetOf taking from prev, the watch's last dataset, each row whose cells
// cannot have changed: a diagnosis Rediagnose kept shares its suspects with prev's, and the
// cells read nothing else of it but values compared here (sameCells). Under churn nearly every
// row of a 20k-pod namespace is such a row.
func datasetAfter(prev *dataset, snap *snapshot.Snapshot, rep *diagnose.Report) *dataset {
	snap.Index()
	objects := workloadObjects(prev, snap)
	ds := &dataset{snap: snap, report: rep, objects: objects, counts: map[diagnose.Shape]int{}}
	ds.shared = sharedFindings(rep)
	// prev's row of a workload: under churn most rows keep their place, so it is looked for
	// there first, and a map of prev's rows made only when one is not.
	var was map[workloadKey]*row
	prevRow := func(i int, k workloadKey) *row {
		if prev == nil || prev.contexts != nil {
			return nil
		}
		if i < len(prev.rows) && prev.rows[i].key == k {
			return &prev.rows[i]
		}
		if was == nil {
			was = make(map[workloadKey]*row, len(prev.rows))
			for i := range prev.rows {
				was[prev.rows[i].key] = &prev.rows[i]
			}
		}
		return was[k]
	}
	seen := map[string]bool{}
	ds.rows = make([]row, 0, len(rep.Workloads))
	// The audit table's order, so both front ends list the same workload first.
	for i, d := range report.WorstFirst(rep) {
		k := workloadKey{d.Kind, d.Namespace, d.Name}
		if !seen[d.Namespace] {
			seen[d.Namespace] = true
			ds.namespaces = append(ds.namespaces, d.Namespace)
		}
		ds.counts[d.Shape]++
		if d.Waived != nil {
			ds.waived++
		}
		ds.throughput = ds.throughput || d.Throughput != nil
		if old := prevRow(i, k); old != nil && sameCells(old.diag, d) {
			r := *old
			r.diag = d
			ds.rows = append(ds.rows, r)
			continue
		}
		r := row{
			diag:      d,
			key:       k,
			shape:     d.Shape,
			waived:    d.Waived != nil,
			namespace: Sanitize(d.Namespace),
			workload:  kindShort(d.Kind) + "/" + Sanitize(d.Name),
			name:      Sanitize(d.Name),
			copies:    strconv.Itoa(int(d.Counts.Existing)) + "/" + strconv.Itoa(int(d.Counts.Declared)),
			serving:   strconv.Itoa(int(d.Counts.Serving)),
			youngest:  report.Age(d.YoungestCopySeconds),
			restarts:  strconv.Itoa(int(d.Counts.Restarts)),
			cause:     report.CauseLabel(d),
		}
		if d.Throughput != nil {
			r.throughput = throughputCell(d.Throughput)
		}
		// The audit table names suspects through the same function, so both read alike.
		r.suspect = orDash(report.ShortSuspect(d))
		r.filterText = r.namespace + "/" + Sanitize(d.Name)
		ds.rows = append(ds.rows, r)
	}
	sort.Strings(ds.namespaces)
	ds.multiNS = len(ds.namespaces) > 1
	return ds
}

// workloadObjects finds the object of each workload of snap: prev's map when the watch's Tracker
// says that no workload's object changed since prev's snapshot, a copy of it with the changed
// ones replaced when few did, a map of every workload of snap otherwise. A map is read-only once
// made, so datasets share it.
func workloadObjects(prev *dataset, snap *snapshot.Snapshot) map[workloadKey]workloadObject {
	if prev != nil && prev.contexts == nil && prev.snap != nil && prev.objects != nil {
		if chs, ok := snap.ChangesSince(prev.snap); ok {
			var changed []snapshot.Change
			for _, c := range chs {
				if _, _, ok := workloadObjectOf(c.Old); ok {
					changed = append(changed, c)
				} else if _, _, ok := workloadObjectOf(c.New); ok {
					changed = append(changed, c)
				}
			}
			if len(changed) == 0 {
				return prev.objects
			}
			if len(changed) < len(prev.objects)/8 {
				m := maps.Clone(prev.objects)
				for _, c := range changed {
					if k, _, ok := workloadObjectOf(c.Old); ok {
						delete(m, k)
					}
					if k, obj, ok := workloadObjectOf(c.New); ok {
						m[k] = obj
					}
				}
				return m
			}
		}
	}
	return allWorkloadObjects(snap)
}

// allWorkloadObjects maps every workload object of snap. It is made for each snapshot the
// console diagnoses whole (a dump's, a watch's first) before its rows can show, so the map is
// sized up front: growing it was half its cost at 20,000 pods.
func allWorkloadObjects(snap *snapshot.Snapshot) map[workloadKey]workloadObject {
	n := 0
	for i := range snapshot.Kinds {
		if k := &snapshot.Kinds[i]; k.Workload {
			n += k.Len(snap)
		}
	}
	m := make(map[workloadKey]workloadObject, n)
	for i := range snapshot.Kinds {
		if k := &snapshot.Kinds[i]; k.Workload {
			k.Each(snap, func(o runtime.Object) {
				if k, obj, ok := workloadObjectOf(o); ok {
					m[k] = obj
				}
			})
		}
	}
	return m
}

// workloadObjectOf is o's entry in a dataset's objects, when o is a workload's object.
func workloadObjectOf(o runtime.Object) (workloadKey, workloadObject, bool) {
	k := kinds.Of(o)
	if k == nil {
		return workloadKey{}, workloadObject{}, false
	}
	m := o.(metav1.Object)
	return workloadKey{k.Kind, m.GetNamespace(), m.GetName()}, workloadObject{m.GetUID(), k.Template(o), k.TemplatePath}, true
}

// sameCells reports whether a row drawn from b would read as one drawn from a, of the same
// workload and template: the cells read the shape and its waiver, counts, cause, youngest
// copy's age, the throughput and the top suspect. Suspects and throughput are compared by identity: a kept
// diagnosis shares them, and a fresh one is drawn anew.
func sameCells(a, b *diagnose.Diagnosis) bool {
	return a.Shape == b.Shape && a.Counts == b.Counts && a.Cause == b.Cause && a.Throughput == b.Throughput &&
		(a.Waived == nil) == (b.Waived == nil) && (a.Waived == nil || *a.Waived == *b.Waived) &&
		len(a.Suspects) == len(b.Suspects) && (len(a.Suspects) == 0 || &a.Suspects[0] == &b.Suspects[0]) &&
		(a.YoungestCopySeconds == nil) == (b.YoungestCopySeconds == nil) &&
		(a.YoungestCopySeconds == nil || *a.YoungestCopySeconds == *b.YoungestCopySeconds)
}

// rowsDataset lists a snapshot's workloads before they can be diagnosed (their copies, events
// and logs not read yet), by namespace and name, with the counts their controllers report. It
// is called from a tea.Cmd.
func rowsDataset(snap *snapshot.Snapshot, at *time.Time) *dataset {
	if at != nil {
		snap.ReferenceTime = *at
	}
	// Sized up front: at 2,000 workloads growing the map and the rows was most of the cost.
	// ReplicaSets and Jobs are left out: most belong to a Deployment or CronJob (ten revisions
	// a Deployment would size it ten times over), and the few rows of their own append.
	n := len(snap.Deployments) + len(snap.StatefulSets) + len(snap.DaemonSets) + len(snap.CronJobs)
	ds := &dataset{
		snap: snap, report: &diagnose.Report{ReferenceTime: snap.ReferenceTime, Source: snap.Source},
		objects: make(map[workloadKey]workloadObject, n), rows: make([]row, 0, n),
		counts: map[diagnose.Shape]int{}, partial: true,
	}
	// add lists o with its copies: those that exist of those it declares, "?" when it does not
	// say, or "…" when its controller counts none of one template (a Job's are runs).
	add := func(o runtime.Object, existing int32, counted bool) {
		k, obj, _ := workloadObjectOf(o)
		copies := "…"
		if counted {
			copies = "?/" + strconv.Itoa(int(existing))
			if n, set := kinds.Named(k.Kind).Declared(o); set {
				copies = strconv.Itoa(int(existing)) + "/" + strconv.Itoa(int(n))
			}
		}
		ds.objects[k] = obj
		ns, name := k.Namespace, k.Name
		ds.rows = append(ds.rows, row{
			key: k, namespace: Sanitize(ns), workload: kindShort(k.Kind) + "/" + Sanitize(name), name: Sanitize(name),
			copies: copies, serving: "…", youngest: "…", restarts: "…", suspect: "…", cause: "…",
			filterText: Sanitize(ns) + "/" + Sanitize(name),
		})
	}
	deployments := make(map[types.UID]bool, len(snap.Deployments))
	for _, d := range snap.Deployments {
		deployments[d.UID] = true
		add(d, d.Status.Replicas, true)
	}
	for _, d := range snap.StatefulSets {
		add(d, d.Status.Replicas, true)
	}
	for _, d := range snap.DaemonSets {
		add(d, d.Status.CurrentNumberScheduled, true)
	}
	// The engine's workloads besides: ReplicaSets no Deployment of the snapshot owns, CronJobs,
	// and Jobs no CronJob of the snapshot controls (a source that lists them early has them).
	for _, rs := range snap.ReplicaSets {
		owned := false
		for _, o := range rs.OwnerReferences {
			owned = owned || deployments[o.UID]
		}
		if !owned {
			add(rs, rs.Status.Replicas, true)
		}
	}
	cronJobs := map[types.UID]bool{}
	for _, cj := range snap.CronJobs {
		cronJobs[cj.UID] = true
		add(cj, 0, false)
	}
	for _, j := range snap.Jobs {
		if c := metav1.GetControllerOfNoCopy(j); c != nil && c.Kind == "CronJob" && cronJobs[c.UID] {
			continue
		}
		add(j, 0, false)
	}
	slices.SortFunc(ds.rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.key.Namespace, b.key.Namespace), cmp.Compare(a.key.Name, b.key.Name),
			cmp.Compare(a.key.Kind, b.key.Kind))
	})
	seen := map[string]bool{}
	for _, r := range ds.rows {
		if !seen[r.key.Namespace] {
			seen[r.key.Namespace] = true
			ds.namespaces = append(ds.namespaces, r.key.Namespace)
		}
	}
	sort.Strings(ds.namespaces)
	ds.multiNS = len(ds.namespaces) > 1
	return ds
}

// kindShort abbreviates a kind as kubectl does: a workload kind by its short name, and a
// Service, which a suspect may name, as svc.
func kindShort(kind string) string {
	if k := kinds.Named(kind); k != nil {
		return k.Short()
	}
	if kind == "Service" {
		return "svc"
	}
	return strings.ToLower(kind)
}

// podsOf returns the copies of a workload, in the engine's order when it listed them.
func (ds *dataset) podsOf(d *diagnose.Diagnosis) []*corev1.Pod {
	var copies []diagnose.Copy
	if d.Detail != nil {
		copies = d.Detail.Copies()
	}
	if len(copies) > 0 {
		ds.podsOnce.Do(func() {
			ds.pods = make(map[[2]string]*corev1.Pod, len(ds.snap.Pods))
			for _, p := range ds.snap.Pods {
				ds.pods[[2]string{p.Namespace, p.Name}] = p
			}
		})
		out := make([]*corev1.Pod, 0, len(copies))
		for _, c := range copies {
			if p := ds.pods[[2]string{d.Namespace, c.Name}]; p != nil {
				out = append(out, p)
			}
		}
		return out
	}
	obj, ok := ds.objects[workloadKey{d.Kind, d.Namespace, d.Name}]
	if !ok {
		return nil
	}
	var out []*corev1.Pod
	if d.Kind == "Deployment" {
		for _, rs := range ds.snap.ReplicaSetsOwnedBy(obj.UID) {
			out = append(out, ds.snap.PodsOwnedBy(rs.UID)...)
		}
	} else {
		out = append(out, ds.snap.PodsOwnedBy(obj.UID)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// eventsOf returns the events of a workload, its ReplicaSets and its pods, newest first.
func (ds *dataset) eventsOf(d *diagnose.Diagnosis, pods []*corev1.Pod) []*corev1.Event {
	obj := ds.objects[workloadKey{d.Kind, d.Namespace, d.Name}]
	evs := append([]*corev1.Event(nil), ds.snap.EventsFor(d.Kind, d.Namespace, d.Name, obj.UID)...)
	if d.Kind == "Deployment" && obj.UID != "" {
		for _, rs := range ds.snap.ReplicaSetsOwnedBy(obj.UID) {
			evs = append(evs, ds.snap.EventsFor("ReplicaSet", rs.Namespace, rs.Name, rs.UID)...)
		}
	}
	for _, p := range pods {
		evs = append(evs, ds.snap.EventsFor("Pod", p.Namespace, p.Name, p.UID)...)
	}
	sort.SliceStable(evs, func(i, j int) bool { return eventTime(evs[i]).After(eventTime(evs[j])) })
	return evs
}

// eventTime is when an event was last seen, whichever field its writer filled.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// revisionOf reads a pod's revision label.
func revisionOf(p *corev1.Pod) string {
	if h := p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; h != "" {
		return h
	}
	return p.Labels[appsv1.ControllerRevisionHashLabelKey]
}

// sharedFindings are rep's shared dependencies as the header names them: the target, the
// object it resolved to and how many workloads fail on it ("mysql:3306 (Service/mysql): 4
// workloads", "registry harbor.example: 2 workloads"); each member's Diagnosis tab names the
// others.
func sharedFindings(rep *diagnose.Report) []string {
	if rep == nil || len(rep.SharedDependencies) == 0 {
		return nil
	}
	out := make([]string, 0, len(rep.SharedDependencies))
	for i := range rep.SharedDependencies {
		sd := &rep.SharedDependencies[i]
		f := sd.Target
		if sd.Pull {
			f = "registry " + f
		}
		if sd.Object != "" {
			f += " (" + sd.Object + ")"
		}
		out = append(out, Sanitize(f+": "+plural(len(sd.Workloads), "workload", "workloads")))
	}
	return out
}

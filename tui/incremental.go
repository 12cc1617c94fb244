package tui

import (
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// fullEvery bounds how old a kept diagnosis may grow: ages and the shapes that turn with the
// clock (a rollout past its deadline, a copy out of its warm-up) move without any change.
const fullEvery = 30 * time.Second

// rediagnoseFn is the engine's incremental entry point.
type rediagnoseFn = func(prev *diagnose.Report, s *snapshot.Snapshot, changed func(kind, namespace, name string) bool) *diagnose.Report

// incremental carries what a watch's next snapshot is diagnosed against: the last dataset and
// when everything was last diagnosed. It lives in the watch's Cmds, one at a time.
type incremental struct {
	last     *dataset
	fullAt   time.Time
	rediag   rediagnoseFn
	diagnose diagnoseFn
	now      func() time.Time
}

// next diagnoses a watch's snapshot: again only the workloads whose objects changed since the
// last one, when the watch's snapshots share their unchanged objects (they come from the same
// informer stores) and nothing shared by several workloads changed; everything otherwise.
func (inc *incremental) next(snap *snapshot.Snapshot, at *time.Time) *dataset {
	now := inc.now()
	if at != nil {
		snap.ReferenceTime = *at
	}
	snap.Index()
	var changed func(kind, namespace, name string) bool
	if inc.rediag != nil && inc.last != nil && now.Sub(inc.fullAt) < fullEvery {
		changed = changedWorkloads(inc.last.snap, snap)
	}
	var rep *diagnose.Report
	if changed == nil {
		rep = inc.diagnose(snap)
		inc.fullAt = now
	} else {
		rep = inc.rediag(inc.last.report, snap, changed)
	}
	inc.last = datasetAfter(inc.last, snap, rep)
	return inc.last
}

// changedWorkloads says which workloads next changed in against prev, or nil when it cannot say
// (an object of another kind than those followed changed: a Service, a claim, a quota, a node,
// a revision, a StatefulSet, a Job...; or an EndpointSlice came, went or emptied; or the
// metrics or the source). The objects that changed are what the watch's Tracker says changed
// since prev (snapshot.ChangesSince), so that the cost follows the changes; when it does not say
// (next was not made from prev), those that only one of the two snapshots holds: the watch
// rebuilds each snapshot from its informers' objects, which are replaced only when they change.
func changedWorkloads(prev, next *snapshot.Snapshot) func(kind, namespace, name string) bool {
	chs, ok := next.ChangesSince(prev)
	if !ok {
		if chs, ok = objectsChanged(prev, next); !ok {
			return nil
		}
	}
	dirty := dirtyWorkloads(prev, next, chs)
	if dirty == nil {
		return nil
	}
	return func(kind, namespace, name string) bool { return dirty[workloadKey{kind, namespace, name}] }
}

// dirtyWorkloads names the workloads that chs, the objects changed between prev and next, and
// next's log tails concern; nil when it cannot say.
func dirtyWorkloads(prev, next *snapshot.Snapshot, chs []snapshot.Change) map[workloadKey]bool {
	// The visibility is not compared: Rediagnose reads what changed in it from the last report.
	if prev.Metrics != next.Metrics && !reflect.DeepEqual(prev.Metrics, next.Metrics) || !reflect.DeepEqual(prev.Source, next.Source) {
		return nil
	}
	type key = workloadKey
	dirty := map[key]bool{}
	all := false
	owners := func(s *snapshot.Snapshot) func(ns string, ref *metav1.OwnerReference, kind, name string) {
		return func(ns string, ref *metav1.OwnerReference, kind, name string) {
			if ref == nil {
				switch kind {
				case "Deployment", "ReplicaSet":
					dirty[key{kind, ns, name}] = true
				default:
					all = true // a bare pod or another controller's: the engine's own business
				}
				return
			}
			switch ref.Kind {
			case "ReplicaSet":
				dirty[key{"ReplicaSet", ns, ref.Name}] = true
				if rs := s.ReplicaSetByUID(ref.UID); rs != nil {
					if owner := metav1.GetControllerOf(rs); owner != nil && owner.Kind == "Deployment" {
						dirty[key{"Deployment", ns, owner.Name}] = true
					}
				}
			case "Deployment", "StatefulSet", "DaemonSet":
				dirty[key{ref.Kind, ns, ref.Name}] = true
			default:
				all = true
			}
		}
	}
	markPrev, markNext := owners(prev), owners(next)
	// A Deployment of which s holds no ReplicaSet takes the copies its selector matches among
	// those a ReplicaSet controls (collect_kinds.go NoReplicaSets): a copy whose ReplicaSet s
	// does not hold, or holds without a Deployment, may be one of them. Rare (a ReplicaSet
	// orphaned or deleted before its copies), so those Deployments of its namespace are all
	// marked.
	unowned := func(s *snapshot.Snapshot, p *corev1.Pod) {
		ref := metav1.GetControllerOfNoCopy(p)
		if ref == nil || ref.Kind != "ReplicaSet" {
			return
		}
		if rs := s.ReplicaSetByUID(ref.UID); rs != nil {
			if owner := metav1.GetControllerOfNoCopy(rs); owner != nil && owner.Kind == "Deployment" {
				return
			}
		}
		for _, d := range s.Deployments {
			if d.Namespace == p.Namespace && len(s.ReplicaSetsOwnedBy(d.UID)) == 0 {
				dirty[key{"Deployment", d.Namespace, d.Name}] = true
			}
		}
	}
	// Copies named by events, slices and tails: their controllers in either snapshot.
	named := map[[2]string]bool{}
	podOwner := func(ns, name string) { named[[2]string{ns, name}] = true }
	type sliceKey struct{ namespace, name string }
	var slicesGone, slicesNew map[sliceKey]*discoveryv1.EndpointSlice
	for _, c := range chs {
		for _, side := range []struct {
			obj    runtime.Object
			inNext bool
		}{{c.Old, false}, {c.New, true}} {
			mark, on := markPrev, prev
			if side.inNext {
				mark, on = markNext, next
			}
			switch o := side.obj.(type) {
			case nil:
			// Deployments and ReplicaSets: themselves, and a ReplicaSet its Deployment.
			case *appsv1.Deployment:
				dirty[key{"Deployment", o.Namespace, o.Name}] = true
			case *appsv1.ReplicaSet:
				dirty[key{"ReplicaSet", o.Namespace, o.Name}] = true
				if ref := metav1.GetControllerOf(o); ref != nil {
					mark(o.Namespace, ref, "", "")
				}
			// Pods: their controller.
			case *corev1.Pod:
				mark(o.Namespace, metav1.GetControllerOf(o), "Pod", o.Name)
				unowned(on, o)
			// Events: the workload of what they are about.
			case *corev1.Event:
				io := o.InvolvedObject
				switch io.Kind {
				case "Pod":
					podOwner(io.Namespace, io.Name)
				case "ReplicaSet":
					dirty[key{"ReplicaSet", io.Namespace, io.Name}] = true
					markNext(io.Namespace, &metav1.OwnerReference{Kind: "ReplicaSet", Name: io.Name, UID: io.UID}, "", "")
					markPrev(io.Namespace, &metav1.OwnerReference{Kind: "ReplicaSet", Name: io.Name, UID: io.UID}, "", "")
				case "Deployment", "StatefulSet", "DaemonSet":
					dirty[key{io.Kind, io.Namespace, io.Name}] = true
				default:
					all = true
				}
			case *discoveryv1.EndpointSlice:
				if slicesGone == nil {
					slicesGone, slicesNew = map[sliceKey]*discoveryv1.EndpointSlice{}, map[sliceKey]*discoveryv1.EndpointSlice{}
				}
				if side.inNext {
					slicesNew[sliceKey{o.Namespace, o.Name}] = o
				} else {
					slicesGone[sliceKey{o.Namespace, o.Name}] = o
				}
			default:
				return nil // a kind not followed
			}
		}
	}
	// EndpointSlices: the workloads of the copies a changed slice lists, before or after. That is
	// all a change does to the diagnosis (counts.go endpoints reads only a workload's own copies'
	// endpoints) while the slice stays its Service's and holds endpoints before and after: a
	// slice that came or went, moved to another Service, or was or became empty changes whether
	// a Service is known or meant for workloads that have no copy in it (collect_services.go
	// meantFor). Readiness flips rewrite slices all the time; without this each was a full
	// diagnosis.
	for k, was := range slicesGone {
		now := slicesNew[k]
		delete(slicesNew, k)
		if now == nil || len(was.Endpoints) == 0 || len(now.Endpoints) == 0 ||
			was.Labels[discoveryv1.LabelServiceName] != now.Labels[discoveryv1.LabelServiceName] {
			all = true
			break
		}
		for _, es := range []*discoveryv1.EndpointSlice{was, now} {
			for _, ep := range es.Endpoints {
				if r := ep.TargetRef; r != nil && r.Kind == "Pod" {
					podOwner(es.Namespace, r.Name)
				}
			}
		}
	}
	if len(slicesNew) > 0 {
		all = true
	}
	// Log tails: the copy's workload, when a tail is new, gone or read again. The watch reads
	// the tails of a bounded sample of failing copies, so this is no pass over the namespace.
	type logKey struct {
		namespace, pod, container string
		previous                  bool
	}
	tails := make(map[logKey]*snapshot.ContainerLog, len(prev.Logs))
	for i := range prev.Logs {
		l := &prev.Logs[i]
		tails[logKey{l.Namespace, l.Pod, l.Container, l.Previous}] = l
	}
	for i := range next.Logs {
		l := &next.Logs[i]
		k := logKey{l.Namespace, l.Pod, l.Container, l.Previous}
		if old, ok := tails[k]; !ok || !sameLines(old.Lines, l.Lines) {
			podOwner(l.Namespace, l.Pod)
		}
		delete(tails, k)
	}
	for k := range tails {
		podOwner(k.namespace, k.pod)
	}
	for n := range named {
		if p := next.Pod(n[0], n[1]); p != nil {
			markNext(p.Namespace, metav1.GetControllerOf(p), "Pod", p.Name)
			unowned(next, p)
		}
		if p := prev.Pod(n[0], n[1]); p != nil {
			markPrev(p.Namespace, metav1.GetControllerOf(p), "Pod", p.Name)
			unowned(prev, p)
		}
	}
	if all {
		return nil
	}
	return dirty
}

// objectsChanged lists the objects only one of prev and next holds, as changes: ok is false when
// one of a kind not followed is among them.
func objectsChanged(prev, next *snapshot.Snapshot) (chs []snapshot.Change, ok bool) {
	for i := range snapshot.Kinds {
		if k := &snapshot.Kinds[i]; !followed[k.Kind] && !sameKind(k, prev, next) {
			return nil, false
		}
	}
	add := func(kind string) func(o runtime.Object, inNext bool) {
		return func(o runtime.Object, inNext bool) {
			m := o.(metav1.Object)
			c := snapshot.Change{Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName()}
			if inNext {
				c.New = o
			} else {
				c.Old = o
			}
			chs = append(chs, c)
		}
	}
	diffObjects(prev.Deployments, next.Deployments, func(o *appsv1.Deployment, inNext bool) { add("Deployment")(o, inNext) })
	diffObjects(prev.ReplicaSets, next.ReplicaSets, func(o *appsv1.ReplicaSet, inNext bool) { add("ReplicaSet")(o, inNext) })
	diffObjects(prev.Pods, next.Pods, func(o *corev1.Pod, inNext bool) { add("Pod")(o, inNext) })
	diffObjects(prev.Events, next.Events, func(o *corev1.Event, inNext bool) { add("Event")(o, inNext) })
	diffObjects(prev.EndpointSlices, next.EndpointSlices, func(o *discoveryv1.EndpointSlice, inNext bool) { add("EndpointSlice")(o, inNext) })
	return chs, true
}

// followed are the kinds whose changes changedWorkloads traces to the workloads they concern;
// a change of any other kind of the table calls for a full diagnosis.
var followed = map[string]bool{"Deployment": true, "ReplicaSet": true, "Pod": true, "Event": true, "EndpointSlice": true}

// sameKind reports whether two snapshots hold the very same objects of kind k, in any order.
func sameKind(k *snapshot.Kind, a, b *snapshot.Snapshot) bool {
	if k.Len(a) != k.Len(b) {
		return false
	}
	in := make(map[runtime.Object]bool, k.Len(a))
	k.Each(a, func(o runtime.Object) { in[o] = true })
	same := true
	k.Each(b, func(o runtime.Object) { same = same && in[o] })
	return same
}

// diffObjects calls fn with every object only one of prev and next holds; inNext says which.
func diffObjects[T any](prev, next []*T, fn func(o *T, inNext bool)) {
	in := make(map[*T]bool, len(prev))
	for _, o := range prev {
		in[o] = true
	}
	for _, o := range next {
		if in[o] {
			delete(in, o)
			continue
		}
		fn(o, true)
	}
	for _, o := range prev {
		if in[o] {
			fn(o, false)
		}
	}
}

// sameLines reports whether two tails are the same read: the watch keeps a tail's lines until
// it reads the tail again.
func sameLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

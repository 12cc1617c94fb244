package tui

import (
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

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
// metrics or the source). An object is
// unchanged when next holds the very object prev did: the watch rebuilds each snapshot from its
// informers' stores, which replace an object only when it changes.
func changedWorkloads(prev, next *snapshot.Snapshot) func(kind, namespace, name string) bool {
	for i := range snapshot.Kinds {
		if k := &snapshot.Kinds[i]; !followed[k.Kind] && !sameKind(k, prev, next) {
			return nil
		}
	}
	// The visibility is not compared: Rediagnose reads what changed in it from the last report.
	if !reflect.DeepEqual(prev.Metrics, next.Metrics) || !reflect.DeepEqual(prev.Source, next.Source) {
		return nil
	}
	type key struct{ kind, namespace, name string }
	dirty := map[key]bool{}
	all := false
	owners := func(s *snapshot.Snapshot) func(ns string, ref *metav1.OwnerReference, kind, name string) {
		rsByUID := map[types.UID]*appsv1.ReplicaSet{}
		for _, rs := range s.ReplicaSets {
			rsByUID[rs.UID] = rs
		}
		var mark func(ns string, ref *metav1.OwnerReference, kind, name string)
		mark = func(ns string, ref *metav1.OwnerReference, kind, name string) {
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
				if rs := rsByUID[ref.UID]; rs != nil {
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
		return mark
	}
	markPrev, markNext := owners(prev), owners(next)
	// Deployments and ReplicaSets: themselves, and a ReplicaSet its Deployment.
	diffObjects(prev.Deployments, next.Deployments, func(d *appsv1.Deployment, _ bool) {
		dirty[key{"Deployment", d.Namespace, d.Name}] = true
	})
	diffObjects(prev.ReplicaSets, next.ReplicaSets, func(rs *appsv1.ReplicaSet, inNext bool) {
		mark := markPrev
		if inNext {
			mark = markNext
		}
		dirty[key{"ReplicaSet", rs.Namespace, rs.Name}] = true
		if ref := metav1.GetControllerOf(rs); ref != nil {
			mark(rs.Namespace, ref, "", "")
		}
	})
	// Pods: their controller.
	diffObjects(prev.Pods, next.Pods, func(p *corev1.Pod, inNext bool) {
		mark := markPrev
		if inNext {
			mark = markNext
		}
		mark(p.Namespace, metav1.GetControllerOf(p), "Pod", p.Name)
	})
	// Copies named by events, slices and tails: their controllers are marked once all are named,
	// in one pass over each snapshot's pods, which costs less than a map of every pod by name.
	named := map[[2]string]bool{}
	podOwner := func(ns, name string) { named[[2]string{ns, name}] = true }
	// Events: the workload of what they are about.
	diffObjects(prev.Events, next.Events, func(e *corev1.Event, _ bool) {
		o := e.InvolvedObject
		switch o.Kind {
		case "Pod":
			podOwner(o.Namespace, o.Name)
		case "ReplicaSet":
			dirty[key{"ReplicaSet", o.Namespace, o.Name}] = true
			markNext(o.Namespace, &metav1.OwnerReference{Kind: "ReplicaSet", Name: o.Name, UID: o.UID}, "", "")
			markPrev(o.Namespace, &metav1.OwnerReference{Kind: "ReplicaSet", Name: o.Name, UID: o.UID}, "", "")
		case "Deployment", "StatefulSet", "DaemonSet":
			dirty[key{o.Kind, o.Namespace, o.Name}] = true
		default:
			all = true
		}
	})
	// EndpointSlices: the workloads of the copies a changed slice lists, before or after. That is
	// all a change does to the diagnosis (counts.go endpoints reads only a workload's own copies'
	// endpoints) while the slice stays its Service's and holds endpoints before and after: a
	// slice that came or went, moved to another Service, or was or became empty changes whether
	// a Service is known or meant for workloads that have no copy in it (collect.go meantFor).
	// Readiness flips rewrite slices all the time; without this each was a full diagnosis.
	type sliceKey struct{ namespace, name string }
	var slicesGone, slicesNew map[sliceKey]*discoveryv1.EndpointSlice
	diffObjects(prev.EndpointSlices, next.EndpointSlices, func(es *discoveryv1.EndpointSlice, inNext bool) {
		if slicesGone == nil {
			slicesGone, slicesNew = map[sliceKey]*discoveryv1.EndpointSlice{}, map[sliceKey]*discoveryv1.EndpointSlice{}
		}
		if inNext {
			slicesNew[sliceKey{es.Namespace, es.Name}] = es
		} else {
			slicesGone[sliceKey{es.Namespace, es.Name}] = es
		}
	})
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
	// Log tails: the copy's workload, when a tail is new, gone or read again.
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
	if len(named) > 0 {
		for _, p := range next.Pods {
			if named[[2]string{p.Namespace, p.Name}] {
				markNext(p.Namespace, metav1.GetControllerOf(p), "Pod", p.Name)
			}
		}
		for _, p := range prev.Pods {
			if named[[2]string{p.Namespace, p.Name}] {
				markPrev(p.Namespace, metav1.GetControllerOf(p), "Pod", p.Name)
			}
		}
	}
	if all {
		return nil
	}
	return func(kind, namespace, name string) bool { return dirty[key{kind, namespace, name}] }
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

package diagnose

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

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
		Template: &d.Spec.Template, TemplatePath: kinds.Deployment.TemplatePath,
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
		Template: &st.Spec.Template, TemplatePath: kinds.StatefulSet.TemplatePath,
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
		Template: &ds.Spec.Template, TemplatePath: kinds.DaemonSet.TemplatePath,
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
		Template: &rs.Spec.Template, TemplatePath: kinds.ReplicaSet.TemplatePath,
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

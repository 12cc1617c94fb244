package live

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// logPlanner keeps a watch's failing copies by workload from one snapshot to the next, so that
// the log plan of a snapshot costs in proportion to the copies and ReplicaSets that changed and
// to the failing workloads, not to the namespace: failingLogRequests looked at every pod of a
// 20k-pod namespace with each snapshot. Its plan is failingLogRequests' for the same snapshot
// (TestLogPlannerPlansAsFromScratch).
type logPlanner struct {
	workloads map[workloadRef]*plannedWorkload
	// refs are the workloads in the plan's order.
	refs []workloadRef
	// of is each candidate copy's workload; byRS the candidates a ReplicaSet controls, by its
	// name, whose workload and revision follow it. By name, not UID: a change says which
	// ReplicaSet by name even when it came and went since the last plan.
	of   map[types.NamespacedName]workloadRef
	byRS map[types.NamespacedName]map[types.NamespacedName]bool
	// at is the snapshot the planner holds the candidates of.
	at *snapshot.Snapshot
}

// plannedWorkload is one workload's failing copies and its sample of them, made again only when
// they change.
type plannedWorkload struct {
	cands  map[types.NamespacedName]candidate
	sample failingWorkload
	stale  bool
}

// planFor returns the plan of snap: from the planner's candidates brought up to snap with what
// changed since the snapshot it last planned, when snap says; from all of snap's pods otherwise.
func (lp *logPlanner) planFor(snap *snapshot.Snapshot, limit int) logPlan {
	chs, ok := snap.ChangesAfter(lp.at)
	if !ok || lp.workloads == nil {
		lp.reset(snap)
	} else {
		lp.update(snap, chs)
	}
	lp.at = snap
	return lp.plan(limit)
}

// reset plans every pod of snap.
func (lp *logPlanner) reset(snap *snapshot.Snapshot) {
	lp.workloads, lp.refs = map[workloadRef]*plannedWorkload{}, nil
	lp.of, lp.byRS = map[types.NamespacedName]workloadRef{}, map[types.NamespacedName]map[types.NamespacedName]bool{}
	for _, p := range snap.Pods {
		lp.add(snap, p)
	}
}

// update follows the changes chs that bring the candidates to snap. It reads only the changed
// objects' names and snap: chs may also name objects that did not change since the last plan.
func (lp *logPlanner) update(snap *snapshot.Snapshot, chs []snapshot.Change) {
	var rss []types.NamespacedName
	for _, c := range chs {
		switch c.Kind {
		case "Pod":
			lp.remove(types.NamespacedName{Namespace: c.Namespace, Name: c.Name})
			if now := snap.Pod(c.Namespace, c.Name); now != nil {
				lp.add(snap, now)
			}
		case "ReplicaSet":
			rss = append(rss, types.NamespacedName{Namespace: c.Namespace, Name: c.Name})
		}
	}
	// A ReplicaSet that came, went or changed its Deployment moves its copies' workload.
	for _, rs := range rss {
		names := make([]types.NamespacedName, 0, len(lp.byRS[rs]))
		for name := range lp.byRS[rs] {
			names = append(names, name)
		}
		for _, name := range names {
			lp.remove(name)
			if p := snap.Pod(name.Namespace, name.Name); p != nil {
				lp.add(snap, p)
			}
		}
	}
}

func (lp *logPlanner) add(snap *snapshot.Snapshot, p *corev1.Pod) {
	c, ok := candidateOf(p, snap.ReplicaSetByUID)
	if !ok {
		return
	}
	name := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
	w := lp.workloads[c.ref]
	if w == nil {
		w = &plannedWorkload{cands: map[types.NamespacedName]candidate{}}
		lp.workloads[c.ref] = w
		i := sort.Search(len(lp.refs), func(i int) bool { return !refLess(lp.refs[i], c.ref) })
		lp.refs = append(lp.refs[:i], append([]workloadRef{c.ref}, lp.refs[i:]...)...)
	}
	w.cands[name], w.stale = c, true
	lp.of[name] = c.ref
	if rs, ok := controllingReplicaSet(p); ok {
		if lp.byRS[rs] == nil {
			lp.byRS[rs] = map[types.NamespacedName]bool{}
		}
		lp.byRS[rs][name] = true
	}
}

func (lp *logPlanner) remove(name types.NamespacedName) {
	ref, ok := lp.of[name]
	if !ok {
		return
	}
	delete(lp.of, name)
	w := lp.workloads[ref]
	if rs, ok := controllingReplicaSet(w.cands[name].pod); ok {
		delete(lp.byRS[rs], name)
		if len(lp.byRS[rs]) == 0 {
			delete(lp.byRS, rs)
		}
	}
	delete(w.cands, name)
	w.stale = true
	if len(w.cands) == 0 {
		delete(lp.workloads, ref)
		i := sort.Search(len(lp.refs), func(i int) bool { return !refLess(lp.refs[i], ref) })
		lp.refs = append(lp.refs[:i], lp.refs[i+1:]...)
	}
}

func controllingReplicaSet(p *corev1.Pod) (types.NamespacedName, bool) {
	if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.Kind == "ReplicaSet" {
		return types.NamespacedName{Namespace: p.Namespace, Name: ref.Name}, true
	}
	return types.NamespacedName{}, false
}

// plan samples the workloads whose copies changed again and takes the samples in rounds.
func (lp *logPlanner) plan(limit int) logPlan {
	plan := logPlan{limit: limit}
	all := make([]failingWorkload, len(lp.refs))
	for i, ref := range lp.refs {
		w := lp.workloads[ref]
		if w.stale {
			cands := make([]candidate, 0, len(w.cands))
			for _, c := range w.cands {
				cands = append(cands, c)
			}
			w.sample, w.stale = sampleWorkload(ref, cands), false
		}
		all[i] = w.sample
		if all[i].ready {
			plan.ready = append(plan.ready, &all[i])
		} else {
			plan.workloads = append(plan.workloads, &all[i])
		}
	}
	plan.readRounds()
	plan.readReady()
	return plan
}

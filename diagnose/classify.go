package diagnose

import (
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// classState is the classifier's working state for one workload.
type classState struct {
	history
	// target is where the failing connections go, as the suspect pass read it.
	target       *depTarget
	serviceKnown bool
	// unexposedService names a Service whose endpoints are on ports no container exposes.
	unexposedService string
	// dialing holds, by copy, a Ready copy that keeps failing to reach an endpoint its env
	// names (findDialLoop); nil when no copy does.
	dialing []*dialLoop
	copies  []*copyFacts
	rollout rollout
	// failedCreate is the controller's report that it could not create copies (ReplicaFailure or
	// a FailedCreate event), with its message.
	failedCreate string
	// why is the one-line reason for the shape, used by the headline.
	why string
	// starting says what the current revision's copies still on their way up are doing (an
	// image pull under way), when some are.
	starting string
	// failingWhileProgressing is a failure signal on copies of a rollout still called
	// progressing (some new copy is Ready, or none has yet run past its probes): the suspects
	// are listed, at low confidence, so the row says where to look if the deadline passes.
	failingWhileProgressing string
	// ctrl is the controller's own report of its copies; sight how much of them the snapshot
	// shows.
	ctrl  controllerStatus
	sight podSight
	// blind: the verdict rests on a controller's counts of copies that exist and are not
	// Ready, which cannot tell a copy that never started from one that runs unready.
	blind bool
	// nowhere says why a DaemonSet may run on no node; empty when it may run somewhere.
	nowhere string
	// pool is the node label a DaemonSet that runs nowhere waits for (no-eligible-nodes), as
	// key=value; empty otherwise.
	pool string
	// batch is what a Job or CronJob showed; nil for the other kinds.
	batch *batchFacts
}

// rollout is what the controller says about an update under way.
type rollout struct {
	// InProgress: a rollout is under way and inside its deadline.
	InProgress bool
	// TimedOut: ProgressDeadlineExceeded, or no progress for longer than the deadline.
	TimedOut bool
	// Reason and Message of the Progressing condition, when there is one, and when it was last
	// written.
	Reason, Message string
	Since           time.Time
}

// Reasons of the Deployment Progressing condition (pkg/controller/deployment/util).
const (
	reasonReplicaSetUpdated    = "ReplicaSetUpdated"
	reasonNewReplicaSetCreated = "NewReplicaSetCreated"
	reasonFoundNewReplicaSet   = "FoundNewReplicaSet"
	reasonNewRSAvailable       = "NewReplicaSetAvailable"
	reasonTimedOut             = "ProgressDeadlineExceeded"
	reasonResumed              = "DeploymentResumed"
)

func readRollout(w *workload, ref time.Time) rollout {
	var r rollout
	switch o := w.Object.(type) {
	case *appsv1.Deployment:
		if o.Generation > o.Status.ObservedGeneration {
			r.InProgress = true
			r.Reason, r.Message = "ObservedGenerationBehind", fmt.Sprintf("generation %d not yet observed (observedGeneration %d)", o.Generation, o.Status.ObservedGeneration)
		}
		for _, c := range w.controller().Conditions {
			if c.Type != string(appsv1.DeploymentProgressing) {
				continue
			}
			r.Reason, r.Message = c.Reason, c.Message
			r.Since = c.Updated
			switch c.Reason {
			case reasonTimedOut:
				r.TimedOut, r.InProgress = true, false
			case reasonReplicaSetUpdated, reasonNewReplicaSetCreated, reasonFoundNewReplicaSet, reasonResumed:
				// A controller that stopped writing cannot time the rollout out; the dump can.
				// A condition written without a time (by hand, by another writer) cannot be timed.
				if !c.Updated.IsZero() && ref.Sub(c.Updated) > progressDeadline(o) && o.Spec.ProgressDeadlineSeconds != nil {
					r.TimedOut = true
				} else {
					r.InProgress = c.Status == string(corev1.ConditionTrue)
				}
			}
		}
	case *appsv1.StatefulSet:
		// Under OnDelete the controller waits for someone to delete pods: nothing is rolling.
		rolling := o.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType
		if o.Generation > o.Status.ObservedGeneration ||
			rolling && o.Status.UpdateRevision != "" && o.Status.CurrentRevision != o.Status.UpdateRevision {
			r.InProgress = true
			r.Reason = "RollingUpdate"
			r.Message = fmt.Sprintf("%d of %d copies updated to %s", o.Status.UpdatedReplicas, w.Declared, o.Status.UpdateRevision)
		}
	case *appsv1.DaemonSet:
		rolling := o.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType
		if o.Generation > o.Status.ObservedGeneration || rolling && o.Status.UpdatedNumberScheduled < o.Status.DesiredNumberScheduled {
			r.InProgress = true
			r.Reason = "RollingUpdate"
			r.Message = fmt.Sprintf("%d of %d nodes run the current template", o.Status.UpdatedNumberScheduled, o.Status.DesiredNumberScheduled)
		}
	}
	if r.InProgress && w.Kind != "Deployment" {
		// No deadline on these kinds: a rollout whose newest copy is older than the Deployment
		// default has stopped progressing.
		for _, f := range w.cls.copies {
			if f.Current && f.Active && f.Age > defaultProgressDeadline && !f.Ready {
				r.InProgress, r.TimedOut = false, true
			}
		}
	}
	return r
}

// readFailedCreate finds the controller saying it cannot create copies: the ReplicaFailure
// condition (Deployment, ReplicaSet) first, a FailedCreate event as support.
func readFailedCreate(w *workload) string {
	obs := w.observe()
	var cur string
	if w.cls.Current != nil && w.cls.Current.ReplicaSet != nil {
		cur = w.cls.Current.ReplicaSet.Name
	}
	// The workload's own conditions come first in the list, then its ReplicaSets'.
	for k := obs.ctrl.from; k < obs.ctrl.to; k++ {
		c := &obs.list[k]
		if c.Status != string(corev1.ConditionTrue) {
			continue
		}
		switch {
		case c.Object.Kind == "Deployment" && c.Type() == string(appsv1.DeploymentReplicaFailure),
			c.Object.Kind == "ReplicaSet" && c.Type() == string(appsv1.ReplicaSetReplicaFailure) && (w.cls.Current == nil || c.Object.Name == cur):
			return replicaFailure(c.Reason, c.Text)
		}
	}
	// Only the controller of the current revision: an old ReplicaSet's FailedCreate is history.
	evs := obs.eventList()
	for i := len(evs) - 1; i >= 0; i-- {
		e := &evs[i]
		if e.Reason != "FailedCreate" {
			continue
		}
		if e.Object.Kind == w.Kind && e.Object.Name == w.Name || e.Object.Kind == "ReplicaSet" && cur != "" && e.Object.Name == cur {
			return e.Text
		}
	}
	return ""
}

// replicaFailure words a ReplicaFailure condition. The condition is the controller's report
// even when it carries no message (a controller other than kube-controller-manager, or a
// status written by hand), so it never reads as no failure.
func replicaFailure(reason, message string) string {
	if message != "" {
		return message
	}
	if reason == "" {
		reason = "unknown reason"
	}
	return "ReplicaFailure (" + reason + ")"
}

// classify decides the shape. Pod status is the verdict; controller conditions and revision
// history place it in time; events only support. The current revision's copies decide, so a
// stuck rollout takes the failing revision's shape while its counts say who serves.
func classify(w *workload, ref time.Time) Shape {
	st := &w.cls
	c := w.Counts
	if st.nowhere != "" {
		return runsNowhereShape(w)
	}
	if isBatch(w.Kind) {
		return classifyBatch(w, ref)
	}
	if st.sight.byController() {
		return classifyByController(w, ref)
	}
	if w.Declared == 0 && c.Existing == 0 {
		st.why = "scaled to 0"
		return ShapeHealthy
	}
	var never, dies, idle, warming []*copyFacts
	for _, f := range st.copies {
		if !f.Active || !f.Current {
			continue
		}
		if f.Starting != "" && st.starting == "" {
			st.starting = "copy " + f.Pod.Name + " is " + f.Starting
		}
		switch {
		case f.NeverStarts != "":
			never = append(never, f)
		case f.Dies != "":
			dies = append(dies, f)
		case f.Running && !f.Serving:
			idle = append(idle, f)
			if warmingUp(f, ref) {
				warming = append(warming, f)
			}
		}
	}
	switch {
	case len(never) > 0:
		st.why = fmt.Sprintf("%s on %s", never[0].NeverStarts, copiesPhrase(len(never), currentActive(st.copies)))
		return ShapeNeverStarts
	case st.failedCreate != "" && c.Existing < w.Declared:
		st.why = "the controller cannot create copies: " + st.failedCreate
		return ShapeNeverStarts
	case len(dies) > 0:
		st.why = fmt.Sprintf("%s on %s", dies[0].Dies, copiesPhrase(len(dies), currentActive(st.copies)))
		if lt := dies[0].LastTerminated; lt != nil && lt.Reason != dies[0].Dies {
			st.why = fmt.Sprintf("%s (last: %s, exit code %d) on %s", dies[0].Dies, lt.Reason, lt.ExitCode, copiesPhrase(len(dies), currentActive(st.copies)))
		}
		return ShapeStartsAndDies
	}
	if why := churn(w, ref); why != "" {
		st.why = why
		return ShapeStartsAndDies
	}
	if st.starting != "" && !st.rollout.TimedOut && c.Serving < w.Declared && len(idle) == 0 {
		// A copy on its way up with no error, inside its deadline: whatever the controller
		// says, nothing has failed yet.
		st.why = "copies are still starting: " + st.starting
		return ShapeProgressing
	}
	// A rollout inside its deadline is progressing unless its new copies have visibly failed:
	// then it takes the failing revision's shape without waiting for the deadline.
	stalled := ""
	if st.rollout.InProgress && len(idle) > 0 {
		stalled = stalledRollout(w, ref, idle)
	}
	if st.rollout.InProgress && stalled == "" {
		st.why = "rollout under way inside its deadline"
		st.failingWhileProgressing = failureSignal(w, unserving(st.copies))
		return ShapeProgressing
	}
	if stalled != "" {
		st.why = stalled
		return ShapeLiveButIdle
	}
	if why := flickering(w, idle, ref); why != "" && !st.rollout.TimedOut {
		st.why = why
		return ShapeHealthy
	}
	// A stuck rollout takes the failing revision's shape even when old copies still cover the
	// declared count (maxUnavailable 0).
	stuckOnIdle := st.rollout.TimedOut && len(idle) > 0
	if c.Serving >= w.Declared && !stuckOnIdle {
		st.why = "every declared copy serves"
		return ShapeHealthy
	}
	if len(idle) > 0 {
		if len(warming) == len(idle) && !st.rollout.TimedOut {
			st.why = "copies started moments ago and are still warming up"
			st.failingWhileProgressing = failureSignal(w, idle)
			return ShapeProgressing
		}
		st.why = idleWhy(w, idle)
		return ShapeLiveButIdle
	}
	// Fewer copies than declared and nothing on them explains it (events may have expired).
	if c.Existing < w.Declared {
		st.why = fmt.Sprintf("%d of %d copies exist and no signal says why", c.Existing, w.Declared)
	} else {
		st.why = "copies do not serve and no signal says why"
	}
	return ShapeUnknown
}

// runsNowhereShape is the shape of a DaemonSet no node may run: no-eligible-nodes when it
// waits for a node pool that is not there (awaitsPool), never-starts otherwise.
func runsNowhereShape(w *workload) Shape {
	st := &w.cls
	st.why = st.nowhere
	if st.pool = awaitsPool(w); st.pool == "" {
		return ShapeNeverStarts
	}
	st.why = "waits for nodes labelled " + st.pool + ", which no node carries yet; " + st.nowhere
	return ShapeNoEligibleNodes
}

// awaitsPool names the node labels a DaemonSet that may run on no node waits for, when that is
// why: every visible node is kept out by its node selector or required node affinity (none by
// taints or nodeName), and the requirement no node meets names a label no node carries that is
// no near miss of one they do. That is a node pool that does not exist yet (a GPU pool, a pool
// an autoscaler holds at zero). A near miss is a typo, and a failure: a value one edit from a
// value of the same key that nodes carry (two edits from 6 characters on, or equal but for
// case: amd46 for amd64), or a key no node has that is as near to one they do
// (corp.example/nodepool). So is a selector whose labels all exist but on no one node, a
// DaemonSet kept off the nodes it selects by their taints, and anything seen without the nodes:
// those stay never-starts, and the kubediagnose.dev/waive annotation is how a user says one is
// meant. Returns "" when the DaemonSet does not wait for a pool.
func awaitsPool(w *workload) string {
	ds, ok := w.Object.(*appsv1.DaemonSet)
	if !ok || w.Snap == nil || len(w.Snap.Nodes) == 0 {
		return ""
	}
	nodes := w.Snap.Nodes
	spec := &ds.Spec.Template.Spec
	if ex := excludedNodes(spec, nodes); ex.name > 0 || ex.taint > 0 || ex.selector != len(nodes) {
		return ""
	}
	var missing []string
	keys := make([]string, 0, len(spec.NodeSelector))
	for k := range spec.NodeSelector {
		keys = append(keys, k)
	}
	sortStrings(keys)
	for _, k := range keys {
		v := spec.NodeSelector[k]
		if rules.AnyNodeHas(nodes, k, func(x string) bool { return x == v }) {
			continue
		}
		if nearLabel(nodes, k, v) {
			return ""
		}
		missing = append(missing, k+"="+v)
	}
	selectorKeepsOut := len(missing) > 0
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		// Terms are ORed: each must fail on a label no node carries.
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			absent := false
			for _, ex := range term.MatchExpressions {
				switch ex.Operator {
				case corev1.NodeSelectorOpIn:
					if rules.AnyNodeHas(nodes, ex.Key, func(x string) bool { return slices.Contains(ex.Values, x) }) {
						continue
					}
					for _, v := range ex.Values {
						if nearLabel(nodes, ex.Key, v) {
							return ""
						}
					}
					absent = true
					missing = append(missing, ex.Key+" in ("+strings.Join(ex.Values, ", ")+")")
				case corev1.NodeSelectorOpExists:
					if rules.AnyNodeHas(nodes, ex.Key, func(string) bool { return true }) {
						continue
					}
					if nearLabel(nodes, ex.Key, "") {
						return ""
					}
					absent = true
					missing = append(missing, ex.Key)
				}
			}
			if !absent && !selectorKeepsOut {
				return ""
			}
		}
	}
	return strings.Join(missing, ", ")
}

// nearLabel reports whether label key=value (any value when value is "") is a typo of one the
// nodes carry: the key is theirs and the value near one of its values, or the key is no node's
// and near one of theirs.
func nearLabel(nodes []*corev1.Node, key, value string) bool {
	hasKey := false
	for _, n := range nodes {
		if v, ok := n.Labels[key]; ok {
			hasKey = true
			if value != "" && near(v, value) {
				return true
			}
		}
	}
	if hasKey {
		return false
	}
	for _, n := range nodes {
		for k := range n.Labels {
			if near(k, key) {
				return true
			}
		}
	}
	return false
}

// near reports whether a and b are within a typo of each other: equal but for case, or one
// edit apart (a character added, dropped, changed, or two swapped), two from 6 characters on.
func near(a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	ra, rb := []rune(a), []rune(b)
	allowed := 1
	if min(len(ra), len(rb)) >= 6 {
		allowed = 2
	}
	if d := len(ra) - len(rb); d > allowed || -d > allowed {
		return false
	}
	// Optimal string alignment distance, three rows.
	before, prev, cur := make([]int, len(rb)+1), make([]int, len(rb)+1), make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], before[j-2]+1)
			}
		}
		before, prev, cur = prev, cur, before
	}
	return prev[len(rb)] <= allowed
}

// unserving returns the active copies of the current revision that do not serve.
func unserving(copies []*copyFacts) []*copyFacts {
	var out []*copyFacts
	for _, f := range copies {
		if f.Active && f.Current && !f.Serving {
			out = append(out, f)
		}
	}
	return out
}

func currentActive(copies []*copyFacts) int {
	n := 0
	for _, f := range copies {
		if f.Active && f.Current {
			n++
		}
	}
	return n
}

func copiesPhrase(n, of int) string {
	if n == of {
		switch n {
		case 1:
			return "its only copy"
		case 2:
			return "both copies"
		}
		return fmt.Sprintf("all %d copies", n)
	}
	return fmt.Sprintf("%d of %d copies", n, of)
}

func idleWhy(w *workload, idle []*copyFacts) string {
	ready := 0
	for _, f := range idle {
		if f.Ready {
			ready++
		}
	}
	if ready == len(idle) {
		if len(w.UnmatchedServices) > 0 {
			svc := w.UnmatchedServices[0]
			return fmt.Sprintf("copies are Ready but Service %s selects %s, which matches none of them", svc.Name, selectorString(svc.Spec.Selector))
		}
		if svc := w.cls.unexposedService; svc != "" {
			return fmt.Sprintf("copies are Ready but Service %s sends traffic to a port no container exposes", svc)
		}
		var dialing *copyFacts
		for _, f := range idle {
			if f.Dialing != nil && (dialing == nil || dialing.Dialing.Like != "" && f.Dialing.Like == "") {
				dialing = f
			}
		}
		if dialing != nil {
			return fmt.Sprintf("copies are Ready but do no work: copy %s %s", dialing.Pod.Name, dialing.Dialing)
		}
		return "copies are Ready but no Service endpoint serves them"
	}
	return fmt.Sprintf("%s run and stay up but are not Ready", copiesPhrase(len(idle)-ready, currentActive(w.cls.copies)))
}

func selectorString(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	sortStrings(parts)
	return strings.Join(parts, ",")
}

// Churn: every copy is young while the revision is old and the controller keeps replacing them
// (copies evicted or failed, or more creations than declared copies).
const (
	churnYoung = 10 * time.Minute
	churnOld   = time.Hour
)

func churn(w *workload, ref time.Time) string {
	cur := w.cls.Current
	if cur == nil || w.Counts.Existing == 0 || ref.Sub(cur.Created) < churnOld {
		return ""
	}
	finished, evicted := 0, 0
	for _, f := range w.cls.copies {
		if f.Active && f.Age > churnYoung {
			return ""
		}
		if !f.Active {
			finished++
		}
		if f.Dies == rules.ReasonEvicted {
			evicted++
		}
	}
	var created int32
	evs := w.observe().eventList()
	for k := range evs {
		if evs[k].Reason == "SuccessfulCreate" {
			created += evs[k].Count
		}
	}
	if finished == 0 && created <= w.Declared {
		return ""
	}
	s := fmt.Sprintf("every copy is younger than %s while revision %d is %s old: the count keeps returning to target by replacing copies",
		humanDuration(churnYoung), cur.Number, humanDuration(ref.Sub(cur.Created)))
	if evicted > 0 {
		// Said by the kubelet, not guessed from ages: the replaced copies were evicted.
		s += fmt.Sprintf(" the kubelet evicted (%d in the snapshot)", evicted)
	}
	return s
}

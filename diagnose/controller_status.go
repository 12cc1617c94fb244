package diagnose

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
)

// controllerStatus is what a workload's controller reports of its copies, read once from its
// status: the verdict rests on it when the snapshot holds no pod of the workload's namespace,
// and it accounts for copies a partial snapshot leaves out.
type controllerStatus struct {
	// Observed is true when the controller has seen the current generation, so its counts
	// describe the current spec.
	Observed   bool
	Generation int64
	// Replicas, Ready, Available and Updated are the controller's counts of existing, Ready,
	// available and current-revision copies (a DaemonSet's currentNumberScheduled plus
	// numberMisscheduled, numberReady, numberAvailable, updatedNumberScheduled).
	Replicas, Ready, Available, Updated int32
	// Unavailable is the Deployment's Available=False condition, "Reason: message".
	Unavailable string
}

// podSight says how much of a workload's copies the snapshot shows.
type podSight struct {
	// Unseen says why the snapshot holds none of the namespace's pods (the source could not
	// list them, or a dump holds none); empty when pods were read.
	Unseen string
	// Hidden counts copies the controller reports beyond those the snapshot holds (a pruned
	// dump, a read filtered by label), HiddenReady those of them the controller counts Ready.
	// They are unseen, never absent.
	Hidden, HiddenReady int32
}

// byController says whether the verdict rests on the controller's word rather than on pods.
func (p podSight) byController() bool { return p.Unseen != "" }

// controller returns what the workload's controller status says, read when first asked for:
// every reader of its conditions reads this record, the observation list's included.
func (w *workload) controller() *facts.Controller {
	if !w.ctlRead {
		w.ctl, w.ctlRead = facts.ReadController(w.Object), true
	}
	return &w.ctl
}

func readControllerStatus(w *workload) controllerStatus {
	var c controllerStatus
	k := kinds.Of(w.Object)
	if k == nil {
		return c
	}
	n, ok := k.Counts(w.Object)
	if !ok {
		return c
	}
	generation, observed, _ := k.Generation(w.Object)
	c = controllerStatus{
		Observed: observed >= generation, Generation: generation,
		Replicas: n.Replicas, Ready: n.Ready, Available: n.Available, Updated: n.Updated,
	}
	if _, ok := w.Object.(*appsv1.Deployment); ok {
		for _, cond := range w.controller().Conditions {
			if cond.Type == string(appsv1.DeploymentAvailable) && cond.Status == string(corev1.ConditionFalse) {
				c.Unavailable = joinReason(cond.Reason, cond.Message)
			}
		}
	}
	return c
}

func joinReason(reason, message string) string {
	switch {
	case message == "":
		return reason
	case reason == "":
		return message
	}
	return reason + ": " + message
}

// podsUnseen says why the snapshot holds no pod of the namespace: the source recorded that it
// could not read pods there (forbidden to a live identity, not in a dump).
func podsUnseen(w *workload) string {
	if w.Snap == nil {
		return ""
	}
	for _, v := range w.Snap.Visibility {
		if v.Kind == "Pod" && (v.Namespace == "" || v.Namespace == w.Namespace) {
			return v.Reason
		}
	}
	return ""
}

// seeCopies fills w.cls.ctrl and w.cls.sight after the pods were counted, and counts the copies
// the snapshot does not show by the controller's word: all of them when no pod was read, the
// ones beyond those seen when some were.
func seeCopies(w *workload) {
	st := &w.cls
	st.ctrl = readControllerStatus(w)
	st.sight = podSight{Unseen: podsUnseen(w)}
	c := st.ctrl
	if st.sight.byController() {
		w.Counts.Existing, w.Counts.Serving = c.Replicas, c.Ready
		return
	}
	var seen, ready int32
	for i := range w.Pods {
		if life := w.life(i); life.Active {
			seen++
			if life.Ready {
				ready++
			}
		}
	}
	if c.Replicas <= seen {
		return
	}
	st.sight.Hidden = c.Replicas - seen
	if c.Ready > ready {
		st.sight.HiddenReady = min(c.Ready-ready, st.sight.Hidden)
	}
	w.Counts.Existing += st.sight.Hidden
	w.Counts.Serving += st.sight.HiddenReady
}

// classifyByController decides the shape from the controller's status and conditions alone,
// for a workload none of whose pods the snapshot holds. It agrees with kstatus
// (readControllerProgress): Current is healthy; InProgress is progressing, or never-starts where
// a condition proves the controller cannot create copies; Failed (ProgressDeadlineExceeded)
// is a failure shape read from the counts. Two verdicts say more than kstatus: a DaemonSet no
// node may run never starts, and copies none of which has been Ready for longer than a
// rollout's deadline, where no controller deadline or condition speaks, are unknown rather
// than progressing. Where copies exist and are not Ready the counts cannot tell a copy that
// never started from one that runs unready, and the verdict says so (st.blind).
func classifyByController(w *workload, ref time.Time) Shape {
	st := &w.cls
	c, d := st.ctrl, w.Declared
	p := readControllerProgress(w)
	st.blind = c.Replicas > c.Ready
	switch {
	case st.nowhere != "":
		st.blind = false
		return runsNowhereShape(w)
	case p.unobserved:
		// The counts and conditions describe an older spec, or none.
		st.why = "the controller has not yet acted on the current spec: " + p.message
		return ShapeProgressing
	case st.failedCreate != "" && c.Replicas < d:
		st.why = "the controller cannot create copies: " + st.failedCreate
		return ShapeNeverStarts
	case p.state == progressFailed:
		return controllerGaveUp(w)
	case p.state == progressCurrent:
		st.why, st.blind = "every declared copy is available", false
		if d == 0 {
			st.why = "scaled to 0"
		}
		return ShapeHealthy
	}
	if why := notReadyPastDeadline(w, ref); why != "" {
		st.why = why
		return ShapeUnknown
	}
	st.why = "the controller is converging (" + p.message + ") and reports no failure"
	if st.rollout.InProgress {
		st.why = "rollout under way inside its deadline (" + p.message + ")"
	}
	if p.reason == string(appsv1.ReplicaSetReplicaFailure) {
		st.why = fmt.Sprintf("the controller reports ReplicaFailure (%s) while it counts %d of %d copies; it clears the condition at its next sync that creates or deletes copies without error",
			p.message, c.Replicas, d)
	}
	if st.blind {
		st.why += "; the counts cannot tell a copy that is starting from one that fails"
	}
	return ShapeProgressing
}

// cannotTell is what the controller's counts leave open about copies that are not Ready.
const cannotTell = "the counts cannot tell copies that never started from copies that run unready"

// controllerGaveUp words a rollout the controller gave up on (ProgressDeadlineExceeded, or
// no progress for longer than the deadline). Copies not created never started; copies that
// exist and are not Ready may never have started or may run unready, which the counts cannot
// tell; some Ready means copies run and too few serve.
func controllerGaveUp(w *workload) Shape {
	st := &w.cls
	want, have := revisionCopies(w)
	ready := updatedReadyCount(w)
	switch {
	case have < want:
		st.why = fmt.Sprintf("the controller reports %s: %d of the %d copies the current revision wants exist",
			timedOutWords(st.rollout), have, want)
		return ShapeNeverStarts
	case have == 0:
		st.why = fmt.Sprintf("the controller reports %s and the current revision has no copy", timedOutWords(st.rollout))
		return ShapeNeverStarts
	case ready == 0:
		st.blind = true
		st.why = fmt.Sprintf("the controller reports %s: the current revision has %s and none is Ready; %s",
			timedOutWords(st.rollout), copiesCount(have), cannotTell)
		return ShapeNeverStarts
	}
	st.why = fmt.Sprintf("the controller reports %s: %d of the current revision's %s are Ready",
		timedOutWords(st.rollout), ready, copiesCount(have))
	return ShapeLiveButIdle
}

// controllerCopiesExist says whether the controller counts copies of the current revision.
func controllerCopiesExist(w *workload) bool {
	_, have := revisionCopies(w)
	return have > 0
}

// controllerNeverStarts is the headline's reason for a never-starts verdict from the counts of
// copies that exist: none of them Ready is what the counts say, not that none started; some
// Ready leaves the reason alone (copies missing, or the controller cannot create more).
func controllerNeverStarts(w *workload) string {
	if updatedReadyCount(w) > 0 {
		return w.cls.why
	}
	if h := &w.cls.history; h.Current != nil && len(h.Revisions) > 1 {
		return fmt.Sprintf("no copy of revision %d became Ready: %s", h.Current.Number, w.cls.why)
	}
	return "no copy became Ready: " + w.cls.why
}

// copiesCount is "1 copy" or "n copies".
func copiesCount(n int32) string {
	if n == 1 {
		return "1 copy"
	}
	return strconv.FormatInt(int64(n), 10) + " copies"
}

// notReadyPastDeadline says why a workload the controller still calls converging has had no
// Ready copy for longer than a rollout is given, where no controller deadline will ever say
// so: kstatus keeps such a workload InProgress for good, the engine calls it unknown, since
// without pods nothing says whether its copies start slowly, fail, or never started. The
// time is the Deployment's Available=False with no rollout under way; for the kinds without
// a deadline, the workload's age while it is still at its first generation (a later change,
// a scale from zero included, is not dated without its pods). Empty when any copy is Ready.
func notReadyPastDeadline(w *workload, ref time.Time) string {
	c := w.cls.ctrl
	if w.Declared == 0 || c.Ready > 0 {
		return ""
	}
	open := cannotTell
	if c.Replicas == 0 {
		open = "no event in the snapshot says why none exists"
	}
	limit := progressDeadline(w.Object)
	switch o := w.Object.(type) {
	case *appsv1.Deployment:
		var since time.Time
		for _, cond := range w.controller().Conditions {
			switch {
			case cond.Type == string(appsv1.DeploymentProgressing) && cond.Status == string(corev1.ConditionTrue) && cond.Reason != reasonNewRSAvailable:
				// A rollout under way: the controller's own deadline will speak.
				return ""
			case cond.Type == string(appsv1.DeploymentAvailable) && cond.Status == string(corev1.ConditionFalse):
				since = cond.Changed
			}
		}
		if !since.IsZero() {
			if age := ref.Sub(since); age > limit {
				return fmt.Sprintf("Available=False for %s, past the %s progress deadline, with no copy Ready (%d of %d copies exist) and no rollout under way for the controller to time out; %s",
					humanDuration(age), humanDuration(limit), c.Replicas, w.Declared, open)
			}
		}
		return ""
	case *appsv1.StatefulSet, *appsv1.DaemonSet, *appsv1.ReplicaSet:
		if m, ok := o.(metav1.Object); !ok || m.GetGeneration() != 1 || w.Created.IsZero() {
			return ""
		}
		if age := ref.Sub(w.Created); age > limit {
			return fmt.Sprintf("no copy Ready %s after the %s was created, still at generation 1 (%d of %d copies exist), past the %s default deadline; a %s reports no deadline or failure, and %s",
				humanDuration(age), w.Kind, c.Replicas, w.Declared, humanDuration(limit), w.Kind, open)
		}
	}
	return ""
}

func timedOutWords(r rollout) string {
	if r.Reason == reasonTimedOut {
		return joinReason(r.Reason, strings.TrimSuffix(r.Message, "."))
	}
	return "no progress within the deadline"
}

// revisionCopies is how many copies the current revision's controller wants and has: the new
// ReplicaSet's spec and status replicas for a Deployment, the updated count against the
// declared one otherwise.
func revisionCopies(w *workload) (want, have int32) {
	if cur := w.cls.Current; cur != nil && cur.ReplicaSet != nil {
		rs := cur.ReplicaSet
		want = 1
		if rs.Spec.Replicas != nil {
			want = *rs.Spec.Replicas
		}
		return want, rs.Status.Replicas
	}
	return w.Declared, w.cls.ctrl.Updated
}

// updatedReadyCount is how many copies of the current revision the controllers count Ready: the
// new ReplicaSet's readyReplicas for a Deployment; otherwise the Ready copies beyond the old
// ones, a lower bound, since the old copies of a stuck rollout are the ones that still serve.
func updatedReadyCount(w *workload) int32 {
	if cur := w.cls.Current; cur != nil && cur.ReplicaSet != nil {
		return cur.ReplicaSet.Status.ReadyReplicas
	}
	c := w.cls.ctrl
	return max(0, min(c.Updated, c.Ready-(c.Replicas-c.Updated)))
}

// controllerWord is what the headline adds when the verdict rests on the controller's status:
// which pods were not seen and why.
func controllerWord(w *workload) string {
	sight := w.cls.sight
	switch {
	case sight.byController():
		return fmt.Sprintf("by the controller's word at generation %d: pods not seen, %s", w.cls.ctrl.Generation, sight.Unseen)
	case sight.Hidden > 0:
		return fmt.Sprintf("%d of the copies by the controller's word: the snapshot does not hold them", sight.Hidden)
	}
	return ""
}

// withControllerWord appends controllerWord to a headline.
func withControllerWord(w *workload, headline string) string {
	if word := controllerWord(w); word != "" {
		return headline + "; " + word
	}
	return headline
}

// controllerStatusEvidence records the counts a controller-status verdict rests on, and the
// copies a partial snapshot leaves out.
func controllerStatusEvidence(b *evidenceBuilder, w *workload) {
	obj := w.object()
	st := &w.cls
	c := st.ctrl
	if st.sight.byController() {
		gen := "generation " + strconv.FormatInt(c.Generation, 10) + " observed"
		if !c.Observed {
			gen = "generation " + strconv.FormatInt(c.Generation, 10) + " not yet observed"
		}
		b.add(SourceControllerStatus, "ControllerCounts", "",
			fmt.Sprintf("%d declared, %d existing, %d Ready, %d available, %d of the current revision; %s", w.Declared, c.Replicas, c.Ready, c.Available, c.Updated, gen), obj, 1, nil)
	}
	if st.sight.byController() && st.blind && w.Shape != ShapeHealthy {
		b.add(SourceControllerStatus, "CountsCannotTell", "",
			fmt.Sprintf("the controller counts %s, %d Ready; without pods, a copy that is not Ready because it never started (not scheduled, image not pulled, container not created) cannot be told from one that runs and is not Ready", copiesCount(c.Replicas), c.Ready), obj, 1, nil)
	}
	if st.sight.Hidden > 0 {
		b.add(SourceVisibility, "CopiesNotInSnapshot", "",
			fmt.Sprintf("the controller reports %d copies (%d Ready) the snapshot does not hold", st.sight.Hidden, st.sight.HiddenReady), obj, 1, nil)
	}
	if st.nowhere != "" {
		b.add(SourceControllerStatus, "NoNodeToRun", "", st.nowhere, obj, 1, nil)
	}
}

// runsNowhere says why a DaemonSet that the controller has observed may run on no node
// (desiredNumberScheduled 0), naming what keeps each visible node out; empty when it may run
// somewhere.
func runsNowhere(w *workload) string {
	ds, ok := w.Object.(*appsv1.DaemonSet)
	// A DaemonSet whose controller has not written status yet reads desiredNumberScheduled 0
	// too: it is not yet placed, not placed nowhere.
	if !ok || ds.Status.DesiredNumberScheduled != 0 || ds.Generation == 0 || ds.Status.ObservedGeneration == 0 ||
		ds.Status.ObservedGeneration < ds.Generation {
		return ""
	}
	var nodes []*corev1.Node
	if w.Snap != nil {
		nodes = w.Snap.Nodes
	}
	if len(nodes) == 0 {
		return "desiredNumberScheduled is 0: no node may run a copy (nodes not visible)"
	}
	ex := excludedNodes(&ds.Spec.Template.Spec, nodes)
	var parts []string
	if ex.selector > 0 {
		parts = append(parts, fmt.Sprintf("%d node(s) do not match its node selector or affinity", ex.selector))
	}
	if ex.taint > 0 {
		parts = append(parts, fmt.Sprintf("%d node(s) have taints it does not tolerate (%s)", ex.taint, strings.Join(ex.taints, ", ")))
	}
	if ex.name > 0 {
		parts = append(parts, fmt.Sprintf("%d node(s) are not its nodeName", ex.name))
	}
	if len(parts) == 0 {
		parts = append(parts, "the visible nodes do not say why")
	}
	return fmt.Sprintf("desiredNumberScheduled is 0 on %d node(s): %s", len(nodes), strings.Join(parts, "; "))
}

// nodeExclusion counts the nodes a DaemonSet's pod template keeps out, by the first predicate
// that fails in the daemon controller's order (nodeName, node affinity, then taints:
// pkg/controller/daemon/daemon_controller.go nodeShouldRunDaemonPod).
type nodeExclusion struct {
	name, selector, taint int
	taints                []string
}

func excludedNodes(spec *corev1.PodSpec, nodes []*corev1.Node) nodeExclusion {
	var ex nodeExclusion
	tols := daemonTolerations(spec)
	seen := map[string]bool{}
	for _, n := range nodes {
		switch {
		case spec.NodeName != "" && spec.NodeName != n.Name:
			ex.name++
		case !matchesNodeSelector(spec, n):
			ex.selector++
		default:
			bad := untolerated(n.Spec.Taints, tols)
			if len(bad) == 0 {
				continue
			}
			ex.taint++
			for _, t := range bad {
				if s := t.ToString(); !seen[s] {
					seen[s] = true
					ex.taints = append(ex.taints, s)
				}
			}
		}
	}
	sort.Strings(ex.taints)
	return ex
}

// daemonTolerations are the template's tolerations plus those the daemon controller adds to
// every daemon pod (pkg/controller/daemon/util/daemonset_util.go AddOrUpdateDaemonPodTolerations).
func daemonTolerations(spec *corev1.PodSpec) []corev1.Toleration {
	tols := append([]corev1.Toleration(nil), spec.Tolerations...)
	add := func(key string, effect corev1.TaintEffect) {
		tols = append(tols, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect})
	}
	add(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute)
	add(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute)
	add(corev1.TaintNodeDiskPressure, corev1.TaintEffectNoSchedule)
	add(corev1.TaintNodeMemoryPressure, corev1.TaintEffectNoSchedule)
	add(corev1.TaintNodePIDPressure, corev1.TaintEffectNoSchedule)
	add(corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule)
	if spec.HostNetwork {
		add(corev1.TaintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule)
	}
	return tols
}

// untolerated returns the NoSchedule and NoExecute taints no toleration matches.
func untolerated(taints []corev1.Taint, tols []corev1.Toleration) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		ok := false
		for _, tol := range tols {
			ok = ok || tolerates(tol, t)
		}
		if !ok {
			out = append(out, t)
		}
	}
	return out
}

// tolerates is the toleration-matches-taint rule of k8s.io/api core/v1 ToleratesTaint for the
// Equal and Exists operators.
func tolerates(tol corev1.Toleration, t corev1.Taint) bool {
	if tol.Effect != "" && tol.Effect != t.Effect {
		return false
	}
	if tol.Key != "" && tol.Key != t.Key {
		return false
	}
	switch tol.Operator {
	case corev1.TolerationOpExists:
		return true
	case "", corev1.TolerationOpEqual:
		return tol.Value == t.Value
	}
	return false
}

// matchesNodeSelector applies the template's nodeSelector and required node affinity to a
// node's labels and name, as the scheduler's and the daemon controller's node-affinity check do.
func matchesNodeSelector(spec *corev1.PodSpec, n *corev1.Node) bool {
	for k, v := range spec.NodeSelector {
		if got, ok := n.Labels[k]; !ok || got != v {
			return false
		}
	}
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	// Terms are ORed; an empty list of terms matches no node.
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if termMatches(term, n) {
			return true
		}
	}
	return false
}

func termMatches(term corev1.NodeSelectorTerm, n *corev1.Node) bool {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return false
	}
	for _, ex := range term.MatchExpressions {
		v, has := n.Labels[ex.Key]
		if !requirementHolds(ex, v, has) {
			return false
		}
	}
	for _, ex := range term.MatchFields {
		if ex.Key != "metadata.name" || !requirementHolds(ex, n.Name, true) {
			return false
		}
	}
	return true
}

func requirementHolds(ex corev1.NodeSelectorRequirement, v string, has bool) bool {
	switch ex.Operator {
	case corev1.NodeSelectorOpIn:
		return has && slices.Contains(ex.Values, v)
	case corev1.NodeSelectorOpNotIn:
		return !has || !slices.Contains(ex.Values, v)
	case corev1.NodeSelectorOpExists:
		return has
	case corev1.NodeSelectorOpDoesNotExist:
		return !has
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !has || len(ex.Values) != 1 {
			return false
		}
		got, err1 := strconv.ParseInt(v, 10, 64)
		want, err2 := strconv.ParseInt(ex.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if ex.Operator == corev1.NodeSelectorOpGt {
			return got > want
		}
		return got < want
	}
	return false
}

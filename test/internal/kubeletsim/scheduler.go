package kubeletsim

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
)

// Filter reasons of the default profile's plugins, in the order kube-scheduler runs them; the
// first failing plugin decides a node's reasons (pkg/scheduler/framework/plugins).
const (
	reasonUnschedulable = "node(s) were unschedulable"                        // nodeunschedulable.ErrReasonUnschedulable
	reasonTaint         = "node(s) had untolerated taint(s)"                  // tainttoleration.Filter
	reasonAffinity      = "node(s) didn't match Pod's node affinity/selector" // nodeaffinity.ErrReasonPod
	reasonTooManyPods   = "Too many pods"                                     // noderesources.fit
	// PostFilter (defaultpreemption): nodes a filter rejected as unresolvable are absent from
	// the dry run; resource-rejected nodes have no lower-priority victims in the simulation.
	preemptNotHelpful = "Preemption is not helpful for scheduling"
	preemptNoVictims  = "No preemption victims found for incoming pod"
)

// nodeVerdict is one node's filter result.
type nodeVerdict struct {
	reasons    []string
	resolvable bool // Unschedulable (resources) rather than UnschedulableAndUnresolvable
}

// schedule tries to place every pending pod this simulation owns.
func (s *Sim) scheduleLoop(ctx context.Context) {
	retry := s.scaled(5 * time.Minute) // podMaxInUnschedulablePodsDuration
	t := time.NewTicker(min(retry, 2*time.Second))
	defer t.Stop()
	lastTry := map[types.UID]time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.schedKick:
		case <-t.C:
		}
		pods, err := s.podLister.List(labels.Everything())
		if err != nil {
			continue
		}
		sort.Slice(pods, func(i, j int) bool { return pods[i].CreationTimestamp.Before(&pods[j].CreationTimestamp) })
		for _, p := range pods {
			if p.Spec.NodeName != "" || p.DeletionTimestamp != nil || !s.owns(p) ||
				(p.Spec.SchedulerName != "" && p.Spec.SchedulerName != corev1.DefaultSchedulerName) ||
				p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			// A pod tried recently waits for the periodic flush, unless its spec changed since
			// it was found unschedulable (-1: the cache has not seen the outcome yet).
			if last, ok := lastTry[p.UID]; ok && s.now().Sub(last) < retry &&
				(unschedulableGen(p) == p.Generation || unschedulableGen(p) == -1) {
				continue
			}
			lastTry[p.UID] = s.now()
			if err := s.scheduleOne(ctx, p); err != nil && ctx.Err() == nil {
				s.logf("kubeletsim: schedule %s/%s: %v", p.Namespace, p.Name, err)
			}
		}
	}
}

// unschedulableGen returns the generation the Unschedulable condition was written for, or -1.
func unschedulableGen(p *corev1.Pod) int64 {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return c.ObservedGeneration
		}
	}
	return -1
}

func (s *Sim) scheduleOne(ctx context.Context, p *corev1.Pod) error {
	verdicts := map[string]nodeVerdict{}
	var fits []*node
	preFilter := s.volumeBinding(p)
	for _, n := range s.nodes {
		if preFilter != "" {
			break
		}
		v := s.filter(p, n)
		if len(v.reasons) == 0 {
			fits = append(fits, n)
			continue
		}
		verdicts[n.spec.Name] = v
	}
	now := s.now()
	if len(fits) == 0 {
		msg := fitError(len(s.nodes), verdicts)
		if preFilter != "" {
			msg = preFilterError(len(s.nodes), preFilter)
		}
		s.sched.event(p, corev1.EventTypeWarning, "FailedScheduling", "Scheduling", msg, now)
		cond := map[string]any{
			"type": corev1.PodScheduled, "status": corev1.ConditionFalse, "reason": corev1.PodReasonUnschedulable,
			"message": msg, "lastProbeTime": nil, "lastTransitionTime": metav1.NewTime(now),
			"observedGeneration": p.Generation,
		}
		patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []any{cond}}})
		_, err := s.cs.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch,
			metav1.PatchOptions{FieldManager: "kube-scheduler"}, "status")
		return err
	}
	// Spread like the default scoring does for replicas: the least loaded fitting node.
	target := fits[0]
	load := s.podsPerNode()
	for _, n := range fits[1:] {
		if load[n.spec.Name] < load[target.spec.Name] {
			target = n
		}
	}
	binding := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID},
		Target:     corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: target.spec.Name},
	}
	err := s.cs.CoreV1().Pods(p.Namespace).Bind(ctx, binding, metav1.CreateOptions{FieldManager: "kube-scheduler"})
	if err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil // bound or deleted meanwhile
		}
		return err
	}
	// Assume the binding until the cache shows it, like the scheduler cache does, so the next
	// pod of this pass sees the node's new load.
	s.assumed[p.UID] = assumedPod{node: target.spec.Name}
	s.sched.event(p, corev1.EventTypeNormal, "Scheduled", "Binding",
		fmt.Sprintf("Successfully assigned %s/%s to %s", p.Namespace, p.Name, target.spec.Name), now)
	return nil
}

// fitError formats framework.FitError.Error() followed by the default preemption's message.
func fitError(numNodes int, verdicts map[string]nodeVerdict) string {
	filter := map[string]int{}
	preempt := map[string]int{}
	for _, v := range verdicts {
		for _, r := range v.reasons {
			filter[r]++
		}
		if v.resolvable {
			preempt[preemptNoVictims]++
		} else {
			preempt[preemptNotHelpful]++
		}
	}
	histogram := func(m map[string]int) string {
		var parts []string
		for r, n := range m {
			parts = append(parts, fmt.Sprintf("%d %s", n, r))
		}
		sort.Strings(parts)
		return strings.Join(parts, ", ")
	}
	return fmt.Sprintf("0/%d nodes are available: %s. preemption: 0/%d nodes are available: %s.",
		numNodes, histogram(filter), numNodes, histogram(preempt))
}

// preFilterError is FitError.Error() for a PreFilter rejection, which is
// UnschedulableAndUnresolvable on every node, so preemption cannot help anywhere.
func preFilterError(numNodes int, reason string) string {
	return fmt.Sprintf("0/%d nodes are available: %s. preemption: 0/%d nodes are available: %d %s.",
		numNodes, reason, numNodes, numNodes, preemptNotHelpful)
}

// Annotations and mode of pkg/scheduler/framework/plugins/volumebinding and
// k8s.io/component-helpers/storage/volume.
const (
	annBindCompleted  = "pv.kubernetes.io/bind-completed"
	annBetaClassName  = "volume.beta.kubernetes.io/storage-class"
	reasonUnboundPVCs = "pod has unbound immediate PersistentVolumeClaims"
)

// volumeBinding is the VolumeBinding plugin's PreFilter (volume_binding.go podHasPVCs, then
// binder.go GetPodVolumeClaims): a claim that is missing, lost or being deleted fails the pod
// with that error, and an unbound claim in immediate binding mode with reasonUnboundPVCs.
// It returns "" when the pod may go on to the filters. Claims in WaitForFirstConsumer mode are
// not modelled: they pass, as if a volume were found or provisioned for the chosen node.
func (s *Sim) volumeBinding(p *corev1.Pod) string {
	unboundImmediate := false
	for i := range p.Spec.Volumes {
		vol := &p.Spec.Volumes[i]
		var name string
		ephemeral := false
		switch {
		case vol.PersistentVolumeClaim != nil:
			name = vol.PersistentVolumeClaim.ClaimName
		case vol.Ephemeral != nil:
			name = p.Name + "-" + vol.Name // ephemeral.VolumeClaimName
			ephemeral = true
		default:
			continue
		}
		pvc, err := s.pvcLister.PersistentVolumeClaims(p.Namespace).Get(name)
		switch {
		case err != nil && ephemeral && apierrors.IsNotFound(err):
			return fmt.Sprintf("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", name)
		case err != nil:
			return err.Error() // the lister's `persistentvolumeclaim "data" not found`
		case pvc.Status.Phase == corev1.ClaimLost:
			return fmt.Sprintf("persistentvolumeclaim %q bound to non-existent persistentvolume %q", pvc.Name, pvc.Spec.VolumeName)
		case pvc.DeletionTimestamp != nil:
			return fmt.Sprintf("persistentvolumeclaim %q is being deleted", pvc.Name)
		}
		if _, done := pvc.Annotations[annBindCompleted]; done && pvc.Spec.VolumeName != "" {
			continue
		}
		if pvc.Spec.VolumeName == "" && s.delayBinding(pvc) {
			continue
		}
		unboundImmediate = true
	}
	if unboundImmediate {
		return reasonUnboundPVCs
	}
	return ""
}

// delayBinding is volume.IsDelayBindingMode: the claim's class exists and waits for the first
// consumer. A class that does not exist means immediate binding.
func (s *Sim) delayBinding(pvc *corev1.PersistentVolumeClaim) bool {
	class := pvc.Annotations[annBetaClassName]
	if class == "" && pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	}
	if class == "" {
		return false
	}
	sc, err := s.scLister.Get(class)
	if err != nil || sc.VolumeBindingMode == nil {
		return false
	}
	return *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
}

// filter runs NodeUnschedulable, TaintToleration, NodeAffinity and NodeResourcesFit, stopping
// at the first that fails.
func (s *Sim) filter(p *corev1.Pod, n *node) nodeVerdict {
	if n.spec.Unschedulable && !tolerates(p.Spec.Tolerations, corev1.Taint{
		Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule,
	}) {
		return nodeVerdict{reasons: []string{reasonUnschedulable}}
	}
	for _, t := range n.spec.Taints {
		if (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) && !tolerates(p.Spec.Tolerations, t) {
			return nodeVerdict{reasons: []string{reasonTaint}}
		}
	}
	if !matchesNodeSelector(p, s.nodeLabels(n)) {
		return nodeVerdict{reasons: []string{reasonAffinity}}
	}
	return s.fitResources(p, n)
}

func tolerates(tols []corev1.Toleration, taint corev1.Taint) bool {
	for _, t := range tols {
		if toleratesTaint(t, taint) {
			return true
		}
	}
	return false
}

// toleratesTaint is corev1.Toleration.ToleratesTaint without the comparison operators.
func toleratesTaint(t corev1.Toleration, taint corev1.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != taint.Key && t.Key != "" {
		return false
	}
	switch t.Operator {
	case "", corev1.TolerationOpEqual:
		return t.Key != "" && t.Value == taint.Value
	case corev1.TolerationOpExists:
		return true
	}
	return false
}

func (s *Sim) nodeLabels(n *node) labels.Set {
	l := labels.Set{"kubernetes.io/hostname": n.spec.Name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
	for k, v := range n.spec.Labels {
		l[k] = v
	}
	return l
}

// matchesNodeSelector applies spec.nodeSelector and the required node affinity terms (ORed terms,
// ANDed expressions; matchFields on metadata.name).
func matchesNodeSelector(p *corev1.Pod, nl labels.Set) bool {
	if !labels.SelectorFromSet(p.Spec.NodeSelector).Matches(nl) {
		return false
	}
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
			continue // an empty term matches nothing
		}
		if termMatches(term, nl) {
			return true
		}
	}
	return false
}

func termMatches(term corev1.NodeSelectorTerm, nl labels.Set) bool {
	for _, e := range term.MatchExpressions {
		if !requirementMatches(e, nl) {
			return false
		}
	}
	for _, e := range term.MatchFields {
		if e.Key != "metadata.name" || !requirementMatches(corev1.NodeSelectorRequirement{
			Key: "kubernetes.io/hostname", Operator: e.Operator, Values: e.Values,
		}, nl) {
			return false
		}
	}
	return true
}

func requirementMatches(e corev1.NodeSelectorRequirement, nl labels.Set) bool {
	var op selection.Operator
	switch e.Operator {
	case corev1.NodeSelectorOpIn:
		op = selection.In
	case corev1.NodeSelectorOpNotIn:
		op = selection.NotIn
	case corev1.NodeSelectorOpExists:
		op = selection.Exists
	case corev1.NodeSelectorOpDoesNotExist:
		op = selection.DoesNotExist
	case corev1.NodeSelectorOpGt:
		op = selection.GreaterThan
	case corev1.NodeSelectorOpLt:
		op = selection.LessThan
	default:
		return false
	}
	r, err := labels.NewRequirement(e.Key, op, e.Values)
	if err != nil {
		return false
	}
	return r.Matches(nl)
}

// fitResources compares the pod's requests plus those of the pods already on the node with the
// node's allocatable (noderesources.fitsRequest).
func (s *Sim) fitResources(p *corev1.Pod, n *node) nodeVerdict {
	alloc := n.allocatable()
	used := corev1.ResourceList{}
	count := 0
	pods, _ := s.podLister.List(labels.Everything())
	for _, q := range pods {
		node := q.Spec.NodeName
		if a, ok := s.assumed[q.UID]; ok && node == "" {
			node = a.node
		}
		if node != n.spec.Name || q.Status.Phase == corev1.PodSucceeded || q.Status.Phase == corev1.PodFailed {
			continue
		}
		count++
		addList(used, podRequests(q))
	}
	var reasons []string
	if podLimit := alloc[corev1.ResourcePods]; int64(count+1) > podLimit.Value() {
		reasons = append(reasons, reasonTooManyPods)
	}
	want := podRequests(p)
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		req, ok := want[name]
		if !ok || req.IsZero() {
			continue
		}
		total := used[name].DeepCopy()
		total.Add(req)
		if total.Cmp(alloc[name]) > 0 {
			reasons = append(reasons, fmt.Sprintf("Insufficient %v", name))
		}
	}
	return nodeVerdict{reasons: reasons, resolvable: true}
}

// podRequests is the larger of the sum of the containers' requests and each init container's.
func podRequests(p *corev1.Pod) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for _, c := range p.Spec.Containers {
		addList(sum, c.Resources.Requests)
	}
	for _, c := range p.Spec.InitContainers {
		for k, v := range c.Resources.Requests {
			if cur, ok := sum[k]; !ok || v.Cmp(cur) > 0 {
				sum[k] = v.DeepCopy()
			}
		}
	}
	return sum
}

func addList(dst, src corev1.ResourceList) {
	for k, v := range src {
		cur := dst[k]
		if cur.Format == "" {
			cur = *resource.NewQuantity(0, v.Format)
		}
		cur.Add(v)
		dst[k] = cur
	}
}

func (s *Sim) podsPerNode() map[string]int {
	out := map[string]int{}
	pods, _ := s.podLister.List(labels.Everything())
	for _, q := range pods {
		node := q.Spec.NodeName
		if a, ok := s.assumed[q.UID]; ok {
			if node != "" {
				delete(s.assumed, q.UID) // the cache caught up
			} else {
				node = a.node
			}
		}
		if node != "" && q.DeletionTimestamp == nil {
			out[node]++
		}
	}
	return out
}

// assumedPod is a binding the pod cache does not show yet (used by the scheduling goroutine only).
type assumedPod struct{ node string }

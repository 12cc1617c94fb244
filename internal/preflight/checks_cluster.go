package preflight

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// The cluster checks. IDs are stable.
const (
	CheckServiceAccount CheckID = "service-account"
	CheckNodeFit        CheckID = "node-fit"
	CheckQuota          CheckID = "quota"
	CheckPodSecurity    CheckID = "pod-security"
)

// serviceAccount: a pod naming an account that does not exist is refused by the
// ServiceAccount admission plugin, so the controller creates no copy at all.
func serviceAccount(s *subject) []Finding {
	spec := s.w.Template.Spec
	name, p := spec.ServiceAccountName, specPath.Child("serviceAccountName")
	if name == "" {
		name, p = spec.DeprecatedServiceAccount, specPath.Child("serviceAccount")
	}
	if name == "" {
		name, p = "default", nil
	}
	for _, sa := range s.m.ServiceAccounts {
		if sa.Namespace == s.w.Namespace && sa.Name == name {
			return []Finding{s.finding(CheckServiceAccount, ResultPass, p, "ServiceAccount %s is created by the manifests", name)}
		}
	}
	inStream := false
	for _, n := range s.m.Namespaces {
		inStream = inStream || n.Name == s.w.Namespace
	}
	switch {
	case name == "default" && inStream:
		return []Finding{s.finding(CheckServiceAccount, ResultPass, p, "namespace %s is created by the manifests; its controller creates ServiceAccount default", s.w.Namespace)}
	case s.nf.Unread["serviceaccount/"+name] != "":
		return []Finding{s.finding(CheckServiceAccount, ResultSkipped, p, "could not read ServiceAccount %s: %s", name, s.nf.Unread["serviceaccount/"+name])}
	case s.nf.ServiceAccounts[name]:
		return []Finding{s.finding(CheckServiceAccount, ResultPass, p, "ServiceAccount %s exists", name)}
	case s.nf.Namespace == nil && s.nf.NamespaceUnread == "" && !inStream:
		return []Finding{s.finding(CheckServiceAccount, ResultFail, nil, "namespace %s does not exist: apply would fail with namespaces %q not found", s.w.Namespace, s.w.Namespace)}
	}
	return []Finding{s.finding(CheckServiceAccount, ResultFail, p,
		"ServiceAccount %s does not exist in namespace %s: every copy would be refused (FailedCreate: error looking up service account %s/%s: serviceaccount %q not found)",
		name, s.w.Namespace, s.w.Namespace, name, name)}
}

// The scheduler's filter reasons (pkg/scheduler/framework/plugins/*), in the order its
// default profile runs the filters; a node is rejected by the first that fails.
const (
	reasonUnschedulable = "node(s) were unschedulable"
	reasonTaints        = "node(s) had untolerated taint(s)"
	reasonAffinity      = "node(s) didn't match Pod's node affinity/selector"
	reasonTooManyPods   = "Too many pods"
)

// nodeFit: a copy must fit on at least one node as the scheduler's filters see it: not
// cordoned, every NoSchedule/NoExecute taint tolerated, the nodeSelector and required node
// affinity matched, and the requests within allocatable minus what the bound pods request.
func nodeFit(s *subject) []Finding {
	if s.f.NodesUnread != "" {
		return []Finding{s.finding(CheckNodeFit, ResultSkipped, nil, "could not list nodes: %s", s.f.NodesUnread)}
	}
	nodes := s.f.Nodes
	if len(nodes) == 0 {
		return []Finding{s.finding(CheckNodeFit, ResultFail, nil, "the cluster has no nodes: no copy can be scheduled")}
	}
	requests := resourcehelper.PodRequests(s.pod, resourcehelper.PodResourcesOptions{})
	used := map[string]corev1.ResourceList{}
	podsOn := map[string]int64{}
	for _, p := range s.f.BoundPods {
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		podsOn[p.Spec.NodeName]++
		l := used[p.Spec.NodeName]
		if l == nil {
			l = corev1.ResourceList{}
			used[p.Spec.NodeName] = l
		}
		for k, v := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
			q := l[k]
			q.Add(v)
			l[k] = q
		}
	}
	affinity := nodeaffinity.GetRequiredNodeAffinity(s.pod)
	// reasons counts, as the scheduler does, each node's first failing filter; intended those
	// of the nodes the selector and affinity match, which say what to fix when there are any.
	reasons, intended := map[string]int{}, map[string]int{}
	var fits []string
	for _, n := range nodes {
		why := s.nodeRejects(n, affinity, requests, used[n.Name], podsOn[n.Name])
		if len(why) == 0 {
			fits = append(fits, n.Name)
		}
		matched, err := affinity.Match(n)
		for _, r := range why {
			reasons[r]++
			if matched && err == nil {
				intended[r]++
			}
		}
	}
	s.eligible = len(fits)
	against := fmt.Sprintf("allocatable minus the requests of the %d pods bound to nodes", len(s.f.BoundPods))
	if s.f.BoundPodsUnread != "" {
		against = "allocatable alone (could not list the bound pods: " + s.f.BoundPodsUnread + ")"
	}
	if len(fits) > 0 {
		sort.Strings(fits)
		shown := fits
		if len(shown) > 5 {
			shown = append(shown[:5:5], "...")
		}
		return []Finding{s.finding(CheckNodeFit, ResultPass, nil, "a copy fits on %d of %d nodes (%s), requests %s against %s",
			len(fits), len(nodes), strings.Join(shown, ", "), listResources(requests), against)}
	}
	hist := make([]string, 0, len(reasons))
	for r, n := range reasons {
		hist = append(hist, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(hist)
	top := reasonAffinity
	if len(intended) > 0 {
		top = commonest(intended)
	}
	return []Finding{s.finding(CheckNodeFit, ResultFail, s.reasonPath(top),
		"no node fits a copy; the scheduler would report: 0/%d nodes are available: %s. (requests %s against %s)",
		len(nodes), strings.Join(hist, ", "), listResources(requests), against)}
}

// commonest is the reason most nodes give, the first by name on a tie.
func commonest(reasons map[string]int) string {
	top, topN := "", 0
	for r, n := range reasons {
		if n > topN || n == topN && r < top {
			top, topN = r, n
		}
	}
	return top
}

// nodeRejects returns why the scheduler's filters would reject the node, as they word it.
func (s *subject) nodeRejects(n *corev1.Node, affinity nodeaffinity.RequiredNodeAffinity, requests, used corev1.ResourceList, pods int64) []string {
	tolerations := s.pod.Spec.Tolerations
	if n.Spec.Unschedulable && !corev1helpers.TolerationsTolerateTaint(logr.Discard(), tolerations,
		&corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}, false) {
		return []string{reasonUnschedulable}
	}
	if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(logr.Discard(), n.Spec.Taints, tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, false); untolerated {
		return []string{reasonTaints}
	}
	if ok, err := affinity.Match(n); err != nil || !ok {
		return []string{reasonAffinity}
	}
	var out []string
	alloc := n.Status.Allocatable
	if most := alloc.Pods(); most != nil && !most.IsZero() && pods+1 > most.Value() {
		out = append(out, reasonTooManyPods)
	}
	names := make([]string, 0, len(requests))
	for k := range requests {
		names = append(names, string(k))
	}
	sort.Strings(names)
	for _, k := range names {
		want := requests[corev1.ResourceName(k)]
		if want.IsZero() || k == string(corev1.ResourcePods) {
			continue
		}
		free := alloc[corev1.ResourceName(k)].DeepCopy()
		free.Sub(used[corev1.ResourceName(k)])
		if want.Cmp(free) > 0 {
			out = append(out, "Insufficient "+k)
		}
	}
	return out
}

// reasonPath is the manifest field the commonest reason points at.
func (s *subject) reasonPath(reason string) *field.Path {
	spec := s.w.Template.Spec
	switch {
	case reason == reasonTaints:
		return specPath.Child("tolerations")
	case reason == reasonAffinity && len(spec.NodeSelector) > 0:
		return specPath.Child("nodeSelector")
	case reason == reasonAffinity:
		return specPath.Child("affinity", "nodeAffinity")
	case strings.HasPrefix(reason, "Insufficient "):
		name := corev1.ResourceName(strings.TrimPrefix(reason, "Insufficient "))
		best, bestQ := -1, resource.Quantity{}
		for i := range spec.Containers {
			if q, ok := spec.Containers[i].Resources.Requests[name]; ok && (best < 0 || q.Cmp(bestQ) > 0) {
				best, bestQ = i, q
			}
		}
		if best >= 0 {
			return specPath.Child("containers").Index(best).Child("resources", "requests").Key(string(name))
		}
	}
	return nil
}

// addDaemonTolerations adds what the DaemonSet controller adds to its pods
// (pkg/controller/daemon/util.AddOrUpdateDaemonPodTolerations).
func addDaemonTolerations(p *corev1.Pod) {
	add := []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: corev1.TaintNodeDiskPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodePIDPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	}
	if p.Spec.HostNetwork {
		add = append(add, corev1.Toleration{Key: corev1.TaintNodeNetworkUnavailable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	p.Spec.Tolerations = append(p.Spec.Tolerations, add...)
}

func listResources(l corev1.ResourceList) string {
	if len(l) == 0 {
		return "none"
	}
	names := make([]string, 0, len(l))
	for k := range l {
		names = append(names, string(k))
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, k := range names {
		q := l[corev1.ResourceName(k)]
		parts = append(parts, k+" "+q.String())
	}
	return strings.Join(parts, ", ")
}

// quota: while the rollout runs, the copies beyond today's (the surge, and any scale-up) are
// charged to the namespace's ResourceQuotas; a copy the quota has no room for is refused.
func quota(s *subject) []Finding {
	if s.nf.QuotasUnread != "" {
		return []Finding{s.finding(CheckQuota, ResultSkipped, nil, "could not list ResourceQuotas: %s", s.nf.QuotasUnread)}
	}
	if len(s.nf.Quotas) == 0 {
		return []Finding{s.finding(CheckQuota, ResultPass, nil, "namespace %s has no ResourceQuota", s.w.Namespace)}
	}
	extra, why := s.extraPods()
	requests := resourcehelper.PodRequests(s.pod, resourcehelper.PodResourcesOptions{})
	limits := resourcehelper.PodLimits(s.pod, resourcehelper.PodResourcesOptions{})
	var out []Finding
	room := []string{}
	for _, q := range s.nf.Quotas {
		if len(q.Spec.Scopes) > 0 || q.Spec.ScopeSelector != nil {
			out = append(out, s.finding(CheckQuota, ResultSkipped, nil, "ResourceQuota %s has scopes, which are not evaluated", q.Name))
			continue
		}
		hard := q.Status.Hard
		if len(hard) == 0 {
			hard = q.Spec.Hard
		}
		names := make([]string, 0, len(hard))
		for k := range hard {
			names = append(names, string(k))
		}
		sort.Strings(names)
		failed := false
		for _, k := range names {
			per, ok := perPod(corev1.ResourceName(k), requests, limits)
			if !ok || extra == 0 {
				continue
			}
			need := per.DeepCopy()
			need.Mul(int64(extra))
			h := hard[corev1.ResourceName(k)]
			used := q.Status.Used[corev1.ResourceName(k)]
			free := h.DeepCopy()
			free.Sub(used)
			if need.Cmp(free) > 0 {
				failed = true
				out = append(out, s.finding(CheckQuota, ResultFail, s.quotaPath(k),
					"ResourceQuota %s: %s is at %s of %s, and %s would add %s (%s): copies would be refused (FailedCreate: exceeded quota)",
					q.Name, k, used.String(), h.String(), why, need.String(), quantityPer(per, extra)))
			}
		}
		if !failed {
			room = append(room, q.Name)
		}
	}
	if len(room) > 0 && !hasResult(out, ResultFail) {
		out = append(out, s.finding(CheckQuota, ResultPass, nil, "ResourceQuota %s has room for %s", strings.Join(room, ", "), why))
	}
	return out
}

func hasResult(fs []Finding, r Result) bool {
	for _, f := range fs {
		if f.Result == r {
			return true
		}
	}
	return false
}

func quantityPer(per resource.Quantity, n int) string {
	if n == 1 {
		return "one copy"
	}
	return fmt.Sprintf("%d copies of %s", n, per.String())
}

// perPod is what one copy charges to a quota resource.
func perPod(name corev1.ResourceName, requests, limits corev1.ResourceList) (resource.Quantity, bool) {
	n := string(name)
	switch {
	case n == "pods" || n == "count/pods":
		return *resource.NewQuantity(1, resource.DecimalSI), true
	case strings.HasPrefix(n, "requests."):
		q, ok := requests[corev1.ResourceName(strings.TrimPrefix(n, "requests."))]
		return q, ok
	case strings.HasPrefix(n, "limits."):
		q, ok := limits[corev1.ResourceName(strings.TrimPrefix(n, "limits."))]
		return q, ok
	case n == "cpu" || n == "memory" || n == "ephemeral-storage":
		q, ok := requests[name]
		return q, ok
	}
	return resource.Quantity{}, false
}

func (s *subject) quotaPath(k string) *field.Path {
	kind, res := "requests", k
	if before, after, ok := strings.Cut(k, "."); ok && (before == "requests" || before == "limits") {
		kind, res = before, after
	}
	for i := range s.w.Template.Spec.Containers {
		r := s.w.Template.Spec.Containers[i].Resources
		l := r.Requests
		if kind == "limits" {
			l = r.Limits
		}
		if _, ok := l[corev1.ResourceName(res)]; ok {
			return specPath.Child("containers").Index(i).Child("resources", kind).Key(res)
		}
	}
	if k == "pods" || k == "count/pods" {
		return field.NewPath("spec", "replicas")
	}
	return nil
}

// extraPods counts the copies beyond today's at the rollout's peak, and says why, resolving
// maxSurge as the controllers do (a Deployment's percentage rounds up:
// pkg/controller/deployment/util.ResolveFenceposts; a DaemonSet's too: daemon/util.SurgeCount).
func (s *subject) extraPods() (int, string) {
	var live any
	if s.live != nil {
		live = s.live.Object
	}
	changed := len(changes(s)) > 0
	switch o := s.w.Object.(type) {
	case *appsv1.Deployment:
		n := int(replicas(o.Spec.Replicas))
		l, ok := live.(*appsv1.Deployment)
		if !ok {
			return n, plural(n, "new copy", "new copies")
		}
		cur := int(replicas(l.Spec.Replicas))
		if o.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType || !changed {
			return max(0, n-cur), plural(max(0, n-cur), "added copy", "added copies")
		}
		ms := intstr.FromString("25%")
		if ru := o.Spec.Strategy.RollingUpdate; ru != nil && ru.MaxSurge != nil {
			ms = *ru.MaxSurge
		}
		surge, err := intstr.GetScaledValueFromIntOrPercent(&ms, n, true)
		if err != nil {
			surge = 0
		}
		extra := max(0, n+surge-cur)
		return extra, fmt.Sprintf("%s (maxSurge %s of %d replicas, from %d today)", plural(extra, "surge copy", "surge copies"), ms.String(), n, cur)
	case *appsv1.StatefulSet:
		n := int(replicas(o.Spec.Replicas))
		l, ok := live.(*appsv1.StatefulSet)
		if !ok {
			return n, plural(n, "new copy", "new copies")
		}
		// A StatefulSet replaces a copy after deleting it: no surge.
		extra := max(0, n-int(replicas(l.Spec.Replicas)))
		return extra, plural(extra, "added copy", "added copies")
	case *appsv1.DaemonSet:
		nodes := max(s.eligible, 0)
		if _, ok := live.(*appsv1.DaemonSet); !ok {
			return nodes, plural(nodes, "new copy", "new copies") + " (one per node it fits)"
		}
		ms := intstr.FromInt32(0)
		if ru := o.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MaxSurge != nil {
			ms = *ru.MaxSurge
		}
		surge, err := intstr.GetScaledValueFromIntOrPercent(&ms, nodes, true)
		if err != nil || !changed {
			surge = 0
		}
		return surge, fmt.Sprintf("%s (maxSurge %s of %d nodes)", plural(surge, "surge copy", "surge copies"), ms.String(), nodes)
	}
	return 0, "no copies"
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// podSecurity: the namespace's PodSecurity enforce level refuses pods that violate it, so the
// controller creates no copy; warn and audit levels only warn. Evaluated with the admission
// plugin's own policy package.
func podSecurity(s *subject) []Finding {
	ns := s.namespaceAfterApply()
	if ns == nil {
		if s.nf.NamespaceUnread != "" {
			return []Finding{s.finding(CheckPodSecurity, ResultSkipped, nil, "could not read namespace %s: %s", s.w.Namespace, s.nf.NamespaceUnread)}
		}
		return []Finding{s.finding(CheckPodSecurity, ResultSkipped, nil, "namespace %s does not exist", s.w.Namespace)}
	}
	// The API server's defaults when its admission configuration sets none.
	defaults := psaapi.Policy{
		Enforce: psaapi.LevelVersion{Level: psaapi.LevelPrivileged, Version: psaapi.LatestVersion()},
		Audit:   psaapi.LevelVersion{Level: psaapi.LevelPrivileged, Version: psaapi.LatestVersion()},
		Warn:    psaapi.LevelVersion{Level: psaapi.LevelPrivileged, Version: psaapi.LatestVersion()},
	}
	pol, errs := psaapi.PolicyToEvaluate(ns.Labels, defaults)
	ev, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return []Finding{s.finding(CheckPodSecurity, ResultSkipped, nil, "the PodSecurity policy cannot be built: %s", err)}
	}
	var out []Finding
	if len(errs) > 0 {
		out = append(out, s.finding(CheckPodSecurity, ResultWarn, nil, "namespace %s has invalid PodSecurity labels (%s); the admission plugin evaluates %s", ns.Name, errs.ToAggregate().Error(), pol.String()))
	}
	meta, spec := &s.w.Template.ObjectMeta, &s.w.Template.Spec
	enforce := policy.AggregateCheckResults(ev.EvaluatePod(pol.Enforce, meta, spec))
	if !enforce.Allowed {
		out = append(out, s.finding(CheckPodSecurity, ResultFail, specPath,
			"namespace %s enforces PodSecurity %q, which would refuse every copy: violates PodSecurity %q: %s",
			ns.Name, pol.Enforce.String(), pol.Enforce.String(), enforce.ForbiddenDetail()))
	}
	for _, m := range []struct {
		mode string
		lv   psaapi.LevelVersion
	}{{"warn", pol.Warn}, {"audit", pol.Audit}} {
		if r := policy.AggregateCheckResults(ev.EvaluatePod(m.lv, meta, spec)); !r.Allowed {
			out = append(out, s.finding(CheckPodSecurity, ResultWarn, specPath,
				"namespace %s's PodSecurity %s level %q would report the copies: %s", ns.Name, m.mode, m.lv.String(), r.ForbiddenDetail()))
		}
	}
	if len(out) == 0 {
		label := "enforces " + fmt.Sprintf("%q", pol.Enforce.String())
		if _, ok := ns.Labels[psaapi.EnforceLevelLabel]; !ok {
			label = "sets no enforce level (the API server's default, privileged unless its admission configuration says otherwise)"
		}
		out = append(out, s.finding(CheckPodSecurity, ResultPass, nil, "namespace %s %s and admits the pod template", ns.Name, label))
	}
	return out
}

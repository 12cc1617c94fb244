package rules

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
)

// The scheduling rules. IDs are stable: scripts and the documentation refer to them.
const (
	RuleNodeSelector         RuleID = "scheduling-node-selector"
	RuleInsufficientResource RuleID = "scheduling-insufficient-resource"
	RuleUntoleratedTaint     RuleID = "scheduling-untolerated-taint"
	RulePodAffinity          RuleID = "scheduling-pod-affinity"
	RuleHostPort             RuleID = "scheduling-host-port"
	RuleTopologySpread       RuleID = "scheduling-topology-spread"
	RuleStorageClass         RuleID = "storage-class"
	RuleCordonedNodes        RuleID = "scheduling-cordoned-nodes"
)

// schedulingFamily reads the scheduler's FitError and the claim provisioner's failures.
var _ = register(family{
	order:  60,
	name:   "scheduling",
	detect: (*ranker).schedulingRules,
	// The scheduler names a missing claim; the volume that refers to it is the config rule's field.
	borrows: []RuleID{RuleVolumeRefNotFound},
	rules: []RuleInfo{
		{
			RuleNodeSelector, "nodeSelector or required node affinity matches no node",
			"FailedScheduling `node(s) didn't match Pod's node affinity/selector`; a DaemonSet's desiredNumberScheduled 0 with nodes its selector does not match",
			"Use a label value that nodes carry (kubectl get nodes --show-labels), or relax the requirement.", false,
		},
		{
			RuleInsufficientResource, "Resource requests fit on no node",
			"FailedScheduling `Insufficient cpu|memory|...`",
			"Lower the requests or add capacity.", false,
		},
		{
			RuleUntoleratedTaint, "Nodes carry taints the pod does not tolerate",
			"FailedScheduling `node(s) had untolerated taint(s)`; a DaemonSet's desiredNumberScheduled 0 with every matching node tainted",
			"Add the matching toleration, or schedule onto untainted nodes.", false,
		},
		{
			RulePodAffinity, "Pod affinity or anti-affinity cannot be satisfied",
			"FailedScheduling `node(s) didn't match pod (anti-)affinity rules`",
			"Relax the rule (preferred instead of required) or add nodes in other topology domains.", false,
		},
		{
			RuleHostPort, "hostPort is taken on every node",
			"FailedScheduling `node(s) didn't have free ports for the requested pod ports`",
			"Drop hostPort or use a port that is free.", false,
		},
		{
			RuleTopologySpread, "Topology spread constraints cannot be satisfied",
			"FailedScheduling `node(s) didn't match pod topology spread constraints`",
			"Raise maxSkew or use whenUnsatisfiable: ScheduleAnyway.", false,
		},
		{
			RuleCordonedNodes, "The only nodes the pod may run on are cordoned",
			"FailedScheduling `node(s) were unschedulable` with the nodes the template's nodeSelector or required node affinity picks all cordoned (spec.unschedulable)",
			"Uncordon or replace the nodes (kubectl uncordon), or let the template select nodes that take pods.", false,
		},
		{
			RuleStorageClass, "A volumeClaimTemplate's storage class cannot provision",
			"ProvisioningFailed, `storageclass.storage.k8s.io \"x\" not found`, unbound PersistentVolumeClaims",
			"Name an existing StorageClass (kubectl get storageclass).", false,
		},
	},
})

// Scheduling failures. The scheduler's FailedScheduling event and the pod's PodScheduled=False
// condition carry FitError.Error() (pkg/scheduler/framework/types.go):
// `0/N nodes are available: <count> <reason>, <count> <reason>. preemption: ...`, with reasons
// from the filter plugins (pkg/scheduler/framework/plugins/*):
//   - nodeaffinity: `node(s) didn't match Pod's node affinity/selector`
//   - noderesources: `Insufficient cpu`, `Insufficient memory`, `Insufficient <resource>`
//   - tainttoleration: `node(s) had untolerated taint(s)` (Filter, v1.37), `node(s) had untolerated taint {KEY: VALUE}`
//     (Filter, v1.31: one reason per distinct taint), `node(s) had taints that the pod didn't tolerate`
//   - nodeunschedulable: `node(s) were unschedulable` (cordoned nodes, both versions)
//   - interpodaffinity: `node(s) didn't match pod affinity rules`, `node(s) didn't match pod anti-affinity rules`
//   - nodeports: `node(s) didn't have free ports for the requested pod ports`
//   - podtopologyspread: `node(s) didn't match pod topology spread constraints`
//   - volumebinding: `pod has unbound immediate PersistentVolumeClaims`,
//     `node(s) didn't find available persistent volumes to bind`, `node(s) did not have enough free storage`
//
// A missing StorageClass shows as `storageclass.storage.k8s.io "NAME" not found`, in the
// persistentvolume controller's ProvisioningFailed event on the claim
// (pkg/controller/volume/persistentvolume/pv_controller.go) or in the scheduler's PreFilter message.
var (
	reFitError     = regexp.MustCompile(`^0/(\d+) nodes are available: (.*?)(?:\. preemption: .*|\.?)$`)
	reFitReason    = regexp.MustCompile(`^(\d+) (.+)$`)
	reInsufficient = regexp.MustCompile(`^Insufficient (\S+)$`)
	reStorageClass = regexp.MustCompile(`storageclass\.storage\.k8s\.io "([^"]+)" not found`)
)

// schedulingRules reads the scheduler's reasons and the claim provisioner's failures.
func (r *ranker) schedulingRules() {
	if r.in.Nowhere != "" {
		r.runsNowhere(r.in.Nowhere)
	}
	for _, s := range r.in.Signals {
		// The literal parts of the patterns rule out most messages (every log line) without
		// running them.
		if !strings.Contains(s.Text, `storageclass.storage.k8s.io "`) && s.Reason != "ProvisioningFailed" && !strings.HasPrefix(s.Text, "0/") {
			continue
		}
		r.read(s)
		if m := reStorageClass.FindStringSubmatch(s.Text); m != nil {
			r.storageClass(m[1], s)
			s.Explained = true
			continue
		}
		if s.Reason == "ProvisioningFailed" {
			r.storageClass("", s)
			s.Explained = true
			continue
		}
		m := reFitError.FindStringSubmatch(s.Text)
		if m == nil {
			continue
		}
		s.Explained = true
		if ref := reRefMissing.FindStringSubmatch(m[2]); ref != nil && ref[1] == "persistentvolumeclaim" {
			r.claimMissing(ref[2])
			continue
		}
		r.fitReasons(m[2], atoi(m[1]), s.Text)
	}
}

// fitReason is one filter's reason in a FitError, with the nodes it holds on. Reasons of one
// kind that a version writes per value (v1.31's one reason per untolerated taint) are summed.
type fitReason struct {
	reason string
	nodes  int
	// counted says the message gave a count; a reason without one holds everywhere.
	counted bool
}

// fitReasons sums the reasons of a FitError by kind and scores each by the share of nodes it
// holds on: a reason that holds on every node is the whole story, one that holds on some of
// them shares the blame.
func (r *ranker) fitReasons(list string, total int, msg string) {
	var reasons []fitReason
	at := map[string]int{}
	for _, part := range strings.Split(list, ", ") {
		fr := fitReason{reason: part}
		if rm := reFitReason.FindStringSubmatch(part); rm != nil {
			fr = fitReason{reason: rm[2], nodes: atoi(rm[1]), counted: true}
		}
		if strings.HasPrefix(fr.reason, reasonTaint131) {
			fr.reason = reasonTaint
		}
		if i, ok := at[fr.reason]; ok {
			reasons[i].nodes += fr.nodes
			reasons[i].counted = reasons[i].counted && fr.counted
			continue
		}
		at[fr.reason] = len(reasons)
		reasons = append(reasons, fr)
	}
	score := func(fr fitReason) int {
		if !fr.counted || total <= 0 || fr.nodes >= total {
			return scoreCertain
		}
		return scoreLikely - 10 + 20*fr.nodes/total
	}
	for _, fr := range reasons {
		if fr.reason == reasonCordoned {
			// Cordoned nodes and nodes the selection excludes together are every node: the
			// selection pins the pod to cordoned nodes.
			pinned := fr
			if i, ok := at[reasonNodeSelection]; ok {
				pinned.nodes += reasons[i].nodes
			}
			r.cordoned(score(fr), score(pinned), msg)
			continue
		}
		r.fitReason(fr.reason, score(fr), msg)
	}
}

// Reasons the scheduler writes (see the list above) that the rules compare with.
const (
	reasonTaint         = "node(s) had untolerated taint(s)"
	reasonTaint131      = "node(s) had untolerated taint {"
	reasonCordoned      = "node(s) were unschedulable"
	reasonNodeSelection = "node(s) didn't match Pod's node affinity/selector"
)

// cordoned names what keeps a pod on cordoned nodes: the nodeSelector entries and required
// node-affinity values that only cordoned nodes carry (pinned is their score: the cordoned
// nodes and the ones the selection excludes together), else the cordoned nodes themselves.
func (r *ranker) cordoned(score, pinned int, msg string) {
	nodes := r.in.Nodes
	var cordoned []*corev1.Node
	for _, n := range nodes {
		if n.Spec.Unschedulable {
			cordoned = append(cordoned, n)
		}
	}
	if len(cordoned) == 0 {
		return
	}
	names := make([]string, 0, len(cordoned))
	for _, n := range cordoned {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	// onlyCordoned says some node satisfies ok and every such node is cordoned.
	onlyCordoned := func(key string, ok func(string) bool) bool {
		some := false
		for _, n := range nodes {
			if v, has := n.Labels[key]; has && ok(v) {
				if !n.Spec.Unschedulable {
					return false
				}
				some = true
			}
		}
		return some
	}
	spec := &r.in.Template.Spec
	found := false
	keys := make([]string, 0, len(spec.NodeSelector))
	for k := range spec.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := spec.NodeSelector[k]
		if onlyCordoned(k, func(x string) bool { return x == v }) {
			r.suspectTemplate(RuleCordonedNodes, r.specPath.Child("nodeSelector").Key(k), pinned,
				"only cordoned nodes ("+strings.Join(names, ", ")+") have label "+k+"="+v+": "+msg)
			found = true
		}
	}
	if na := spec.Affinity; na != nil && na.NodeAffinity != nil && na.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		termsPath := r.specPath.Child("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
		for i, term := range na.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for j, ex := range term.MatchExpressions {
				if ex.Operator != corev1.NodeSelectorOpIn || !onlyCordoned(ex.Key, func(x string) bool { return contains(ex.Values, x) }) {
					continue
				}
				r.suspectTemplate(RuleCordonedNodes, termsPath.Index(i).Child("matchExpressions").Index(j), pinned,
					"only cordoned nodes ("+strings.Join(names, ", ")+") have "+ex.Key+" in "+strings.Join(ex.Values, ", ")+": "+msg)
				found = true
			}
		}
	}
	if found {
		return
	}
	for _, n := range cordoned {
		r.suspectObject(RuleCordonedNodes, "Node/"+n.Name, n, field.NewPath("spec", "unschedulable"), score,
			"the node is cordoned: "+msg)
	}
}

func (r *ranker) fitReason(reason string, score int, msg string) {
	spec := &r.in.Template.Spec
	aff := r.specPath.Child("affinity")
	switch {
	case reason == reasonNodeSelection:
		r.nodeSelection(msg)
	case reInsufficient.MatchString(reason):
		r.requests(reInsufficient.FindStringSubmatch(reason)[1], msg)
	case reason == reasonTaint || reason == "node(s) had taints that the pod didn't tolerate":
		r.suspectTemplate(RuleUntoleratedTaint, r.specPath.Child("tolerations"), score,
			"nodes carry taints the pod does not tolerate"+r.nodeTaints()+": "+msg)
	case reason == "node(s) didn't match pod affinity rules":
		r.suspectTemplate(RulePodAffinity, aff.Child("podAffinity", "requiredDuringSchedulingIgnoredDuringExecution"), score, msg)
	case reason == "node(s) didn't match pod anti-affinity rules":
		r.suspectTemplate(RulePodAffinity, aff.Child("podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution"), score, msg)
	case reason == "node(s) didn't have free ports for the requested pod ports":
		for _, c := range r.containers() {
			for j, p := range c.c.Ports {
				if p.HostPort != 0 {
					r.suspectTemplate(RuleHostPort, c.path.Child("ports").Index(j).Child("hostPort"), score, msg)
				}
			}
		}
	case reason == "node(s) didn't match pod topology spread constraints":
		for i := range spec.TopologySpreadConstraints {
			r.suspectTemplate(RuleTopologySpread, r.specPath.Child("topologySpreadConstraints").Index(i), score, msg)
		}
	case reason == "pod has unbound immediate PersistentVolumeClaims" ||
		reason == "node(s) didn't find available persistent volumes to bind" ||
		reason == "node(s) did not have enough free storage":
		// Which of the claims' fields no volume satisfies is the claims family's to say.
		r.storageClass("", &Signal{Text: msg})
	}
}

// runsNowhere names what keeps a DaemonSet off every node: the node selector or affinity that
// the nodes do not match, the tolerations that miss their taints. Without visible nodes each
// is a possibility.
func (r *ranker) runsNowhere(msg string) {
	spec := &r.in.Template.Spec
	nodes := r.in.Nodes
	if len(nodes) == 0 {
		if len(spec.NodeSelector) > 0 || spec.Affinity != nil && spec.Affinity.NodeAffinity != nil {
			r.nodeSelection(msg)
		}
		r.suspectTemplate(RuleUntoleratedTaint, r.specPath.Child("tolerations"), scorePossible, msg)
		return
	}
	ex := &r.in.Excluded
	if ex.Selector > 0 {
		r.nodeSelection(msg)
	}
	if ex.Taint > 0 {
		score := scoreCertain
		if ex.Taint < len(nodes) {
			score = scoreLikely - 10 + 20*ex.Taint/len(nodes)
		}
		r.suspectTemplate(RuleUntoleratedTaint, r.specPath.Child("tolerations"), score,
			"nodes carry taints the pod does not tolerate ("+strings.Join(ex.Taints, ", ")+"): "+msg)
	}
}

// nodeSelection finds the nodeSelector entry or required node-affinity value that no node
// satisfies. Without visible nodes it names the selector and affinity as a whole.
func (r *ranker) nodeSelection(msg string) {
	spec := &r.in.Template.Spec
	nodes := r.in.Nodes
	found := false
	keys := make([]string, 0, len(spec.NodeSelector))
	for k := range spec.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := spec.NodeSelector[k]
		if len(nodes) == 0 || !AnyNodeHas(nodes, k, func(x string) bool { return x == v }) {
			r.suspectTemplate(RuleNodeSelector, r.specPath.Child("nodeSelector").Key(k), scoreCertain,
				"no node has label "+k+"="+v+onNodes(nodes, k)+": "+msg)
			found = true
		}
	}
	na := spec.Affinity
	if na != nil && na.NodeAffinity != nil && na.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		termsPath := r.specPath.Child("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
		for i, term := range na.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for j, ex := range term.MatchExpressions {
				ep := termsPath.Index(i).Child("matchExpressions").Index(j)
				found = r.nodeExpression(nodes, ex, ep, msg) || found
			}
		}
	}
	if found {
		return
	}
	// Every value is on some node (cordoned, tainted or full ones, say): name what is set, and
	// an unset field only when neither is; an unset field never outranks a set one.
	hasSelector, hasAffinity := len(spec.NodeSelector) > 0, na != nil && na.NodeAffinity != nil
	if hasSelector || !hasAffinity {
		r.suspectTemplate(RuleNodeSelector, r.specPath.Child("nodeSelector"), scorePossible, msg)
	}
	if hasAffinity || !hasSelector {
		r.suspectTemplate(RuleNodeSelector, r.specPath.Child("affinity", "nodeAffinity"), scorePossible, msg)
	}
}

// nodeExpression names the values of an In requirement that no node carries, or the whole
// expression when no node satisfies it otherwise.
func (r *ranker) nodeExpression(nodes []*corev1.Node, ex corev1.NodeSelectorRequirement, p *field.Path, msg string) bool {
	if len(nodes) == 0 {
		r.suspectTemplate(RuleNodeSelector, p, scoreLikely, "nodes are not visible; "+msg)
		return true
	}
	if ex.Operator == corev1.NodeSelectorOpIn {
		satisfied := false
		for _, v := range ex.Values {
			if AnyNodeHas(nodes, ex.Key, func(x string) bool { return x == v }) {
				satisfied = true
			}
		}
		if satisfied {
			return false
		}
		for k, v := range ex.Values {
			r.suspectTemplate(RuleNodeSelector, p.Child("values").Index(k), scoreCertain-k,
				"no node has "+ex.Key+"="+v+onNodes(nodes, ex.Key)+": "+msg)
		}
		return true
	}
	ok := false
	for _, n := range nodes {
		v, has := n.Labels[ex.Key]
		switch ex.Operator {
		case corev1.NodeSelectorOpNotIn:
			ok = ok || !has || !contains(ex.Values, v)
		case corev1.NodeSelectorOpExists:
			ok = ok || has
		case corev1.NodeSelectorOpDoesNotExist:
			ok = ok || !has
		default: // Gt, Lt: leave to the scheduler's verdict
			ok = false
		}
	}
	if !ok {
		r.suspectTemplate(RuleNodeSelector, p, scoreLikely, "no node satisfies "+ex.Key+" "+string(ex.Operator)+onNodes(nodes, ex.Key)+": "+msg)
		return true
	}
	return false
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// AnyNodeHas reports whether a node carries label key with a value ok accepts.
func AnyNodeHas(nodes []*corev1.Node, key string, ok func(string) bool) bool {
	for _, n := range nodes {
		if v, has := n.Labels[key]; has && ok(v) {
			return true
		}
	}
	return false
}

// onNodes lists the values nodes do carry for a label, for the reason.
func onNodes(nodes []*corev1.Node, key string) string {
	set := map[string]bool{}
	for _, n := range nodes {
		if v, ok := n.Labels[key]; ok {
			set[v] = true
		}
	}
	if len(set) == 0 {
		return ""
	}
	vals := make([]string, 0, len(set))
	for v := range set {
		vals = append(vals, v)
	}
	sort.Strings(vals)
	return " (nodes have " + strings.Join(vals, ", ") + ")"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// nodeTaints lists the NoSchedule/NoExecute taints of visible nodes, for the reason.
func (r *ranker) nodeTaints() string {
	set := map[string]bool{}
	for _, n := range r.in.Nodes {
		for _, t := range n.Spec.Taints {
			if t.Effect != corev1.TaintEffectPreferNoSchedule {
				set[t.ToString()] = true
			}
		}
	}
	if len(set) == 0 {
		return ""
	}
	ts := make([]string, 0, len(set))
	for t := range set {
		ts = append(ts, t)
	}
	sort.Strings(ts)
	return " (" + strings.Join(ts, ", ") + ")"
}

// requests names the containers' request for a resource no node has room for, largest first.
func (r *ranker) requests(name, msg string) {
	type sized struct {
		ref containerRef
		q   resource.Quantity
	}
	var set []sized
	for _, c := range r.containers() {
		if q, ok := c.c.Resources.Requests[corev1.ResourceName(name)]; ok {
			set = append(set, sized{c, q})
		} else if q, ok := c.c.Resources.Limits[corev1.ResourceName(name)]; ok {
			// Requests default to limits.
			set = append(set, sized{c, q})
		}
	}
	sort.SliceStable(set, func(i, j int) bool { return set[i].q.Cmp(set[j].q) > 0 })
	for _, s := range set {
		score := scoreCertain
		if s.q.Cmp(set[0].q) < 0 {
			score = scoreLikely
		}
		r.suspectTemplate(RuleInsufficientResource, fieldpath.ResourcePath(s.ref.path.Child("resources", "requests"), name),
			score, "no node has "+s.q.String()+" "+name+" free for a copy: "+msg)
	}
}

// storageClass names the volumeClaimTemplates' storage class: the one named missing, or all
// of them when a claim cannot bind. A class that read volumes carry names a pool of pre-made
// volumes, not something to provision: a missing StorageClass of that name does not fault it,
// and which field those volumes do not meet is the claims family's to say.
func (r *ranker) storageClass(missing string, s *Signal) {
	for i, vct := range r.in.ClaimTemplates {
		p := field.NewPath("spec", "volumeClaimTemplates").Index(i).Child("spec", "storageClassName")
		sc := ""
		if vct.Spec.StorageClassName != nil {
			sc = *vct.Spec.StorageClassName
		}
		if seen, _ := r.volumesSeen(); seen && (missing == "" || r.classHasVolumes(sc)) {
			continue
		}
		switch {
		case missing != "" && sc == missing:
			r.suspectWorkload(RuleStorageClass, p, scoreCertain, "StorageClass "+sc+" does not exist")
		case missing == "":
			r.suspectWorkload(RuleStorageClass, p, scoreLikely, "claim "+vct.Name+" cannot be provisioned: "+s.Text)
		}
	}
}

// claimMissing names the pod volume that refers to a claim that does not exist.
func (r *ranker) claimMissing(name string) {
	for i := range r.in.Template.Spec.Volumes {
		v := &r.in.Template.Spec.Volumes[i]
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == name {
			r.suspectTemplate(RuleVolumeRefNotFound, r.specPath.Child("volumes").Index(i).Child("persistentVolumeClaim", "claimName"),
				scoreCertain, "PersistentVolumeClaim "+name+" does not exist")
		}
	}
}

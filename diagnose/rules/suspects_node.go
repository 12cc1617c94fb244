package rules

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// RuleNodeNotReady is the node rule's ID; IDs are stable: scripts and the documentation refer
// to them.
const RuleNodeNotReady RuleID = "node-not-ready"

// nodeFamily names the node a stuck copy is bound to when that node is not Ready: its kubelet
// stopped posting (Ready Unknown, NodeStatusUnknown) or says it cannot run pods (Ready False,
// KubeletNotReady). Nothing on such a node progresses, whatever the copy's own state or the
// controller's deadline says, and the fault lies in the node, outside the workload.
var _ = register(family{
	order:  65,
	name:   "node",
	detect: (*ranker).nodeRules,
	rules: []RuleInfo{
		{
			RuleNodeNotReady, "Copies wait on a node that is not Ready",
			"a copy bound to a node (spec.nodeName) that is not Running and Ready, the node's Ready condition False or Unknown",
			"Fix or drain the node (kubectl describe node); its copies are replaced elsewhere once it is gone or they are deleted.", true,
		},
	},
})

func (r *ranker) nodeRules() {
	if len(r.in.Nodes) == 0 {
		return
	}
	stuck := map[string][]string{}
	waiting := 0
	for _, c := range r.in.Copies {
		if !c.Current || !c.Active || c.Ready {
			continue
		}
		waiting++
		if c.Node != "" {
			stuck[c.Node] = append(stuck[c.Node], c.Name)
		}
	}
	if len(stuck) == 0 {
		return
	}
	names := make([]string, 0, len(stuck))
	for n := range stuck {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		n := nodeNamed(r.in.Nodes, name)
		if n == nil {
			continue
		}
		i, c := nodeReady(n)
		if c == nil || c.Status == corev1.ConditionTrue {
			continue
		}
		pods := stuck[name]
		// Every copy that does not serve waits on a node that is down: the node is the story;
		// some of them: it shares the blame.
		score := scoreCertain
		if len(pods) < waiting {
			score = scoreLikely
		}
		bound := "copies are"
		if len(pods) == 1 {
			bound = "copy is"
		}
		reason := fmt.Sprintf("node %s is Ready=%s (%s: %s) and %d %s bound to it: %s",
			name, c.Status, c.Reason, Clip(c.Message, 120), len(pods), bound, strings.Join(pods, ", "))
		r.suspectObject(RuleNodeNotReady, "Node/"+name, n, field.NewPath("status", "conditions").Index(i), score, reason)
	}
}

func nodeNamed(nodes []*corev1.Node, name string) *corev1.Node {
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// nodeReady is the node's Ready condition and its index, or nil.
func nodeReady(n *corev1.Node) (int, *corev1.NodeCondition) {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			return i, &n.Status.Conditions[i]
		}
	}
	return -1, nil
}

package diagnose

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestLabelIndexFindsWhatAScanFinds: for selectors of every form (matchLabels, expressions,
// both, empty, nil), the pods the index offers and the selector matches are exactly those a scan
// of every ReplicaSet-controlled pod of the namespace finds, in the same order.
func TestLabelIndexFindsWhatAScanFinds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var pods []*corev1.Pod
	for i := range 3000 {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("p%d", i), Namespace: fmt.Sprintf("ns%d", r.IntN(3)),
			Labels: map[string]string{"app": fmt.Sprintf("a%d", r.IntN(40)), "tier": []string{"web", "db"}[r.IntN(2)]},
		}}
		if r.IntN(4) > 0 {
			kind := "ReplicaSet"
			if r.IntN(10) == 0 {
				kind = "StatefulSet"
			}
			yes := true
			p.OwnerReferences = []metav1.OwnerReference{{Kind: kind, Name: "o", UID: "u", Controller: &yes}}
		}
		pods = append(pods, p)
	}
	idx := newLabelIndexes(pods)
	selectors := []*metav1.LabelSelector{
		nil,
		{},
		{MatchLabels: map[string]string{"app": "a7"}},
		{MatchLabels: map[string]string{"app": "a7", "tier": "web"}},
		{MatchLabels: map[string]string{"app": "absent"}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"a3", "a4"}}}},
		{MatchLabels: map[string]string{"tier": "db"}, MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"a1"}}}},
	}
	for _, ls := range selectors {
		sel := selectorOf(ls)
		for _, ns := range []string{"ns0", "ns1", "ns2", "none"} {
			var want, got []string
			for _, p := range pods {
				if c := metav1.GetControllerOf(p); p.Namespace == ns && c != nil && c.Kind == "ReplicaSet" && sel.Matches(labels.Set(p.Labels)) {
					want = append(want, p.Name)
				}
			}
			if i := idx[ns]; i != nil {
				for _, p := range i.candidates(ls) {
					if sel.Matches(labels.Set(p.Labels)) {
						got = append(got, p.Name)
					}
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("selector %v in %s: index finds %d pods, a scan %d", ls, ns, len(got), len(want))
			}
		}
	}
}

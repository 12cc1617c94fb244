package diagnose

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestBudgetIsTheAvailabilityFloor: a PodDisruptionBudget that selects a workload's copies is
// the team's own floor: one copy of ten that dropped out of readiness a minute ago, above that
// floor, is a degraded note, whatever the update strategy allows; a budget that selects other
// copies, or keeps all ten, says nothing, and the strategy decides.
func TestBudgetIsTheAvailabilityFloor(t *testing.T) {
	const day = 24 * time.Hour
	for _, tt := range []struct {
		name         string
		budget       func(*policyv1.PodDisruptionBudget)
		maxUnavail   intstr.IntOrString
		wantShape    Shape
		wantHeadline string
	}{
		{
			name: "minAvailable 8 under a strategy that allows none unavailable", maxUnavail: intstr.FromInt32(0),
			budget:    func(b *policyv1.PodDisruptionBudget) { b.Spec.MinAvailable = ptr(intstr.FromInt32(8)) },
			wantShape: ShapeHealthy, wantHeadline: "floor of 8 (PodDisruptionBudget web minAvailable 8)",
		},
		{
			name: "maxUnavailable 10% under a strategy that allows none unavailable", maxUnavail: intstr.FromInt32(0),
			budget:    func(b *policyv1.PodDisruptionBudget) { b.Spec.MaxUnavailable = ptr(intstr.FromString("10%")) },
			wantShape: ShapeHealthy, wantHeadline: "floor of 9 (PodDisruptionBudget web 10 declared − maxUnavailable 10%)",
		},
		{
			name: "a budget for other copies", maxUnavail: intstr.FromInt32(0),
			budget: func(b *policyv1.PodDisruptionBudget) {
				b.Spec.MinAvailable = ptr(intstr.FromInt32(8))
				b.Spec.Selector.MatchLabels = map[string]string{"app": "other"}
			}, wantShape: ShapeLiveButIdle,
		},
		{
			name: "a budget that keeps every copy, under a strategy that allows one", maxUnavail: intstr.FromInt32(1),
			budget:    func(b *policyv1.PodDisruptionBudget) { b.Spec.MinAvailable = ptr(intstr.FromString("100%")) },
			wantShape: ShapeHealthy, wantHeadline: "floor of 9 (10 declared − maxUnavailable 1)",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			d := c.deployment("web", 10, 1, reasonNewRSAvailable, 3*day)
			d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxUnavailable: &tt.maxUnavail}
			rs := c.replicaSet(d, 1, 10, 3*day, nil)
			for i := range 9 {
				c.pod(rs, string(rune('a'+i)), 3*day, running(true))
			}
			c.pod(rs, "j", 3*day, readyThenNot(time.Minute))
			b := &policyv1.PodDisruptionBudget{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: testNS},
				Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
			}
			tt.budget(b)
			c.s.PodDisruptionBudgets = append(c.s.PodDisruptionBudgets, b)
			got := c.diagnoseOne("web")
			if got.Shape != tt.wantShape {
				t.Fatalf("shape = %s, want %s: %s", got.Shape, tt.wantShape, got.Headline)
			}
			if !strings.Contains(got.Headline, tt.wantHeadline) {
				t.Errorf("headline %q, want it to say %q", got.Headline, tt.wantHeadline)
			}
		})
	}
}

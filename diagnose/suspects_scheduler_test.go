package diagnose

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// unseen is a copy no scheduler has looked at: Pending, no node, no condition at all.
func unseen(p *corev1.Pod) {
	p.Spec.NodeName = ""
	p.Status = corev1.PodStatus{Phase: corev1.PodPending}
}

func TestNoSchedulerAnswers(t *testing.T) {
	tests := []struct {
		name      string
		build     func(c *cluster)
		want      bool
		wantCause Cause
	}{
		{
			name: "a new Deployment's three copies unseen for seven minutes",
			build: func(c *cluster) {
				d := c.deployment("web", 3, 1, reasonReplicaSetUpdated, 7*time.Minute)
				rs := c.replicaSet(d, 1, 3, 7*time.Minute, nil)
				for _, s := range []string{"a", "b", "c"} {
					c.pod(rs, s, 7*time.Minute, unseen)
				}
			},
			want: true, wantCause: CauseDependency,
		},
		{
			name: "a rollout's new copy unseen for four minutes beside copies that serve",
			build: func(c *cluster) {
				d := c.deployment("web", 2, 2, reasonReplicaSetUpdated, 6*24*time.Hour)
				old := c.replicaSet(d, 1, 2, 6*24*time.Hour, nil)
				c.pod(old, "a", 6*24*time.Hour, running(true))
				c.pod(old, "b", 6*24*time.Hour, running(true))
				cur := c.replicaSet(d, 2, 1, 4*time.Minute, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image += "-2" })
				c.pod(cur, "c", 4*time.Minute, unseen)
			},
			want: true, wantCause: CauseDependency,
		},
		{
			name: "copies unseen for twenty seconds are not yet a silent scheduler",
			build: func(c *cluster) {
				d := c.deployment("web", 2, 1, reasonReplicaSetUpdated, 20*time.Second)
				rs := c.replicaSet(d, 1, 2, 20*time.Second, nil)
				c.pod(rs, "a", 20*time.Second, unseen)
				c.pod(rs, "b", 20*time.Second, unseen)
			},
		},
		{
			name: "an unschedulable copy is the scheduler answering",
			build: func(c *cluster) {
				d := c.deployment("web", 1, 1, reasonReplicaSetUpdated, 7*time.Minute)
				rs := c.replicaSet(d, 1, 1, 7*time.Minute, nil)
				p := c.pod(rs, "a", 7*time.Minute, unschedulable("0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."))
				p.Spec.NodeName = ""
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			tt.build(c)
			d := c.diagnoseOne("web")
			if d == nil {
				t.Fatal("no diagnosis for Deployment web")
			}
			got := false
			for i, s := range d.Suspects {
				if s.Rule == rules.RuleNoScheduler {
					got = true
					if i != 0 || s.Path.String() != "spec.template.spec.schedulerName" {
						t.Errorf("scheduler suspect at rank %d, path %s; want first, spec.template.spec.schedulerName", i, s.Path)
					}
				}
			}
			if got != tt.want {
				t.Fatalf("scheduler suspect = %v, want %v (shape %s, suspects %v)", got, tt.want, d.Shape, d.Suspects)
			}
			if tt.want && d.Cause != tt.wantCause {
				t.Errorf("cause = %s, want %s", d.Cause, tt.wantCause)
			}
		})
	}
}

package diagnose

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

func nodeWithReady(name string, status corev1.ConditionStatus, reason, message string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
			{Type: corev1.NodeReady, Status: status, Reason: reason, Message: message},
		}},
	}
}

// Copies stuck on a node that is not Ready name the node's Ready condition, a dependency; the
// messages are the node lifecycle controller's (NodeStatusUnknown, "Kubelet stopped posting
// node status.") and the kubelet's (KubeletNotReady), alike in v1.31 and v1.37.
func TestCopiesOnANodeThatIsNotReady(t *testing.T) {
	tests := []struct {
		name      string
		build     func(c *cluster)
		wantNode  string
		wantCause Cause
	}{
		{
			name: "a new copy ContainerCreating on a node whose runtime network is not ready",
			build: func(c *cluster) {
				d := c.deployment("web", 2, 1, reasonReplicaSetUpdated, 6*time.Minute)
				rs := c.replicaSet(d, 1, 2, 6*time.Minute, nil)
				c.pod(rs, "a", 6*time.Minute, running(true))
				p := c.pod(rs, "b", 6*time.Minute, waiting("ContainerCreating", ""))
				p.Spec.NodeName = "node-b"
				c.s.Nodes = []*corev1.Node{
					nodeWithReady("node-a", corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
					nodeWithReady("node-b", corev1.ConditionFalse, "KubeletNotReady", "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"),
				}
			},
			wantNode: "Node/node-b", wantCause: CauseDependency,
		},
		{
			name: "both copies in init on a node whose kubelet stopped posting",
			build: func(c *cluster) {
				d := c.deployment("web", 2, 1, reasonReplicaSetUpdated, 5*time.Minute)
				rs := c.replicaSet(d, 1, 2, 5*time.Minute, nil)
				for _, s := range []string{"a", "b"} {
					p := c.pod(rs, s, 5*time.Minute, waiting("PodInitializing", ""))
					p.Spec.NodeName = "gpu-1"
				}
				c.s.Nodes = []*corev1.Node{
					nodeWithReady("node-a", corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
					nodeWithReady("gpu-1", corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."),
				}
			},
			wantNode: "Node/gpu-1", wantCause: CauseDependency,
		},
		{
			name: "a copy stuck on a Ready node names no node",
			build: func(c *cluster) {
				d := c.deployment("web", 1, 1, reasonReplicaSetUpdated, 6*time.Minute)
				rs := c.replicaSet(d, 1, 1, 6*time.Minute, nil)
				c.pod(rs, "a", 6*time.Minute, waiting("ContainerCreating", ""))
				c.s.Nodes = []*corev1.Node{nodeWithReady("node-a", corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status")}
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
			if tt.wantNode == "" {
				for _, s := range d.Suspects {
					if s.Rule == rules.RuleNodeNotReady {
						t.Fatalf("node suspect %s on a Ready node", s.Object)
					}
				}
				return
			}
			if len(d.Suspects) == 0 || d.Suspects[0].Object != tt.wantNode || d.Suspects[0].Path.String() != "status.conditions[1]" {
				t.Fatalf("suspects = %v, want %s status.conditions[1] first", d.Suspects, tt.wantNode)
			}
			if d.Cause != tt.wantCause {
				t.Errorf("cause = %s, want %s", d.Cause, tt.wantCause)
			}
		})
	}
}

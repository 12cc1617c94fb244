package diagnose

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pulling is a copy waiting in ContainerCreating while the kubelet pulls its image: the
// kubelet's Normal "Pulling" event (pkg/kubelet/images/image_manager.go) and nothing after it.
func (c *cluster) pulling(p *corev1.Pod, image string, since time.Duration) {
	c.event("Pod", p.Name, p.UID, corev1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", image), 1, since)
	e := c.s.Events[len(c.s.Events)-1]
	e.FirstTimestamp = e.LastTimestamp
	e.InvolvedObject.FieldPath = "spec.containers{app}"
}

// A copy pulling a large image with no error, inside its deadline, is on its way up: the
// rollout is progressing, and nothing tells on-call to roll a good release back.
func TestAPullUnderWayIsProgressing(t *testing.T) {
	const minute = time.Minute
	tests := []struct {
		name  string
		build func(c *cluster) (kind, name string)
		want  Shape
	}{
		{
			name: "rolling update: the new copy pulls for 3m30s, old copies serve",
			build: func(c *cluster) (string, string) {
				d := c.deployment("ledger", 3, 2, reasonReplicaSetUpdated, 40*24*time.Hour)
				d.Status.Conditions[0].LastUpdateTime = ago(3*minute + 30*time.Second)
				old := c.replicaSet(d, 1, 3, 40*24*time.Hour, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image += "-old" })
				cur := c.replicaSet(d, 2, 1, 3*minute+31*time.Second, nil)
				for _, s := range []string{"a", "b", "c"} {
					c.pod(old, s, 40*24*time.Hour, running(true))
				}
				p := c.pod(cur, "x", 3*minute+30*time.Second, waiting("ContainerCreating", ""))
				c.pulling(p, p.Spec.Containers[0].Image, 3*minute+29*time.Second)
				return "Deployment", "ledger"
			},
			want: ShapeProgressing,
		},
		{
			name: "a new StatefulSet's first copy pulls for 2m, no rollout to speak of",
			build: func(c *cluster) (string, string) {
				st := &appsv1.StatefulSet{
					ObjectMeta: metav1.ObjectMeta{Name: "search", Namespace: testNS, UID: c.nextUID(), Generation: 1, CreationTimestamp: ago(2*minute + 5*time.Second)},
					Spec: appsv1.StatefulSetSpec{
						Replicas: int32p(1), Template: basicTemplate("search"),
						Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "search"}},
					},
					Status: appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 1, CurrentRevision: "search-6f8d7c9b5", UpdateRevision: "search-6f8d7c9b5"},
				}
				c.s.StatefulSets = append(c.s.StatefulSets, st)
				c.controllerRevision(st, "StatefulSet", 1, "6f8d7c9b5", st.Spec.Template, 2*minute+5*time.Second)
				p := c.ownedPod(st, "StatefulSet", "search-0", "search-6f8d7c9b5", 2*minute+3*time.Second, waiting("ContainerCreating", ""))
				c.pulling(p, p.Spec.Containers[0].Image, 2*minute)
				return "StatefulSet", "search"
			},
			want: ShapeProgressing,
		},
		{
			name: "the same pull past the progress deadline has stalled",
			build: func(c *cluster) (string, string) {
				d := c.deployment("ledger", 1, 2, reasonReplicaSetUpdated, 40*24*time.Hour)
				old := c.replicaSet(d, 1, 0, 40*24*time.Hour, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image += "-old" })
				_ = old
				cur := c.replicaSet(d, 2, 1, 12*minute, nil)
				p := c.pod(cur, "x", 12*minute, waiting("ContainerCreating", ""))
				c.pulling(p, p.Spec.Containers[0].Image, 11*minute)
				return "Deployment", "ledger"
			},
			want: ShapeNeverStarts,
		},
		{
			name: "a pull that failed once is no pull under way",
			build: func(c *cluster) (string, string) {
				d := c.deployment("ledger", 1, 2, reasonReplicaSetUpdated, 40*24*time.Hour)
				c.replicaSet(d, 1, 0, 40*24*time.Hour, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image += "-old" })
				cur := c.replicaSet(d, 2, 1, 4*minute, nil)
				p := c.pod(cur, "x", 4*minute, waiting("ContainerCreating", ""))
				c.pulling(p, p.Spec.Containers[0].Image, 3*minute)
				c.event("Pod", p.Name, p.UID, corev1.EventTypeWarning, "FailedMount", `MountVolume.SetUp failed for volume "tls" : secret "ledger-tls" not found`, 4, time.Minute)
				return "Deployment", "ledger"
			},
			want: ShapeNeverStarts,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			kind, name := tt.build(c)
			d := Diagnose(c.s).Find(kind, testNS, name)
			if d == nil {
				t.Fatalf("no diagnosis of %s/%s", kind, name)
			}
			if d.Shape != tt.want {
				t.Fatalf("shape = %s, want %s (%s)", d.Shape, tt.want, d.Headline)
			}
			if tt.want != ShapeProgressing {
				return
			}
			if strings.Contains(d.Fix, "undo") || len(d.Suspects) > 0 {
				t.Errorf("a pull under way is advised %q with suspects %v", d.Fix, d.Suspects)
			}
			if !strings.Contains(d.Headline, "Pulling image") && !strings.Contains(d.Headline, "pulling image") {
				t.Errorf("headline %q does not say the copy is pulling", d.Headline)
			}
		})
	}
}

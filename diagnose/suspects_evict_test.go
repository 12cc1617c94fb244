package diagnose

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// evicted is a copy the kubelet's eviction manager killed (pkg/kubelet/eviction: evictPod sets
// the phase, the reason Evicted, the message and a DisruptionTarget condition; the status
// manager leaves its container terminated as the kill left it, or ContainerStatusUnknown when
// it could not be located).
func evicted(msg, containerReason string) podState {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.Reason = rules.ReasonEvicted
		p.Status.Message = msg
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
			Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: corev1.PodReasonTerminationByKubelet, Message: msg,
		})
		t := &corev1.ContainerStateTerminated{Reason: containerReason, ExitCode: 137}
		if containerReason == "ContainerStatusUnknown" {
			t.Message = "The container could not be located when the pod was terminated"
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Terminated: t}}}
	}
}

// evictedCluster is a Deployment that served for two hours whose copies the kubelet keeps
// evicting with msg: six gone, two running and Ready, all young.
func evictedCluster(mutate func(*corev1.PodTemplateSpec), msg, containerReason string) *cluster {
	c := newCluster()
	d := c.deployment("logs", 2, 1, "NewReplicaSetAvailable", 2*time.Hour)
	if mutate != nil {
		mutate(&d.Spec.Template)
	}
	rs := c.replicaSet(d, 1, 2, 2*time.Hour, nil)
	for i := 0; i < 6; i++ {
		c.pod(rs, fmt.Sprintf("ev%d", i), time.Duration(9-i)*time.Minute, evicted(msg, containerReason))
	}
	c.pod(rs, "a", 2*time.Minute, running(true))
	c.pod(rs, "b", time.Minute, running(true))
	return c
}

func TestEvictedCopiesNameTheLimitOrRequest(t *testing.T) {
	const ctr = "spec.template.spec.containers[0]"
	withLimit := func(t *corev1.PodTemplateSpec) {
		t.Spec.Containers[0].Resources.Limits[corev1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
	}
	for _, tt := range []struct {
		name            string
		mutate          func(*corev1.PodTemplateSpec)
		msg, terminated string
		rule            RuleID
		path            string
		reason          string
	}{
		{
			name: "the pod's total", mutate: withLimit, terminated: "ContainerStatusUnknown",
			msg:  "Pod ephemeral local storage usage exceeds the total limit of containers 1Gi. ",
			rule: rules.RuleEphemeralStorage, path: ctr + ".resources.limits.ephemeral-storage",
			reason: "their containers together wrote past the ephemeral-storage limits, 1Gi in all",
		},
		{
			name: "one container's", mutate: withLimit, terminated: "Error",
			msg:  `Container app exceeded its local ephemeral storage limit "1Gi". `,
			rule: rules.RuleEphemeralStorage, path: ctr + ".resources.limits.ephemeral-storage",
			reason: "container app wrote past its ephemeral-storage limit 1Gi",
		},
		{
			name: "an emptyDir's sizeLimit", terminated: "Error",
			mutate: func(t *corev1.PodTemplateSpec) {
				size := resource.MustParse("500Mi")
				t.Spec.Volumes = []corev1.Volume{{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &size}}}}
			},
			msg:  `Usage of EmptyDir volume "cache" exceeds the limit "500Mi". `,
			rule: rules.RuleEphemeralStorage, path: "spec.template.spec.volumes[0].emptyDir.sizeLimit",
			reason: "the emptyDir volume cache outgrew its sizeLimit 500Mi",
		},
		{
			name: "memory far above the request on a node short of memory", terminated: "Error",
			mutate: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}
				t.Spec.Containers[0].Resources.Limits = nil
			},
			msg:  "The node was low on resource: memory. Threshold quantity: 100Mi, available: 68Mi. Container app was using 1843Mi, request is 128Mi, has larger consumption of memory. ",
			rule: rules.RuleEvictedOverRequest, path: ctr + ".resources.requests.memory",
			reason: "container app used 1843Mi against a request of 128Mi",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := evictedCluster(tt.mutate, tt.msg, tt.terminated).diagnoseOne("logs")
			if d == nil {
				t.Fatal("no diagnosis")
			}
			if d.Shape != ShapeStartsAndDies {
				t.Errorf("shape %s, want starts-and-dies: the count is kept by replacing evicted copies", d.Shape)
			}
			if !strings.Contains(d.Headline, "replacing copies the kubelet evicted (6 in the snapshot)") {
				t.Errorf("headline %q does not say the copies were evicted", d.Headline)
			}
			if len(d.Suspects) == 0 || d.Suspects[0].Rule != tt.rule || d.Suspects[0].Path.String() != tt.path || !strings.Contains(d.Suspects[0].Reason, tt.reason) {
				t.Fatalf("suspects %+v\nwant %s at %s saying %q", d.Suspects, tt.rule, tt.path, tt.reason)
			}
			// The copies' own words are the eviction's, not the kill it left behind.
			var evictedItem bool
			for _, e := range d.Evidence {
				if e.Kind == "Evicted" && strings.Contains(e.Message, strings.TrimSpace(tt.msg)) && e.Count == 6 {
					evictedItem = true
				}
				if e.Kind == "ContainerStatusUnknown" || e.Kind == "Error" && strings.Contains(e.Message, "137") {
					t.Errorf("evidence %q %q is what the eviction left, not why", e.Kind, e.Message)
				}
			}
			if !evictedItem {
				t.Errorf("no Evicted item for the six copies in %+v", d.Evidence)
			}
		})
	}
}

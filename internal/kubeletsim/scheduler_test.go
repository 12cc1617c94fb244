package kubeletsim_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/kubeletsim"
)

func TestNodeSelectorNothingMatchesIsFailedScheduling(t *testing.T) {
	e := start(t, world(), nil)
	e.apply(t, deployment("search", appImage, 1, func(s *corev1.PodSpec) {
		s.NodeSelector = map[string]string{"topology.kubernetes.io/zone": "sim-1d"}
	}))
	want := "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
	var p corev1.Pod
	eventually(t, 30*time.Second, func() string {
		pods := e.pods(t, "search")
		if len(pods) != 1 {
			return "no pod"
		}
		p = pods[0]
		c := condition(p, corev1.PodScheduled)
		if c == nil || c.Status != corev1.ConditionFalse || c.Reason != corev1.PodReasonUnschedulable || c.Message != want {
			return fmt.Sprintf("PodScheduled %+v", c)
		}
		return ""
	})
	if p.Spec.NodeName != "" {
		t.Fatalf("pod bound to %s", p.Spec.NodeName)
	}
	evs, err := e.cs.EventsV1().Events(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs.Items {
		if ev.Reason == "FailedScheduling" && ev.Regarding.Name == p.Name && ev.Note == want &&
			ev.Type == corev1.EventTypeWarning && ev.Action == "Scheduling" && ev.ReportingController == "default-scheduler" {
			return
		}
	}
	t.Fatalf("no FailedScheduling event %q", want)
}

func TestRequestsAboveAllocatableAndTaintsAreFailedScheduling(t *testing.T) {
	prefix := fmt.Sprintf("fit-%d", time.Now().UnixNano()%1000000)
	nodes := []kubeletsim.NodeSpec{
		{Name: prefix + "-1", Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}},
		{Name: prefix + "-2", Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}},
		{Name: prefix + "-3", Taints: []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}},
	}
	e := start(t, world(), nodes)
	e.apply(t, deployment("batch", appImage, 1, func(s *corev1.PodSpec) {
		s.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("3")
	}))
	want := "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
	eventually(t, 30*time.Second, func() string {
		pods := e.pods(t, "batch")
		if len(pods) != 1 {
			return "no pod"
		}
		c := condition(pods[0], corev1.PodScheduled)
		if c == nil || c.Message != want {
			return fmt.Sprintf("PodScheduled %+v, want message %q", c, want)
		}
		return ""
	})
}

func TestDaemonSetRunsOnEveryNodeAndScaleDownDeletesPods(t *testing.T) {
	e := start(t, world(), nil)
	labels := map[string]string{"app": "agent"}
	_, err := e.cs.AppsV1().DaemonSets(e.ns).Create(context.Background(), &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       deployment("agent", appImage, 1, nil).Spec.Template.Spec,
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, func() string {
		ds, err := e.cs.AppsV1().DaemonSets(e.ns).Get(context.Background(), "agent", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if ds.Status.DesiredNumberScheduled != 3 || ds.Status.NumberReady != 3 {
			return fmt.Sprintf("daemonset desired %d ready %d, want 3/3", ds.Status.DesiredNumberScheduled, ds.Status.NumberReady)
		}
		return ""
	})

	e.apply(t, deployment("api", appImage, 2, nil))
	eventually(t, 60*time.Second, func() string {
		if n := len(e.pods(t, "api")); n != 2 {
			return fmt.Sprintf("%d api pods", n)
		}
		return ""
	})
	_, err = e.cs.AppsV1().Deployments(e.ns).Patch(context.Background(), "api", "application/merge-patch+json",
		[]byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Graceful deletion completes only when a kubelet confirms it.
	eventually(t, 30*time.Second, func() string {
		if n := len(e.pods(t, "api")); n != 0 {
			return fmt.Sprintf("%d api pods left after scaling to 0", n)
		}
		return ""
	})
}

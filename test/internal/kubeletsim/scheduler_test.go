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
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
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

// The VolumeBinding PreFilter: an unbound claim in immediate mode, or a missing claim, keeps the
// pod off every node; a claim the PV controller has bound lets it schedule.
func TestClaimsMustBeBoundBeforeThePodSchedules(t *testing.T) {
	e := start(t, world(), nil)
	ctx := context.Background()
	claim := func(name string, mutate func(*corev1.PersistentVolumeClaim)) {
		t.Helper()
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		mutate(pvc)
		if _, err := e.cs.CoreV1().PersistentVolumeClaims(e.ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	withClaim := func(claimName string) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName},
			}}}
		}
	}
	// A class that does not exist: immediate binding, and nothing can provision it.
	claim("data-missing-class", func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To("fast-ssd") })
	// Pre-bound to a volume made for it; the PV controller completes the binding.
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-" + e.ns},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/srv/" + e.ns}},
			ClaimRef:                      &corev1.ObjectReference{Namespace: e.ns, Name: "data-bound"},
			StorageClassName:              "",
		},
	}
	if _, err := e.cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.cs.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{})
	})
	claim("data-bound", func(c *corev1.PersistentVolumeClaim) {
		c.Spec.StorageClassName = ptr.To("")
		c.Spec.VolumeName = pv.Name
	})

	e.apply(t, deployment("db", appImage, 1, withClaim("data-missing-class")))
	e.apply(t, deployment("orphan", appImage, 1, withClaim("data-never-made")))
	e.apply(t, deployment("bound", appImage, 1, withClaim("data-bound")))
	unschedulable := func(app, reason string) {
		t.Helper()
		want := "0/3 nodes are available: " + reason + ". preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
		eventually(t, 30*time.Second, func() string {
			pods := e.pods(t, app)
			if len(pods) != 1 {
				return app + ": no pod"
			}
			if c := condition(pods[0], corev1.PodScheduled); c == nil || c.Reason != corev1.PodReasonUnschedulable || c.Message != want {
				return fmt.Sprintf("%s: PodScheduled %+v, want message %q", app, c, want)
			}
			return ""
		})
	}
	unschedulable("db", "pod has unbound immediate PersistentVolumeClaims")
	unschedulable("orphan", `persistentvolumeclaim "data-never-made" not found`)
	eventually(t, 60*time.Second, func() string {
		pods := e.pods(t, "bound")
		if len(pods) != 1 || pods[0].Spec.NodeName == "" {
			return "the pod with a bound claim is not scheduled"
		}
		return ""
	})

	// The PV controller, not the simulation, says why the claim stays Pending.
	eventually(t, 60*time.Second, func() string {
		evs, err := e.cs.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Name == "data-missing-class" && ev.Reason == "ProvisioningFailed" &&
				ev.Message == `storageclass.storage.k8s.io "fast-ssd" not found` {
				return ""
			}
		}
		return "no ProvisioningFailed event for the claim"
	})
}

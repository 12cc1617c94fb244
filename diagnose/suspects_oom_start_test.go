package diagnose

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// containerd's wrapping of runc's message, as the kubelet reports it in a StartError, a Failed
// event and (prefixed "Failed to create pod sandbox: rpc error: code = Unknown desc = ") a
// FailedCreatePodSandBox event.
const runcInitOOM = "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: container init was OOM-killed (memory limit too low?): unknown"

func TestMemoryLimitAtStart(t *testing.T) {
	runSuspectCases(t, []suspectCase{
		{
			name: "the app container is OOM-killed as it starts (StartError 128)",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("8Mi")
				stTerminated(w, "StartError", 128, runcInitOOM)
			},
			rule: rules.RuleMemoryLimitAtStart, path: c0 + ".resources.limits.memory",
		},
		{
			name: "an init container is OOM-killed as it starts, named by its Failed event",
			setup: func(w *workload) {
				w.Shape = ShapeNeverStarts
				w.Template.Spec.InitContainers = []corev1.Container{{
					Name: "migrate", Image: "registry.internal/shop/migrate:1.0.0",
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("12Mi")}},
				}}
				stEvent(w, "Pod", stPod(w).Name, "spec.initContainers{migrate}", "Failed", "Error: "+runcInitOOM)
			},
			rule: rules.RuleMemoryLimitAtStart, path: "spec.template.spec.initContainers[0].resources.limits.memory",
			absent: []string{c0 + ".resources.limits.memory"},
		},
		{
			name: "the sandbox is OOM-killed: the smallest limit of two containers first",
			setup: func(w *workload) {
				w.Shape = ShapeNeverStarts
				w.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("64Mi")
				w.Template.Spec.Containers = append(w.Template.Spec.Containers, corev1.Container{
					Name: "proxy", Image: "registry.internal/mesh/proxy:2.1.0",
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Mi")}},
				})
				stEvent(w, "Pod", stPod(w).Name, "", "FailedCreatePodSandBox", "Failed to create pod sandbox: rpc error: code = Unknown desc = "+runcInitOOM)
			},
			rule: rules.RuleMemoryLimitAtStart, path: "spec.template.spec.containers[1].resources.limits.memory",
			below: []string{c0 + ".resources.limits.memory"},
		},
	})
}

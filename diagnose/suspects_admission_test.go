package diagnose

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// refusedByPodSecurity records the FailedCreate the ReplicaSet controller writes when the
// namespace enforces level: the message is the admission plugin's, made by its own policy
// package from the workload's template.
func refusedByPodSecurity(t *testing.T, w *workload, level psaapi.Level) {
	t.Helper()
	ev, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lv := psaapi.LevelVersion{Level: level, Version: psaapi.LatestVersion()}
	res := policy.AggregateCheckResults(ev.EvaluatePod(lv, &w.Template.ObjectMeta, &w.Template.Spec))
	if res.Allowed {
		t.Fatalf("the template passes %s", lv)
	}
	stEvent(w, "ReplicaSet", "api-6b7d9c5f4", "", "FailedCreate",
		`Error creating: pods "api-6b7d9c5f4-9xk2m" is forbidden: violates PodSecurity "`+lv.String()+`": `+res.ForbiddenDetail())
}

func TestRankSuspectsPodSecurity(t *testing.T) {
	const sc = c0 + ".securityContext"
	runSuspectCases(t, []suspectCase{
		{
			name: "restricted: every field the refusal names, the pod's for the pod-or-container ones",
			setup: func(w *workload) {
				refusedByPodSecurity(t, w, psaapi.LevelRestricted)
			},
			rule: rules.RulePodSecurity, path: sc + ".allowPrivilegeEscalation",
			below: []string{
				sc + ".capabilities.drop", "spec.template.spec.securityContext.runAsNonRoot",
				"spec.template.spec.securityContext.seccompProfile.type",
			},
		},
		{
			name: "baseline: host network, a privileged sidecar and a host path",
			setup: func(w *workload) {
				yes := true
				w.Template.Spec.HostNetwork = true
				w.Template.Spec.Containers = append(w.Template.Spec.Containers, corev1.Container{
					Name: "agent", Image: "registry.internal/ops/agent:3.0", SecurityContext: &corev1.SecurityContext{Privileged: &yes},
				})
				w.Template.Spec.Volumes = []corev1.Volume{{Name: "docker", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/run/docker.sock"}}}}
				refusedByPodSecurity(t, w, psaapi.LevelBaseline)
			},
			rule: rules.RulePodSecurity, path: "spec.template.spec.containers[1].securityContext.privileged",
			below:  []string{"spec.template.spec.hostNetwork", "spec.template.spec.volumes[0].hostPath"},
			absent: []string{sc + ".privileged"},
		},
	})
}

// LimitRanger names the resource and the value it refuses (plugin/pkg/admission/limitranger),
// not the container: the container whose field holds the value is the suspect.
func TestRankSuspectsLimitRange(t *testing.T) {
	twoContainers := func(w *workload) {
		w.Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
		}
		w.Template.Spec.Containers = append(w.Template.Spec.Containers, corev1.Container{
			Name: "proxy", Image: "registry.internal/ops/proxy:1.2",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}},
		})
	}
	refused := func(w *workload, msg string) {
		stEvent(w, "ReplicaSet", "api-6b7d9c5f4", "", "FailedCreate", `Error creating: pods "api-6b7d9c5f4-9xk2m" is forbidden: `+msg)
	}
	runSuspectCases(t, []suspectCase{
		{
			name: "a container's limit above the maximum: the one holding that value",
			setup: func(w *workload) {
				twoContainers(w)
				refused(w, "maximum cpu usage per Container is 2, but limit is 4")
			},
			rule: rules.RuleLimitRange, path: "spec.template.spec.containers[1].resources.limits.cpu",
			absent: []string{c0 + ".resources.limits.cpu"},
		},
		{
			name: "a minimum no request is given for: the containers without one",
			setup: func(w *workload) {
				twoContainers(w)
				refused(w, "minimum cpu usage per Container is 100m.  No request is specified")
			},
			rule: rules.RuleLimitRange, path: "spec.template.spec.containers[1].resources.requests.cpu",
			absent: []string{c0 + ".resources.requests.cpu"},
		},
		{
			name: "two refusals at once, as LimitRanger aggregates them",
			setup: func(w *workload) {
				twoContainers(w)
				refused(w, "[maximum cpu usage per Container is 2, but limit is 4, minimum cpu usage per Container is 300m, but request is 250m]")
			},
			rule: rules.RuleLimitRange, path: c0 + ".resources.requests.cpu",
			below: []string{"spec.template.spec.containers[1].resources.limits.cpu"},
		},
	})
}

func TestPodSecurityReasonNamesTheLevel(t *testing.T) {
	w := stWorkload(nil)
	refusedByPodSecurity(t, w, psaapi.LevelRestricted)
	got := rankSuspects(w)
	if len(got) == 0 || !strings.Contains(got[0].Reason, `the namespace enforces PodSecurity "restricted:latest", which refuses every copy: container "api" must set securityContext.allowPrivilegeEscalation`) {
		t.Fatalf("suspects %+v", got)
	}
}

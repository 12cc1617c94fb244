package diagnose

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

const (
	c0    = "spec.template.spec.containers[0]"
	image = c0 + ".image"
)

func TestRankSuspectsRules(t *testing.T) {
	tests := []suspectCase{
		{
			// containerd 2.x, internal/cri/server/images/image_pull.go; the kubelet's
			// pkg/kubelet/images/image_manager.go prefixes `Failed to pull image %q: `.
			name: "image tag not found",
			setup: func(w *workload) {
				w.Template.Spec.Containers[0].Image = "registry.internal/shop/api:1.4.l"
				stChanged(w, image, "registry.internal/shop/api:1.4.0", nil)
				msg := `rpc error: code = NotFound desc = failed to pull and unpack image "registry.internal/shop/api:1.4.l": failed to resolve image: registry.internal/shop/api:1.4.l: not found`
				stWaiting(w, "ErrImagePull", msg)
				stPodEvent(w, "Failed", `Failed to pull image "registry.internal/shop/api:1.4.l": `+msg)
				stPodEvent(w, "Failed", "Error: ErrImagePull")
			},
			rule: rules.RuleImageNotFound, path: image,
		},
		{
			name: "pull access denied with an unchanged image names imagePullSecrets",
			setup: func(w *workload) {
				stWaiting(w, "ImagePullBackOff", `Back-off pulling image "registry.internal/shop/api:1.4.0": ErrImagePull: failed to pull and unpack image "registry.internal/shop/api:1.4.0": failed to resolve image: pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed`)
			},
			rule: rules.RuleImagePullAuth, path: "spec.template.spec.imagePullSecrets",
			below:  []string{"spec.template.spec.serviceAccountName"},
			absent: []string{image},
		},
		{
			name: "pull access denied after the image changed names the image",
			setup: func(w *workload) {
				w.Template.Spec.Containers[0].Image = "registry.internal/shop/apy:1.4.0"
				stChanged(w, image, "registry.internal/shop/api:1.4.0", nil)
				stWaiting(w, "ErrImagePull", `failed to pull and unpack image "registry.internal/shop/apy:1.4.0": failed to resolve image: pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed`)
			},
			rule: rules.RuleImageNotFound, path: image,
			below: []string{"spec.template.spec.imagePullSecrets"},
		},
		{
			// containerd core/remotes/docker/resolver.go: "unexpected status from %s request to %s: %s".
			name: "401 from the registry",
			setup: func(w *workload) {
				stPodEvent(w, "Failed", `Failed to pull image "registry.internal/shop/api:1.4.0": failed to pull and unpack image "registry.internal/shop/api:1.4.0": failed to resolve reference "registry.internal/shop/api:1.4.0": unexpected status from HEAD request to https://registry.internal/v2/shop/api/manifests/1.4.0: 401 Unauthorized`)
			},
			rule: rules.RuleImagePullAuth, path: "spec.template.spec.imagePullSecrets",
		},
		{
			name: "registry host does not resolve",
			setup: func(w *workload) {
				stWaiting(w, "ErrImagePull", `failed to pull and unpack image "registry.internal/shop/api:1.4.0": failed to resolve reference "registry.internal/shop/api:1.4.0": failed to do request: Head "https://registry.internal/v2/shop/api/manifests/1.4.0": dial tcp: lookup registry.internal on 10.96.0.10:53: no such host`)
			},
			rule: rules.RuleImageRegistryDown, path: image,
		},
		{
			// pkg/kubelet/images/image_manager.go: "Failed to apply default image tag %q: %v".
			name: "invalid image name",
			setup: func(w *workload) {
				w.Template.Spec.Containers[0].Image = "registry.internal/shop/API:1.4.0"
				stWaiting(w, "InvalidImageName", `Failed to apply default image tag "registry.internal/shop/API:1.4.0": couldn't parse image name "registry.internal/shop/API:1.4.0": invalid reference format: repository name (shop/API) must be lowercase`)
			},
			rule: rules.RuleImageInvalidName, path: image,
		},
		{
			// pkg/kubelet/kubelet_pods.go via the secret manager's NotFound: `secret "x" not found`.
			name: "env secretKeyRef names a missing Secret",
			setup: func(w *workload) {
				w.Template.Spec.Containers[0].Env = []corev1.EnvVar{
					{Name: "LOG_LEVEL", Value: "info"},
					{Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "api-db"}, Key: "password",
					}}},
				}
				stWaiting(w, "CreateContainerConfigError", `secret "api-db" not found`)
				stPodEvent(w, "Failed", `Error: secret "api-db" not found`)
			},
			rule: rules.RuleEnvRefNotFound, path: c0 + ".env[1].valueFrom.secretKeyRef.name",
		},
		{
			// pkg/kubelet/kubelet_pods.go: "couldn't find key %v in ConfigMap %v/%v".
			name: "env configMapKeyRef names a missing key",
			setup: func(w *workload) {
				w.Template.Spec.Containers[0].Env = []corev1.EnvVar{
					{Name: "LOG_LEVEL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "api-config"}, Key: "log-level",
					}}},
				}
				stWaiting(w, "CreateContainerConfigError", "couldn't find key log-level in ConfigMap shop/api-config")
			},
			rule: rules.RuleEnvKeyNotFound, path: c0 + ".env[0].valueFrom.configMapKeyRef.key",
		},
		{
			name: "envFrom secretRef names a missing Secret",
			setup: func(w *workload) {
				w.Template.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{
					{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "api-flags"}}},
					{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "api-tokens"}}},
				}
				stPodEvent(w, "Failed", `Error: secret "api-tokens" not found`)
			},
			rule: rules.RuleEnvRefNotFound, path: c0 + ".envFrom[1].secretRef.name",
			absent: []string{c0 + ".envFrom[0].configMapRef.name"},
		},
		{
			// pkg/kubelet/kuberuntime/security_context_others.go verifyRunAsNonRoot.
			name: "runAsNonRoot with an image that runs as root",
			setup: func(w *workload) {
				yes := true
				w.Template.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: &yes}
				stWaiting(w, "CreateContainerConfigError", `container has runAsNonRoot and image will run as root (pod: "api-6b7d9c5f4-x2x9k_shop(0d1f7a52-8c4e-4a0b-9a43-2b1c36f0e9d1)", container: api)`)
			},
			rule: rules.RuleRunAsNonRoot, path: "spec.template.spec.securityContext.runAsNonRoot",
			below: []string{c0 + ".securityContext.runAsUser"},
		},
		{
			// pkg/volume/util/operationexecutor/operation_executor.go: `%v for volume %q %v`.
			name: "configMap volume names a missing ConfigMap",
			setup: func(w *workload) {
				w.Template.Spec.Volumes = []corev1.Volume{
					{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "api-tls"}}},
					{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: "api-config"},
					}}},
				}
				stEvent(w, "Pod", stPod(w).Name, "", "FailedMount", `MountVolume.SetUp failed for volume "config" : configmap "api-config" not found`)
			},
			rule: rules.RuleVolumeRefNotFound, path: "spec.template.spec.volumes[1].configMap.name",
		},
		{
			// pkg/volume/configmap/configmap.go: "configmap references non-existent config key: %s".
			name: "configMap volume item names a missing key",
			setup: func(w *workload) {
				w.Template.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "api-config"},
					Items:                []corev1.KeyToPath{{Key: "app.yaml", Path: "app.yaml"}, {Key: "log.yaml", Path: "log.yaml"}},
				}}}}
				stEvent(w, "Pod", stPod(w).Name, "", "FailedMount", `MountVolume.SetUp failed for volume "config" : configmap references non-existent config key: log.yaml`)
			},
			rule: rules.RuleVolumeKeyNotFound, path: "spec.template.spec.volumes[0].configMap.items[1].key",
		},
		{
			name: "projected secret source names a missing Secret",
			setup: func(w *workload) {
				w.Template.Spec.Volumes = []corev1.Volume{{Name: "creds", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					Sources: []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "api-creds"}}}},
				}}}}
				stEvent(w, "Pod", stPod(w).Name, "", "FailedMount", `MountVolume.SetUp failed for volume "creds" : secret "api-creds" not found`)
			},
			rule: rules.RuleVolumeRefNotFound, path: "spec.template.spec.volumes[0].projected.sources[0].secret.name",
		},
		{
			// pkg/scheduler/framework/types.go FitError.Error(); nodeaffinity.ErrReasonPod.
			name: "nodeSelector value no node carries",
			setup: func(w *workload) {
				w.Template.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux", "disktype": "nvme"}
				w.Snap.Nodes = []*corev1.Node{
					stNode("n1", map[string]string{"kubernetes.io/os": "linux", "disktype": "ssd"}),
					stNode("n2", map[string]string{"kubernetes.io/os": "linux", "disktype": "hdd"}),
				}
				stEvent(w, "Pod", stPod(w).Name, "", "FailedScheduling", "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
			},
			rule: rules.RuleNodeSelector, path: "spec.template.spec.nodeSelector[disktype]",
			absent: []string{"spec.template.spec.nodeSelector[kubernetes.io/os]"},
		},
		{
			// noderesources/fit.go: "Insufficient memory".
			name: "memory request fits no node",
			setup: func(w *workload) {
				w.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("64Gi")
				p := stPod(w)
				p.Status.Conditions = []corev1.PodCondition{{
					Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
					Message: "0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
				}}
			},
			rule: rules.RuleInsufficientResource, path: c0 + ".resources.requests.memory",
		},
		{
			// tainttoleration/taint_toleration.go Filter: "node(s) had untolerated taint(s)".
			name: "untolerated taint",
			setup: func(w *workload) {
				w.Snap.Nodes = []*corev1.Node{stNode("n1", nil, corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule})}
				stEvent(w, "Pod", stPod(w).Name, "", "FailedScheduling", "0/1 nodes are available: 1 node(s) had untolerated taint(s). preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")
			},
			rule: rules.RuleUntoleratedTaint, path: "spec.template.spec.tolerations",
		},
		{
			// v1.31 tainttoleration/taint_toleration.go Filter writes one reason per distinct
			// taint, "node(s) had untolerated taint {%s: %s}": together they cover every node.
			name: "untolerated taints in v1.31 wording, two taints",
			setup: func(w *workload) {
				w.Snap.Nodes = []*corev1.Node{
					stNode("cp", nil, corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}),
					stNode("ml1", nil, corev1.Taint{Key: "dedicated", Value: "ml", Effect: corev1.TaintEffectNoSchedule}),
					stNode("ml2", nil, corev1.Taint{Key: "dedicated", Value: "ml", Effect: corev1.TaintEffectNoSchedule}),
				}
				stEvent(w, "Pod", stPod(w).Name, "", "FailedScheduling", "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 node(s) had untolerated taint {dedicated: ml}. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
			},
			rule: rules.RuleUntoleratedTaint, path: "spec.template.spec.tolerations",
		},
		{
			// v1.31 wording on some nodes, a full node elsewhere: the taint shares the blame.
			name: "untolerated taint in v1.31 wording beside insufficient memory",
			setup: func(w *workload) {
				w.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("24Gi")
				stEvent(w, "Pod", stPod(w).Name, "", "FailedScheduling", "0/4 nodes are available: 1 node(s) had untolerated taint {gpu: true}, 3 Insufficient memory. preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.")
			},
			rule: rules.RuleInsufficientResource, path: c0 + ".resources.requests.memory",
			below: []string{"spec.template.spec.tolerations"},
		},
		{
			// nodeunschedulable/node_unschedulable.go ErrReasonUnschedulable (v1.31 and v1.37):
			// the selector's pool is cordoned and the other nodes do not match it.
			name: "nodeSelector pins the pod to cordoned nodes",
			setup: func(w *workload) {
				w.Template.Spec.NodeSelector = map[string]string{"pool": "ingest"}
				a, b := stNode("a", map[string]string{"pool": "ingest"}), stNode("b", map[string]string{"pool": "ingest"})
				a.Spec.Unschedulable, b.Spec.Unschedulable = true, true
				w.Snap.Nodes = []*corev1.Node{a, b, stNode("c", map[string]string{"pool": "general"})}
				stEvent(w, "Pod", stPod(w).Name, "", "FailedScheduling", "0/3 nodes are available: 2 node(s) were unschedulable, 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
			},
			rule: rules.RuleCordonedNodes, path: "spec.template.spec.nodeSelector[pool]",
			absent: []string{"spec.template.spec.affinity.nodeAffinity"},
		},
		{
			// The same reason against a required node-affinity In term.
			name: "node affinity In pins the pod to a cordoned node",
			setup: func(w *workload) {
				w.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
						{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"eu-west-1c"}},
					}}},
				}}}
				a := stNode("a", map[string]string{"topology.kubernetes.io/zone": "eu-west-1c"})
				a.Spec.Unschedulable = true
				w.Snap.Nodes = []*corev1.Node{a, stNode("b", map[string]string{"topology.kubernetes.io/zone": "eu-west-1a"})}
				stEvent(w, "Pod", stPod(w).Name, "", "FailedScheduling", "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) were unschedulable. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
			},
			rule: rules.RuleCordonedNodes, path: "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]",
			absent: []string{"spec.template.spec.nodeSelector"},
		},
		{
			// Every node cordoned and nothing in the template picks them: the nodes are named.
			name: "every node cordoned, no selection",
			setup: func(w *workload) {
				a, b := stNode("a", nil), stNode("b", nil)
				a.Spec.Unschedulable, b.Spec.Unschedulable = true, true
				w.Snap.Nodes = []*corev1.Node{a, b}
				stEvent(w, "Pod", stPod(w).Name, "", "FailedScheduling", "0/2 nodes are available: 2 node(s) were unschedulable. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
			},
			rule: rules.RuleCordonedNodes, object: "Node/a", path: "spec.unschedulable",
		},
		{
			// volumebinding PreFilter returns the claim lister's NotFound (volume_binding.go podHasPVCs).
			name: "volume names a claim that does not exist",
			setup: func(w *workload) {
				w.Template.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "api-data"},
				}}}
				stEvent(w, "Pod", stPod(w).Name, "", "FailedScheduling", `0/3 nodes are available: persistentvolumeclaim "api-data" not found. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.`)
			},
			rule: rules.RuleVolumeRefNotFound, path: "spec.template.spec.volumes[0].persistentVolumeClaim.claimName",
		},
		{
			// interpodaffinity/filtering.go ErrReasonAntiAffinityRulesNotMatch.
			name: "required anti-affinity",
			setup: func(w *workload) {
				w.Template.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}, TopologyKey: "kubernetes.io/hostname",
				}}}}
				stEvent(w, "Pod", stPod(w).Name, "", "FailedScheduling", "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.")
			},
			rule: rules.RulePodAffinity, path: "spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution",
		},
		{
			// nodeports/node_ports.go ErrReason; several reasons in one FitError, sorted.
			name: "hostPort taken, and a taint elsewhere",
			setup: func(w *workload) {
				w.Template.Spec.Containers[0].Ports[0].HostPort = 8080
				stEvent(w, "Pod", stPod(w).Name, "", "FailedScheduling", "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 node(s) didn't have free ports for the requested pod ports. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.")
			},
			rule: rules.RuleHostPort, path: c0 + ".ports[0].hostPort",
			below: []string{"spec.template.spec.tolerations"},
		},
		{
			// podtopologyspread/plugin.go ErrReasonConstraintsNotMatch.
			name: "topology spread",
			setup: func(w *workload) {
				w.Template.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
					MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone",
					WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}},
				}}
				stEvent(w, "Pod", stPod(w).Name, "", "FailedScheduling", "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
			},
			rule: rules.RuleTopologySpread, path: "spec.template.spec.topologySpreadConstraints[0]",
		},
		{
			name: "node affinity NotIn every node's value",
			setup: func(w *workload) {
				w.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
						{Key: "node.kubernetes.io/instance-type", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"m6i.large", "m6i.xlarge"}},
					}}},
				}}}
				w.Snap.Nodes = []*corev1.Node{
					stNode("a", map[string]string{"node.kubernetes.io/instance-type": "m6i.large"}),
					stNode("b", map[string]string{"node.kubernetes.io/instance-type": "m6i.xlarge"}),
				}
				stEvent(w, "Pod", stPod(w).Name, "", "FailedScheduling", "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
			},
			rule: rules.RuleNodeSelector, path: "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]",
		},
		{
			name: "node selector with no visible nodes",
			setup: func(w *workload) {
				w.Template.Spec.NodeSelector = map[string]string{"disktype": "nvme"}
				stEvent(w, "Pod", stPod(w).Name, "", "FailedScheduling", "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
			},
			rule: rules.RuleNodeSelector, path: "spec.template.spec.nodeSelector[disktype]",
		},
		{
			// plugin/pkg/admission/serviceaccount/admission.go via controller_utils.go "Error creating: %v".
			name: "serviceAccountName that does not exist",
			setup: func(w *workload) {
				w.CurrentPods, w.Pods = nil, nil
				stEvent(w, "ReplicaSet", "api-6b7d9c5f4", "", "FailedCreate", `Error creating: pods "api-6b7d9c5f4-" is forbidden: error looking up service account shop/api: serviceaccount "api" not found`)
			},
			rule: rules.RuleServiceAccountNotFound, path: "spec.template.spec.serviceAccountName",
		},
		{
			// k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go.
			name: "quota exceeded on limits.memory",
			setup: func(w *workload) {
				w.CurrentPods, w.Pods = nil, nil
				stEvent(w, "ReplicaSet", "api-6b7d9c5f4", "", "FailedCreate", `Error creating: pods "api-6b7d9c5f4-9xk2m" is forbidden: exceeded quota: compute, requested: limits.memory=256Mi, used: limits.memory=1792Mi, limited: limits.memory=2Gi`)
			},
			rule: rules.RuleQuotaExceeded, path: c0 + ".resources.limits.memory",
		},
		{
			// pkg/quota/v1/evaluator/core/pods.go: "must specify %s".
			name: "quota requires a limit the container does not set",
			setup: func(w *workload) {
				stEvent(w, "ReplicaSet", "api-6b7d9c5f4", "", "FailedCreate", `Error creating: pods "api-6b7d9c5f4-9xk2m" is forbidden: failed quota: compute: must specify limits.cpu for: api`)
			},
			rule: rules.RuleQuotaExceeded, path: c0 + ".resources.limits.cpu",
		},
		{
			name: "quota on pods names replicas",
			setup: func(w *workload) {
				stEvent(w, "ReplicaSet", "api-6b7d9c5f4", "", "FailedCreate", `Error creating: pods "api-6b7d9c5f4-9xk2m" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=10, limited: pods=10`)
			},
			rule: rules.RuleQuotaExceeded, path: "spec.replicas",
		},
		{
			// runc libcontainer/standard_init_linux.go via containerd; StartError exit 128.
			name: "command names a missing executable",
			setup: func(w *workload) {
				w.Template.Spec.Containers[0].Command = []string{"api-server"}
				w.Template.Spec.Containers[0].Args = []string{"--port=8080"}
				stTerminated(w, "StartError", 128, `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: exec: "api-server": executable file not found in $PATH: unknown`)
			},
			rule: rules.RuleCommandNotFound, path: c0 + ".command[0]",
		},
		{
			// Go's flag package: "flag provided but not defined: -%s".
			name: "flag the program does not define",
			setup: func(w *workload) {
				w.Template.Spec.Containers[0].Args = []string{"--config=/etc/api/config.yaml", "--listen-address=:8080"}
				stTerminated(w, "Error", 2, "")
				stLog(w, "flag provided but not defined: -listen-address", "Usage of /usr/local/bin/api:", "  -config string", "    \tpath of the config file")
			},
			rule: rules.RuleRejectedArgument, path: c0 + ".args[1]",
			absent: []string{c0 + ".args[0]"},
		},
		{
			name: "OOMKilled names the memory limit",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				stTerminated(w, "OOMKilled", 137, "")
			},
			rule: rules.RuleMemoryLimit, path: c0 + ".resources.limits.memory",
		},
		{
			name: "OOMKilled under a heap the container's own flags ask for",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("64Mi")
				w.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "JAVA_TOOL_OPTIONS", Value: "-Xms256m -Xmx384m"}}
				stTerminated(w, "OOMKilled", 137, "")
			},
			rule: rules.RuleMemoryBelowHeap, path: c0 + ".resources.limits.memory",
			below: []string{c0 + ".env[0].value"},
		},
		{
			name: "OOMKilled with a heap that fits the limit",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("1Gi")
				w.Template.Spec.Containers[0].Args = []string{"-Xmx512m", "-jar", "/app/importer.jar"}
				stTerminated(w, "OOMKilled", 137, "")
			},
			rule: rules.RuleMemoryLimit, path: c0 + ".resources.limits.memory",
			absent: []string{c0 + ".args[0]"},
		},
		{
			// pkg/probe/http/http.go "HTTP probe failed with statuscode: %d"; prober.go "%s probe failed: %s".
			name: "readiness probe path answered 404",
			setup: func(w *workload) {
				w.Shape = ShapeLiveButIdle
				stPodEvent(w, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 404")
			},
			rule: rules.RuleProbePath, path: c0 + ".readinessProbe.httpGet.path",
			absent: []string{c0 + ".livenessProbe.httpGet.path"},
		},
		{
			name: "readiness probe 503 is not the probe's fault",
			setup: func(w *workload) {
				w.Shape = ShapeLiveButIdle
				stPodEvent(w, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503")
			},
			absent: []string{c0 + ".readinessProbe.httpGet.path"},
		},
		{
			name: "probe targets a port name the container does not declare",
			setup: func(w *workload) {
				w.Shape = ShapeLiveButIdle
				w.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Port = intstr.FromString("metrics")
			},
			rule: rules.RuleProbePort, path: c0 + ".readinessProbe.httpGet.port",
		},
		{
			// net.Dialer error as the TCP prober returns it (pkg/probe/tcp/tcp.go).
			name: "liveness probe refused on an undeclared port",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(9090)}}}
				stPodEvent(w, "Unhealthy", "Liveness probe failed: dial tcp 10.244.1.7:9090: connect: connection refused")
			},
			rule: rules.RuleProbePort, path: c0 + ".livenessProbe.tcpSocket.port",
		},
		{
			// pkg/probe/http/http.go returns the client's error as the output.
			name: "readiness probe times out on an undeclared port",
			setup: func(w *workload) {
				w.Shape = ShapeLiveButIdle
				w.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Port = intstr.FromInt32(8081)
				stPodEvent(w, "Unhealthy", `Readiness probe failed: Get "http://10.244.1.7:8081/ready": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)
			},
			rule: rules.RuleProbePort, path: c0 + ".readinessProbe.httpGet.port",
		},
		{
			name: "liveness probe times out on a workload that never served",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				stTerminated(w, "Error", 137, "")
				stPodEvent(w, "Unhealthy", `Liveness probe failed: Get "http://10.244.1.7:8080/live": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)
			},
			rule: rules.RuleLivenessStartup, path: c0 + ".livenessProbe.timeoutSeconds",
			absent: []string{c0 + ".livenessProbe.httpGet.path"},
		},
		{
			name: "liveness probe times out on a workload that served",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.LastServingRevision = "1"
				stTerminated(w, "Error", 137, "")
				stPodEvent(w, "Unhealthy", `Liveness probe failed: Get "http://10.244.1.7:8080/live": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)
			},
			rule: rules.RuleLivenessTimeout, path: c0 + ".livenessProbe.timeoutSeconds",
		},
		{
			name: "undeclared numeric probe port that does not fail is no suspect",
			setup: func(w *workload) {
				w.Shape = ShapeLiveButIdle
				w.Template.Spec.Containers[0].LivenessProbe.HTTPGet.Port = intstr.FromInt32(9901)
				stPodEvent(w, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503")
			},
			absent: []string{c0 + ".livenessProbe.httpGet.port"},
		},
		{
			name: "Service meant for the workload selects none of its pods",
			setup: func(w *workload) {
				w.Shape = ShapeLiveButIdle
				w.Snap.Services = []*corev1.Service{stService("api", map[string]string{"app": "api-v2"}, intstr.FromString("http"))}
			},
			rule: rules.RuleServiceSelector, object: "Service/api", path: "spec.selector",
		},
		{
			name: "Service targets a port name no container declares",
			setup: func(w *workload) {
				w.Shape = ShapeLiveButIdle
				w.Services = []*corev1.Service{stService("api", map[string]string{"app": "api"}, intstr.FromString("web"))}
			},
			rule: rules.RuleServiceTargetPort, object: "Service/api", path: "spec.ports[0].targetPort",
		},
		{
			// Found through the index by its label, though the collector does not count it as
			// meant for the workload (without EndpointSlices only the same name does).
			name: "Service with the workload's app.kubernetes.io/name selects none of its pods",
			setup: func(w *workload) {
				w.Shape = ShapeLiveButIdle
				w.Snap.Services = []*corev1.Service{stService("api-public", map[string]string{"app": "api-v2"}, intstr.FromString("http"))}
			},
			rule: rules.RuleServiceSelector, object: "Service/api-public", path: "spec.selector",
		},
		{
			name: "unrelated Service is no suspect",
			setup: func(w *workload) {
				w.Shape = ShapeLiveButIdle
				svc := stService("billing", map[string]string{"app": "billing"}, intstr.FromString("http"))
				svc.Labels = nil
				w.Snap.Services = []*corev1.Service{svc}
			},
			absent: []string{"spec.selector"},
		},
	}
	runSuspectCases(t, tests)
}

// suspectCase is one row of the suspect-rule tables.
type suspectCase struct {
	name  string
	setup func(w *workload)
	// rule, object and path of the top suspect; object defaults to Deployment/api.
	rule   RuleID
	object string
	path   string
	// below lists paths that must also be suspects, ranked below the top one.
	below []string
	// absent lists paths that must not be suspects.
	absent []string
	// anyTop skips the check of the top suspect.
	anyTop bool
}

func runSuspectCases(t *testing.T, tests []suspectCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := stWorkload(nil)
			tt.setup(w)
			stAttachServices(w)
			got := rankSuspects(w)
			rule, object, path := stTop(got)
			wantObject := tt.object
			if wantObject == "" && tt.rule != "" {
				wantObject = "Deployment/api"
			}
			if !tt.anyTop && (rule != tt.rule || object != wantObject || path != tt.path) {
				t.Errorf("top suspect = %s %s %s, want %s %s %s", rule, object, path, tt.rule, wantObject, tt.path)
				for _, s := range got {
					t.Logf("  %d %s %s %s", s.Score, s.Rule, s.Object, s.Path)
				}
			}
			for _, b := range tt.below {
				if i := stRank(got, b); i <= 0 {
					t.Errorf("%s at rank %d, want a suspect below the top", b, i)
				}
			}
			for _, a := range tt.absent {
				if i := stRank(got, a); i >= 0 {
					t.Errorf("%s is suspect %d (%s), want none", a, i, got[i].Reason)
				}
			}
		})
	}
}

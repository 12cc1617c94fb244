package diagnose

import (
	"fmt"
	"strings"
)

// The suspect rules. IDs are stable: scripts and the documentation refer to them.
const (
	RuleImageNotFound          RuleID = "image-not-found"
	RuleImageInvalidName       RuleID = "image-invalid-name"
	RuleImagePullAuth          RuleID = "image-pull-auth"
	RuleImageRegistryDown      RuleID = "image-registry-unreachable"
	RuleEnvRefNotFound         RuleID = "env-ref-not-found"
	RuleEnvKeyNotFound         RuleID = "env-key-not-found"
	RuleVolumeRefNotFound      RuleID = "volume-ref-not-found"
	RuleVolumeKeyNotFound      RuleID = "volume-key-not-found"
	RuleNodeSelector           RuleID = "scheduling-node-selector"
	RuleInsufficientResource   RuleID = "scheduling-insufficient-resource"
	RuleUntoleratedTaint       RuleID = "scheduling-untolerated-taint"
	RulePodAffinity            RuleID = "scheduling-pod-affinity"
	RuleHostPort               RuleID = "scheduling-host-port"
	RuleTopologySpread         RuleID = "scheduling-topology-spread"
	RuleStorageClass           RuleID = "storage-class"
	RuleServiceAccountNotFound RuleID = "service-account-not-found"
	RuleQuotaExceeded          RuleID = "quota-exceeded"
	RuleCommandNotFound        RuleID = "command-not-found"
	RuleRunAsNonRoot           RuleID = "run-as-non-root"
	RuleMemoryLimit            RuleID = "memory-limit"
	RuleMemoryBelowHeap        RuleID = "memory-limit-below-heap"
	RuleProbePort              RuleID = "probe-port"
	RuleProbePath              RuleID = "probe-path"
	RuleLivenessTimeout        RuleID = "liveness-timeout"
	RuleLivenessStartup        RuleID = "liveness-timeout-at-start"
	RuleServiceSelector        RuleID = "service-selector"
	RuleServiceTargetPort      RuleID = "service-target-port"
	RuleNamedInFailure         RuleID = "named-in-failure"
	RuleChangedField           RuleID = "changed-field"
)

// RuleInfo describes one suspect rule for people: what it detects and how to fix it.
type RuleInfo struct {
	ID RuleID
	// Title says what the rule detects.
	Title string
	// Signal names the evidence the rule reads.
	Signal string
	// Fix is the hint shown with a suspect of this rule.
	Fix string
	// Outside is true when the rule's failure lies outside the spec unless the field changed
	// in the failing revision (a registry that is down, an upstream that refuses connections,
	// an input that outgrew a limit that used to be enough).
	Outside bool
}

// rules is the one rule catalogue. docs/rules.md is generated from it (see rulesMarkdown) and
// a test keeps the two in step.
var rules = []RuleInfo{
	{
		RuleImageNotFound, "Image reference names a tag or digest the registry does not have",
		"ErrImagePull/ImagePullBackOff with `not found` or `manifest unknown`",
		"Correct the image tag or digest; the previous value is the last one that pulled.", false,
	},
	{
		RuleImageInvalidName, "Image reference cannot be parsed",
		"InvalidImageName",
		"Write the image as registry/repository[:tag][@digest].", false,
	},
	{
		RuleImagePullAuth, "Registry refuses the pull: no or wrong credentials",
		"ErrImagePull with `pull access denied`, `unauthorized`, `insufficient_scope`, 401 or 403",
		"Add an imagePullSecrets entry (or attach one to the pod's ServiceAccount) that can read the repository.", false,
	},
	{
		RuleImageRegistryDown, "Registry cannot be reached",
		"ErrImagePull with `no such host`, `i/o timeout` or `connection refused` to the registry",
		"If the registry host did not change, fix the registry or the network path to it; the spec is not at fault.", true,
	},
	{
		RuleEnvRefNotFound, "env/envFrom refers to a Secret or ConfigMap that does not exist",
		"CreateContainerConfigError `secret \"x\" not found` / `configmap \"x\" not found`",
		"Create the object in the namespace, correct the name, or mark the reference optional.", false,
	},
	{
		RuleEnvKeyNotFound, "env refers to a key its Secret or ConfigMap does not have",
		"CreateContainerConfigError `couldn't find key k in Secret ns/x`",
		"Correct the key, or add it to the Secret or ConfigMap.", false,
	},
	{
		RuleVolumeRefNotFound, "A volume refers to a Secret, ConfigMap or claim that does not exist",
		"FailedMount `MountVolume.SetUp failed for volume \"v\" : secret \"x\" not found`",
		"Create the object, correct the name, or mark the volume source optional.", false,
	},
	{
		RuleVolumeKeyNotFound, "A volume's items name a key its Secret or ConfigMap does not have",
		"FailedMount `configmap references non-existent config key: k`",
		"Correct the item key, or add the key to the object.", false,
	},
	{
		RuleNodeSelector, "nodeSelector or required node affinity matches no node",
		"FailedScheduling `node(s) didn't match Pod's node affinity/selector`",
		"Use a label value that nodes carry (kubectl get nodes --show-labels), or relax the requirement.", false,
	},
	{
		RuleInsufficientResource, "Resource requests fit on no node",
		"FailedScheduling `Insufficient cpu|memory|...`",
		"Lower the requests or add capacity.", false,
	},
	{
		RuleUntoleratedTaint, "Nodes carry taints the pod does not tolerate",
		"FailedScheduling `node(s) had untolerated taint(s)`",
		"Add the matching toleration, or schedule onto untainted nodes.", false,
	},
	{
		RulePodAffinity, "Pod affinity or anti-affinity cannot be satisfied",
		"FailedScheduling `node(s) didn't match pod (anti-)affinity rules`",
		"Relax the rule (preferred instead of required) or add nodes in other topology domains.", false,
	},
	{
		RuleHostPort, "hostPort is taken on every node",
		"FailedScheduling `node(s) didn't have free ports for the requested pod ports`",
		"Drop hostPort or use a port that is free.", false,
	},
	{
		RuleTopologySpread, "Topology spread constraints cannot be satisfied",
		"FailedScheduling `node(s) didn't match pod topology spread constraints`",
		"Raise maxSkew or use whenUnsatisfiable: ScheduleAnyway.", false,
	},
	{
		RuleStorageClass, "A volumeClaimTemplate's storage class cannot provision",
		"ProvisioningFailed, `storageclass.storage.k8s.io \"x\" not found`, unbound PersistentVolumeClaims",
		"Name an existing StorageClass (kubectl get storageclass).", false,
	},
	{
		RuleServiceAccountNotFound, "serviceAccountName names an account that does not exist",
		"FailedCreate `error looking up service account ns/sa: serviceaccount \"sa\" not found`",
		"Create the ServiceAccount or correct the name.", false,
	},
	{
		RuleQuotaExceeded, "A ResourceQuota refuses the pods",
		"FailedCreate `exceeded quota: q, requested: ...` or `failed quota: q: must specify ...`",
		"Lower the named resource, set the missing request or limit, or raise the quota.", false,
	},
	{
		RuleCommandNotFound, "command names an executable the image does not have",
		"StartError/RunContainerError `exec: \"x\": executable file not found in $PATH`",
		"Correct command/args, or use an image that contains the executable.", false,
	},
	{
		RuleRunAsNonRoot, "runAsNonRoot is required but the image runs as root or by user name",
		"CreateContainerConfigError `container has runAsNonRoot and image will run as root`",
		"Set securityContext.runAsUser to a non-zero UID, or use an image whose USER is numeric and not 0.", false,
	},
	{
		RuleMemoryLimit, "The memory limit is below what the container uses",
		"OOMKilled (exit code 137)",
		"Raise resources.limits.memory, or find what made the container grow.", true,
	},
	{
		RuleMemoryBelowHeap, "The memory limit is below the heap the container's own flags ask for",
		"OOMKilled with a JVM -Xms/-Xmx (in args or an env value) at or above resources.limits.memory",
		"Raise resources.limits.memory above the heap plus overhead, or lower the heap flags.", false,
	},
	{
		RuleProbePort, "A probe targets a port the container does not serve",
		"probe port matching no containerPort; probe `connection refused`",
		"Point the probe at a declared containerPort (by name or number).", false,
	},
	{
		RuleProbePath, "An HTTP probe asks for a path the application does not serve",
		"`Readiness probe failed: HTTP probe failed with statuscode: 404`",
		"Use the path the application serves for health checks.", false,
	},
	{
		RuleLivenessTimeout, "The liveness probe times out and the kubelet restarts a container that used to answer in time",
		"`Liveness probe failed: ... context deadline exceeded` on copies that start and die, in a workload that served",
		"Raise timeoutSeconds or failureThreshold, or add a startupProbe for slow starts.", true,
	},
	{
		RuleLivenessStartup, "The liveness probe times out and kills a container that never served: it starts slower than the probe allows",
		"`Liveness probe failed: ... context deadline exceeded` on a workload no revision of which served",
		"Add a startupProbe, or raise timeoutSeconds, initialDelaySeconds or failureThreshold so the container can finish starting.", false,
	},
	{
		RuleServiceSelector, "A Service meant for the workload selects none of its pods",
		"Service selector matching no pod of the workload; no endpoints",
		"Make spec.selector match the pod template's labels.", false,
	},
	{
		RuleServiceTargetPort, "A Service targets a port no container exposes",
		"Service targetPort matching no containerPort name or number",
		"Make targetPort name or number a containerPort of the workload.", false,
	},
	{
		RuleNamedInFailure, "A field holds an endpoint, host, port, path, flag or variable that the failure names",
		"host:port, URL, path, flag or variable name in failing events, container states and log lines",
		"Check the value against what the failure says; fix the field if it is wrong, else the named dependency.", true,
	},
	{
		RuleChangedField, "Changed in the failing revision, not named by any failure",
		"revision history",
		"Compare with the previous value; roll back if the change is the likely cause.", false,
	},
}

// Rules returns the rule catalogue in documentation order.
func Rules() []RuleInfo {
	return append([]RuleInfo(nil), rules...)
}

// ruleInfo returns the catalogue entry of a rule.
func ruleInfo(id RuleID) RuleInfo {
	for _, r := range rules {
		if r.ID == id {
			return r
		}
	}
	return RuleInfo{ID: id}
}

// RulesMarkdown renders the catalogue as the rules section of the documentation.
func RulesMarkdown() string {
	var b strings.Builder
	b.WriteString("<!-- Generated from diagnose/rules.go by `go test ./diagnose -run TestRulesDoc -update`; do not edit. -->\n\n")
	b.WriteString("| Rule | Detects | Signal | Fix | Outside |\n|---|---|---|---|---|\n")
	for _, r := range rules {
		outside := ""
		if r.Outside {
			outside = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", r.ID, cellEscape(r.Title), cellEscape(r.Signal), cellEscape(r.Fix), outside)
	}
	return b.String()
}

func cellEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

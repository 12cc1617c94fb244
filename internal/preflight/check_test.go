package preflight

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

const ns = "shop"

// apiDeployment is a manifest that passes every check against baseFacts, but for its
// tag-only image (a warning).
func apiDeployment() *appsv1.Deployment {
	labels := map[string]string{"app": "api"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "api", Image: "registry.example/shop/api:1.4.2",
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
					Env:   []corev1.EnvVar{{Name: "DB", Value: "db.internal:5432"}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
						HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")},
					}},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi"),
					}},
				}}},
			},
		},
	}
}

func node(name string, cpu string, mutate func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name, "pool": "general"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110"),
		}},
	}
	if mutate != nil {
		mutate(n)
	}
	return n
}

func baseFacts() *Facts {
	return &Facts{
		Nodes: []*corev1.Node{node("n1", "4", nil), node("n2", "4", nil)},
		Namespaces: map[string]*NamespaceFacts{ns: {
			Namespace:       &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
			ServiceAccounts: map[string]bool{"default": true},
			Live:            map[string]*Live{},
			ConfigMaps:      map[string]bool{}, Secrets: map[string]bool{}, Unread: map[string]string{},
		}},
	}
}

func manifests(ws ...*appsv1.Deployment) *Manifests {
	m := &Manifests{Skipped: map[string]int{}}
	for _, d := range ws {
		m.Workloads = append(m.Workloads, &Workload{Kind: "Deployment", Namespace: d.Namespace, Name: d.Name, Object: d, Template: &d.Spec.Template, Origin: "test.yaml:1"})
	}
	return m
}

// findings returns the workload's findings of one check.
func findings(t *testing.T, r *Report, id CheckID) []Finding {
	t.Helper()
	var out []Finding
	for _, f := range r.Workloads[0].Findings {
		if f.Check == id {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s finding in %+v", id, r.Workloads[0].Findings)
	}
	return out
}

func worst(fs []Finding) Result {
	w := ResultPass
	for _, f := range fs {
		if f.Result.rank() > w.rank() {
			w = f.Result
		}
	}
	return w
}

func liveAPI() *Live {
	d := apiDeployment()
	d.Spec.Template.Labels = map[string]string{"app": "api", "track": "stable"}
	return &Live{Object: d, Pods: []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "api-1", Labels: map[string]string{"app": "api", "track": "stable", "pod-template-hash": "5d"}}}}}
}

func TestChecks(t *testing.T) {
	tests := []struct {
		name   string
		check  CheckID
		change func(d *appsv1.Deployment, f *Facts, m *Manifests)
		want   Result
		path   string
		msg    string
	}{
		{"default account exists", CheckServiceAccount, nil, ResultPass, "", "default exists"},
		{"named account missing", CheckServiceAccount, func(d *appsv1.Deployment, _ *Facts, _ *Manifests) {
			d.Spec.Template.Spec.ServiceAccountName = "api"
		}, ResultFail, "spec.template.spec.serviceAccountName", `serviceaccount "api" not found`},
		{"account in the stream", CheckServiceAccount, func(d *appsv1.Deployment, _ *Facts, m *Manifests) {
			d.Spec.Template.Spec.ServiceAccountName = "api"
			m.ServiceAccounts = []*corev1.ServiceAccount{{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns}}}
		}, ResultPass, "", "created by the manifests"},
		{"account unreadable", CheckServiceAccount, func(_ *appsv1.Deployment, f *Facts, _ *Manifests) {
			f.Namespaces[ns].ServiceAccounts = map[string]bool{}
			f.Namespaces[ns].Unread["serviceaccount/default"] = "forbidden"
		}, ResultSkipped, "", "forbidden"},

		{"fits a node", CheckNodeFit, nil, ResultPass, "", "fits on 2 of 2 nodes"},
		{"node selector matches nothing", CheckNodeFit, func(d *appsv1.Deployment, _ *Facts, _ *Manifests) {
			d.Spec.Template.Spec.NodeSelector = map[string]string{"pool": "gpu"}
		}, ResultFail, "spec.template.spec.nodeSelector", "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."},
		{"required affinity matches one node", CheckNodeFit, func(d *appsv1.Deployment, _ *Facts, _ *Manifests) {
			d.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{"n2"}}}}},
			}}}
		}, ResultPass, "", "fits on 1 of 2 nodes (n2)"},
		{"taint not tolerated", CheckNodeFit, func(_ *appsv1.Deployment, f *Facts, _ *Manifests) {
			for _, n := range f.Nodes {
				n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
			}
		}, ResultFail, "spec.template.spec.tolerations", "2 node(s) had untolerated taint(s)"},
		{"the nodes the selector picks are tainted, more nodes miss it", CheckNodeFit, func(d *appsv1.Deployment, f *Facts, _ *Manifests) {
			f.Nodes = append(f.Nodes, node("g1", "8", func(n *corev1.Node) {
				n.Labels["pool"] = "gpu"
				n.Spec.Taints = []corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}}
			}))
			d.Spec.Template.Spec.NodeSelector = map[string]string{"pool": "gpu"}
		}, ResultFail, "spec.template.spec.tolerations", "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 node(s) didn't match Pod's node affinity/selector."},
		{"taint tolerated", CheckNodeFit, func(d *appsv1.Deployment, f *Facts, _ *Manifests) {
			for _, n := range f.Nodes {
				n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
			}
			d.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
		}, ResultPass, "", "fits on 2 of 2"},
		{"cordoned", CheckNodeFit, func(_ *appsv1.Deployment, f *Facts, _ *Manifests) {
			f.Nodes = f.Nodes[:1]
			f.Nodes[0].Spec.Unschedulable = true
		}, ResultFail, "", "1 node(s) were unschedulable"},
		{"requests above what bound pods leave", CheckNodeFit, func(_ *appsv1.Deployment, f *Facts, _ *Manifests) {
			for _, n := range f.Nodes {
				f.BoundPods = append(f.BoundPods, &corev1.Pod{Spec: corev1.PodSpec{NodeName: n.Name, Containers: []corev1.Container{{
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3700m")}},
				}}}})
			}
		}, ResultFail, "spec.template.spec.containers[0].resources.requests[cpu]", "2 Insufficient cpu"},
		{"finished pods free their requests", CheckNodeFit, func(_ *appsv1.Deployment, f *Facts, _ *Manifests) {
			f.BoundPods = append(f.BoundPods, &corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3700m")}},
			}}}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}})
			f.Nodes = f.Nodes[:1]
		}, ResultPass, "", "fits on 1 of 1"},
		{"allocatable alone when pods are unreadable", CheckNodeFit, func(d *appsv1.Deployment, f *Facts, _ *Manifests) {
			f.BoundPodsUnread = "forbidden"
			d.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("5")
		}, ResultFail, "", "against allocatable alone"},
		{"nodes unreadable", CheckNodeFit, func(_ *appsv1.Deployment, f *Facts, _ *Manifests) { f.NodesUnread = "forbidden" }, ResultSkipped, "", "forbidden"},

		{"no quota", CheckQuota, nil, ResultPass, "", "no ResourceQuota"},
		{"quota room for a new deployment", CheckQuota, func(_ *appsv1.Deployment, f *Facts, _ *Manifests) {
			f.Namespaces[ns].Quotas = []*corev1.ResourceQuota{quotaOf("compute", "2", "1")}
		}, ResultPass, "", "room for 2 new copies"},
		{"quota without room for the surge", CheckQuota, func(_ *appsv1.Deployment, f *Facts, _ *Manifests) {
			f.Namespaces[ns].Quotas = []*corev1.ResourceQuota{quotaOf("compute", "2", "1700m")}
			f.Namespaces[ns].Live[Key("Deployment", "api")] = liveAPI()
		}, ResultFail, "spec.template.spec.containers[0].resources.requests[cpu]", "requests.cpu is at 1700m of 2, and 1 surge copy (maxSurge 25% of 2 replicas, from 2 today) would add 500m"},
		{"maxSurge 0 needs no room", CheckQuota, func(d *appsv1.Deployment, f *Facts, _ *Manifests) {
			f.Namespaces[ns].Quotas = []*corev1.ResourceQuota{quotaOf("compute", "2", "2")}
			f.Namespaces[ns].Live[Key("Deployment", "api")] = liveAPI()
			zero, one := intstr.FromInt32(0), intstr.FromInt32(1)
			d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: &zero, MaxUnavailable: &one}
		}, ResultPass, "", "0 surge copies"},

		{"no enforce label", CheckPodSecurity, nil, ResultPass, "", "sets no enforce level"},
		{"restricted refuses", CheckPodSecurity, func(_ *appsv1.Deployment, f *Facts, _ *Manifests) {
			f.Namespaces[ns].Namespace.Labels = map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}
		}, ResultFail, "spec.template.spec", `violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`},
		{"restricted admits a hardened template", CheckPodSecurity, func(d *appsv1.Deployment, f *Facts, _ *Manifests) {
			f.Namespaces[ns].Namespace.Labels = map[string]string{"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "v1.37"}
			harden(d)
		}, ResultPass, "", `enforces "restricted:v1.37"`},
		{"baseline warns", CheckPodSecurity, func(d *appsv1.Deployment, f *Facts, _ *Manifests) {
			f.Namespaces[ns].Namespace.Labels = map[string]string{"pod-security.kubernetes.io/warn": "baseline"}
			d.Spec.Template.Spec.HostNetwork = true
		}, ResultWarn, "", "warn level"},
		{"the stream's namespace labels apply", CheckPodSecurity, func(_ *appsv1.Deployment, _ *Facts, m *Manifests) {
			m.Namespaces = []*corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}}
		}, ResultFail, "", "restricted"},

		{"probe on a declared port", CheckProbes, nil, ResultPass, "", "the probe targets a port its container declares"},
		{"probe on an undeclared name", CheckProbes, func(d *appsv1.Deployment, _ *Facts, _ *Manifests) {
			d.Spec.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Port = intstr.FromString("metrics")
		}, ResultFail, "spec.template.spec.containers[0].readinessProbe.httpGet.port", `targets port "metrics"`},
		{"probe on an undeclared number", CheckProbes, func(d *appsv1.Deployment, _ *Facts, _ *Manifests) {
			d.Spec.Template.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8081)}}}
		}, ResultFail, "spec.template.spec.containers[0].livenessProbe.tcpSocket.port", "declares 8080 (http)"},
		{"probe path without a slash", CheckProbes, func(d *appsv1.Deployment, _ *Facts, _ *Manifests) {
			d.Spec.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Path = "healthz"
		}, ResultWarn, "spec.template.spec.containers[0].readinessProbe.httpGet.path", "does not start with /"},

		{"new workload", CheckServices, nil, ResultPass, "", "no copies today"},
		{"a Service keeps selecting", CheckServices, func(_ *appsv1.Deployment, f *Facts, _ *Manifests) {
			f.Namespaces[ns].Live[Key("Deployment", "api")] = liveAPI()
			f.Namespaces[ns].Services = []*corev1.Service{serviceOf("api", map[string]string{"app": "api"})}
		}, ResultPass, "", "Service api selects today's copies and the new template"},
		{"a Service would lose the copies", CheckServices, func(_ *appsv1.Deployment, f *Facts, _ *Manifests) {
			f.Namespaces[ns].Live[Key("Deployment", "api")] = liveAPI()
			f.Namespaces[ns].Services = []*corev1.Service{serviceOf("api", map[string]string{"app": "api", "track": "stable"}), serviceOf("other", map[string]string{"app": "web"})}
		}, ResultFail, "spec.template.metadata.labels", "Service api selects today's copies but not the new template's labels (it needs track=stable)"},
		{"the stream's Service replaces the live one", CheckServices, func(_ *appsv1.Deployment, f *Facts, m *Manifests) {
			f.Namespaces[ns].Live[Key("Deployment", "api")] = liveAPI()
			f.Namespaces[ns].Services = []*corev1.Service{serviceOf("api", map[string]string{"app": "api", "track": "stable"})}
			m.Services = []*corev1.Service{serviceOf("api", map[string]string{"app": "api"})}
		}, ResultPass, "", "selects today's copies and the new template"},

		{"a tag is mutable", CheckImages, nil, ResultWarn, "spec.template.spec.containers[0].image", "tag 1.4.2 without a digest"},
		{"a digest is pinned", CheckImages, func(d *appsv1.Deployment, _ *Facts, _ *Manifests) {
			d.Spec.Template.Spec.Containers[0].Image = "registry.example/shop/api@sha256:4f1d7c3ab1a7c2e0d6f8b4a1c9e2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0"
		}, ResultPass, "", "pinned by digest"},
		{"no tag pulls latest", CheckImages, func(d *appsv1.Deployment, _ *Facts, _ *Manifests) {
			d.Spec.Template.Spec.Containers[0].Image = "nginx"
		}, ResultWarn, "", "pulls tag latest"},
		{"an invalid reference", CheckImages, func(d *appsv1.Deployment, _ *Facts, _ *Manifests) {
			d.Spec.Template.Spec.Containers[0].Image = "registry.example/Shop/API:1.4.2"
		}, ResultFail, "spec.template.spec.containers[0].image", "InvalidImageName"},

		{"references not checked", CheckReferences, func(d *appsv1.Deployment, _ *Facts, _ *Manifests) {
			withRefs(d)
		}, ResultSkipped, "", "pass --check-references"},
		{"references exist", CheckReferences, func(d *appsv1.Deployment, f *Facts, m *Manifests) {
			withRefs(d)
			f.CheckReferences = true
			f.Namespaces[ns].ConfigMaps["api-config"] = true
			m.Secrets = []Ref{{Namespace: ns, Name: "api-db"}}
		}, ResultPass, "", "2 referenced ConfigMaps and Secrets exist"},
		{"a Secret is missing", CheckReferences, func(d *appsv1.Deployment, f *Facts, _ *Manifests) {
			withRefs(d)
			f.CheckReferences = true
			f.Namespaces[ns].ConfigMaps["api-config"] = true
		}, ResultFail, "spec.template.spec.containers[0].env[1].valueFrom.secretKeyRef.name", "Secret api-db does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, f := apiDeployment(), baseFacts()
			m := manifests(d)
			if tt.change != nil {
				tt.change(d, f, m)
			}
			fs := findings(t, Check(m, f), tt.check)
			if w := worst(fs); w != tt.want {
				t.Fatalf("result %s, want %s: %+v", w, tt.want, fs)
			}
			for _, fd := range fs {
				if fd.Result != tt.want {
					continue
				}
				if tt.path != "" && fd.Path != tt.path {
					t.Errorf("path %q, want %q", fd.Path, tt.path)
				}
				if !strings.Contains(fd.Message, tt.msg) {
					t.Errorf("message %q does not say %q", fd.Message, tt.msg)
				}
			}
		})
	}
}

func quotaOf(name, hard, used string) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse(hard)}},
		Status: corev1.ResourceQuotaStatus{
			Hard: corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse(hard)},
			Used: corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse(used)},
		},
	}
}

func serviceOf(name string, selector map[string]string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.ServiceSpec{Selector: selector}}
}

func harden(d *appsv1.Deployment) {
	c := &d.Spec.Template.Spec.Containers[0]
	c.SecurityContext = &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false), RunAsNonRoot: ptr.To(true),
		Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func withRefs(d *appsv1.Deployment) {
	c := &d.Spec.Template.Spec.Containers[0]
	c.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "api-config"}}}}
	c.Env = append(c.Env, corev1.EnvVar{Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "api-db"}, Key: "password",
	}}})
}

func TestChangesRankedAgainstTheLiveRevision(t *testing.T) {
	d, f := apiDeployment(), baseFacts()
	live := liveAPI()
	ld := live.Object.(*appsv1.Deployment)
	ld.Spec.Template.Labels = map[string]string{"app": "api"}
	// What the API server defaults is no change.
	lc := &ld.Spec.Template.Spec.Containers[0]
	lc.TerminationMessagePath, lc.ImagePullPolicy, lc.TerminationMessagePolicy = "/dev/termination-log", corev1.PullIfNotPresent, corev1.TerminationMessageReadFile
	ld.Spec.Template.Spec.DNSPolicy, ld.Spec.Template.Spec.RestartPolicy = corev1.DNSClusterFirst, corev1.RestartPolicyAlways
	lc.ReadinessProbe.PeriodSeconds, lc.ReadinessProbe.TimeoutSeconds = 10, 1
	lc.Image = "registry.example/shop/api:1.4.1"
	lc.Env[0].Value = "db.internal:5433"
	d.Spec.Template.Annotations = map[string]string{"team": "shop"}
	f.Namespaces[ns].Live[Key("Deployment", "api")] = live
	r := Check(manifests(d), f)
	got := r.Workloads[0].Changes
	var paths []string
	for _, c := range got {
		paths = append(paths, c.Path+"="+string(c.Risk))
	}
	want := []string{
		"spec.template.spec.containers[0].env[0].value=high",
		"spec.template.spec.containers[0].image=high",
		"spec.template.metadata.annotations=low",
	}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("changes %v, want %v", paths, want)
	}
	if !r.Workloads[0].Live {
		t.Error("the report does not say the workload is live")
	}
}

func TestSignalGapsOfTheNewSpec(t *testing.T) {
	d, f := apiDeployment(), baseFacts()
	d.Spec.Template.Spec.Containers[0].ReadinessProbe = nil
	m := manifests(d)
	m.Services = []*corev1.Service{{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "api"}, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}}},
	}}
	gaps := Check(m, f).Workloads[0].SignalGaps
	if len(gaps) != 1 || gaps[0].Path != "spec.template.spec.containers[0].readinessProbe" {
		t.Errorf("gaps %+v, want the missing readiness probe behind Service api", gaps)
	}
	if gaps := Check(manifests(apiDeployment()), baseFacts()).Workloads[0].SignalGaps; len(gaps) != 0 {
		t.Errorf("a probed workload without a Service: gaps %+v", gaps)
	}
}

func TestPrintFormats(t *testing.T) {
	d, f := apiDeployment(), baseFacts()
	d.Spec.Template.Spec.NodeSelector = map[string]string{"pool": "gpu"}
	r := Check(manifests(d), f)
	if !r.Failed() {
		t.Fatal("a node selector nothing matches must fail")
	}
	for _, format := range Formats {
		var b bytes.Buffer
		if err := Print(&b, r, format); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		out := b.String()
		switch format {
		case "json":
			var doc map[string]any
			if err := json.Unmarshal(b.Bytes(), &doc); err != nil || doc["kind"] != ReportKind {
				t.Errorf("json: %v %v", err, doc["kind"])
			}
		case "table":
			if !hasRow(out, "fail", "shop", "deployment/api", "node-fit", "spec.template.spec.nodeSelector") || !strings.HasSuffix(out, "1 workload: 1 failed, 1 warnings, 5 passed, 1 skipped\n") {
				t.Errorf("table:\n%s", out)
			}
		case "markdown":
			if !strings.Contains(out, "## ✗ `deployment/api` in `shop`: fail") || !strings.Contains(out, "| fail | node-fit | `spec.template.spec.nodeSelector` |") {
				t.Errorf("markdown:\n%s", out)
			}
		case "yaml":
			if !strings.Contains(out, "kind: PreflightReport") {
				t.Errorf("yaml:\n%s", out)
			}
		}
	}
}

// hasRow reports whether a table line starts with these cells.
func hasRow(table string, cells ...string) bool {
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Fields(l); len(f) >= len(cells) && strings.Join(f[:len(cells)], " ") == strings.Join(cells, " ") {
			return true
		}
	}
	return false
}

func TestStatefulSetAndDaemonSet(t *testing.T) {
	tpl := apiDeployment().Spec.Template
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), Template: tpl}}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns}, Spec: appsv1.DaemonSetSpec{Template: *tpl.DeepCopy()}}
	m := &Manifests{Workloads: []*Workload{
		{Kind: "StatefulSet", Namespace: ns, Name: "db", Object: sts, Template: &sts.Spec.Template},
		{Kind: "DaemonSet", Namespace: ns, Name: "agent", Object: ds, Template: &ds.Spec.Template},
	}}
	f := baseFacts()
	// Both nodes under pressure: a DaemonSet's copies tolerate it as its controller adds, a
	// StatefulSet's do not.
	for _, n := range f.Nodes {
		n.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeDiskPressure, Effect: corev1.TaintEffectNoSchedule}}
	}
	f.Namespaces[ns].Quotas = []*corev1.ResourceQuota{quotaOf("compute", "4", "2500m")}
	liveSTS := sts.DeepCopy()
	liveSTS.Spec.Replicas = ptr.To[int32](1)
	f.Namespaces[ns].Live[Key("StatefulSet", "db")] = &Live{Object: liveSTS}
	r := Check(m, f)
	byName := map[string]*WorkloadReport{}
	for i := range r.Workloads {
		byName[r.Workloads[i].Name] = &r.Workloads[i]
	}
	res := func(w *WorkloadReport, id CheckID) (Result, string) {
		fs := []Finding{}
		for _, fd := range w.Findings {
			if fd.Check == id {
				fs = append(fs, fd)
			}
		}
		return worst(fs), fs[len(fs)-1].Message
	}
	if got, msg := res(byName["db"], CheckNodeFit); got != ResultFail || !strings.Contains(msg, "2 node(s) had untolerated taint(s)") {
		t.Errorf("statefulset node-fit %s: %s", got, msg)
	}
	// Two copies more than today, no surge: 1000m into the 1500m left.
	if got, msg := res(byName["db"], CheckQuota); got != ResultPass || !strings.Contains(msg, "2 added copies") {
		t.Errorf("statefulset quota %s: %s", got, msg)
	}
	if got, msg := res(byName["agent"], CheckNodeFit); got != ResultPass || !strings.Contains(msg, "fits on 2 of 2") {
		t.Errorf("daemonset node-fit %s: %s", got, msg)
	}
	// A new DaemonSet: one copy per node it fits, 1000m into 1500m.
	if got, msg := res(byName["agent"], CheckQuota); got != ResultPass || !strings.Contains(msg, "2 new copies (one per node it fits)") {
		t.Errorf("daemonset quota %s: %s", got, msg)
	}
	gaps := map[string]bool{}
	for _, g := range byName["agent"].SignalGaps {
		gaps[g.Path] = true
	}
	if !gaps["spec.minReadySeconds"] {
		t.Errorf("daemonset gaps %v, want minReadySeconds", gaps)
	}
}

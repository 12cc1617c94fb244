package serve

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubediagnose/kubectl-diagnose/internal/live"
)

// manifests decodes deploy/kubectl-diagnose.yaml strictly: an unknown or duplicate field fails.
func manifests(t *testing.T) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "kubectl-diagnose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("decode %s: %v", doc, err)
		}
		out = append(out, obj)
	}
	return out
}

func TestManifestsGrantExactlyWhatTheSourceReads(t *testing.T) {
	var role *rbacv1.ClusterRole
	var binding, delegator *rbacv1.ClusterRoleBinding
	var sa *corev1.ServiceAccount
	for _, o := range manifests(t) {
		switch o := o.(type) {
		case *rbacv1.ClusterRole:
			role = o
		case *rbacv1.ClusterRoleBinding:
			if o.RoleRef.Name == "system:auth-delegator" {
				delegator = o
			} else {
				binding = o
			}
		case *corev1.ServiceAccount:
			sa = o
		}
	}
	if role == nil || binding == nil || sa == nil {
		t.Fatalf("want a ClusterRole, a ClusterRoleBinding and a ServiceAccount; got %v %v %v", role, binding, sa)
	}
	// /report's callers are checked with TokenReviews and SubjectAccessReviews, which only
	// system:auth-delegator (create on both) allows beside the reads.
	if delegator == nil || len(delegator.Subjects) != 1 || delegator.Subjects[0].Name != sa.Name || delegator.Subjects[0].Namespace != sa.Namespace {
		t.Errorf("no binding of system:auth-delegator to the ServiceAccount: %+v", delegator)
	}
	granted := map[string]string{}
	for _, r := range role.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				verbs := slices.Clone(r.Verbs)
				sort.Strings(verbs)
				granted[g+"/"+res] = strings.Join(verbs, ",")
				for _, v := range r.Verbs {
					if v != "get" && v != "list" && v != "watch" {
						t.Errorf("the ClusterRole grants %s on %s/%s", v, g, res)
					}
				}
				if res == "secrets" || res == "configmaps" || res == "*" || g == "*" {
					t.Errorf("the ClusterRole grants %s/%s", g, res)
				}
			}
		}
	}
	want := map[string]string{}
	for _, r := range live.Resources() {
		verbs := slices.Clone(r.Verbs)
		sort.Strings(verbs)
		want[r.Group+"/"+r.Resource] = strings.Join(verbs, ",")
	}
	for k, v := range want {
		if granted[k] != v {
			t.Errorf("the source reads %s with %s; the ClusterRole grants %q", k, v, granted[k])
		}
	}
	for k := range granted {
		if _, ok := want[k]; !ok {
			t.Errorf("the ClusterRole grants %s, which the source never reads", k)
		}
	}
	if binding.RoleRef.Name != role.Name || len(binding.Subjects) != 1 || binding.Subjects[0].Name != sa.Name || binding.Subjects[0].Namespace != sa.Namespace {
		t.Errorf("the binding %+v does not bind %s to %s/%s", binding, role.Name, sa.Namespace, sa.Name)
	}
}

func TestManifestsRunRestricted(t *testing.T) {
	var d *appsv1.Deployment
	var svc *corev1.Service
	var sa *corev1.ServiceAccount
	for _, o := range manifests(t) {
		switch o := o.(type) {
		case *appsv1.Deployment:
			d = o
		case *corev1.Service:
			svc = o
		case *corev1.ServiceAccount:
			sa = o
		}
	}
	if d == nil || svc == nil || sa == nil {
		t.Fatal("want a Deployment, a Service and a ServiceAccount")
	}
	pod := d.Spec.Template.Spec
	if pod.ServiceAccountName != sa.Name {
		t.Errorf("the Deployment runs as %q, not %q", pod.ServiceAccountName, sa.Name)
	}
	if psc := pod.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext %+v: want runAsNonRoot and seccomp RuntimeDefault", psc)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
		t.Errorf("container securityContext %+v: want readOnlyRootFilesystem, no privilege escalation, drop ALL", sc)
	}
	// serve's default is loopback, which no one reaches in a pod; /report is on, for callers
	// with the rights (--report-auth kubernetes, the default: never none off loopback).
	if !slices.Contains(c.Args, "serve") || !slices.Contains(c.Args, "--all-namespaces") || !slices.Contains(c.Args, "--report") ||
		strings.Join(c.Args, " ") != "serve --all-namespaces --listen :8080 --report" {
		t.Errorf("args %v: want serve --all-namespaces --listen :8080 --report", c.Args)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" ||
		c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("probes %+v %+v: want readiness on /readyz and liveness on /healthz", c.ReadinessProbe, c.LivenessProbe)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 8080 || c.Ports[0].Name != "http" {
		t.Errorf("ports %+v: want http on 8080, where --listen :8080 listens", c.Ports)
	}
	if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() || c.Resources.Requests.Cpu().IsZero() {
		t.Errorf("resources %+v: want memory request and limit and a CPU request", c.Resources)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.StrVal != "http" || svc.Spec.Selector["app.kubernetes.io/name"] != d.Spec.Selector.MatchLabels["app.kubernetes.io/name"] {
		t.Errorf("the Service %+v does not front the Deployment's http port", svc.Spec)
	}
}

// The NetworkPolicy selects the server's pods and lets in nothing but listed peers on its port.
func TestManifestsFenceTheServer(t *testing.T) {
	var d *appsv1.Deployment
	var np *networkingv1.NetworkPolicy
	for _, o := range manifests(t) {
		switch o := o.(type) {
		case *appsv1.Deployment:
			d = o
		case *networkingv1.NetworkPolicy:
			np = o
		}
	}
	if d == nil || np == nil {
		t.Fatal("want a Deployment and a NetworkPolicy")
	}
	for k, v := range np.Spec.PodSelector.MatchLabels {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("the NetworkPolicy selects %s=%s, which the server's pods do not carry", k, v)
		}
	}
	if np.Namespace != d.Namespace || !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) || len(np.Spec.Ingress) == 0 {
		t.Fatalf("the NetworkPolicy %+v does not fence the server's ingress", np.Spec)
	}
	for _, rule := range np.Spec.Ingress {
		if len(rule.From) == 0 || len(rule.Ports) != 1 || rule.Ports[0].Port == nil || rule.Ports[0].Port.StrVal != "http" {
			t.Errorf("ingress rule %+v: want listed peers, on the http port only", rule)
		}
		for _, peer := range rule.From {
			if peer.PodSelector == nil || len(peer.PodSelector.MatchLabels) == 0 || peer.IPBlock != nil {
				t.Errorf("peer %+v: want pods picked by their labels", peer)
			}
		}
	}
}

func stripComments(doc []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			out = append(out, line...)
			out = append(out, '\n')
		}
	}
	return out
}

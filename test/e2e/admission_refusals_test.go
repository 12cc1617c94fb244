package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodSecurityAndLimitRangeRefusals has the real API server refuse every copy: a namespace
// that enforces PodSecurity "restricted" (the PodSecurity admission plugin writes which fields
// the template must set) and a LimitRange whose minimum the requests miss (LimitRanger writes
// the resource and value, not the container). The ReplicaSet controller records the refusals
// as FailedCreate; the audit names the fields.
func TestPodSecurityAndLimitRangeRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, world())
	ctx := context.Background()
	ns, err := e.cs.CoreV1().Namespaces().Get(ctx, e.ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	if _, err := e.cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.cs.CoreV1().LimitRanges(e.ns).Create(ctx, &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "floor"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer, Min: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi")},
		}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Restricted in every respect but the ones the message will name.
	compliant := func(c *corev1.Container) {
		no, yes := false, true
		c.SecurityContext = &corev1.SecurityContext{
			AllowPrivilegeEscalation: &no, RunAsNonRoot: &yes,
			Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		}
	}
	e.create(t, deployment("escalating", ingesterImage, 1, func(c *corev1.Container) {
		compliant(c)
		c.SecurityContext.AllowPrivilegeEscalation = nil
		c.SecurityContext.Capabilities = nil
	}), false)
	e.create(t, deployment("small", ingesterImage, 1, func(c *corev1.Container) {
		compliant(c)
		c.Resources.Requests[corev1.ResourceMemory] = resource.MustParse("16Mi")
		c.Resources.Limits[corev1.ResourceMemory] = resource.MustParse("16Mi")
	}), false)

	kc := cp.AdminKubeconfig()
	ctr := "spec.template.spec.containers[0]"
	r := eventuallyAudit(t, 90*time.Second, kc, []string{"-n", e.ns},
		verdict{name: "escalating", shape: "never-starts", cause: "spec", suspect: ctr + ".securityContext.allowPrivilegeEscalation"},
		verdict{name: "small", shape: "never-starts", cause: "spec", suspect: ctr + ".resources.requests.memory"},
	)
	esc := r.find("Deployment", "escalating")
	var paths []string
	for _, s := range esc.Suspects {
		paths = append(paths, s.Path)
		if s.Rule == "pod-security" && !strings.Contains(s.Reason, `PodSecurity "restricted:latest"`) {
			t.Errorf("reason %q does not name the level", s.Reason)
		}
	}
	if !strings.Contains(strings.Join(paths, " "), ctr+".securityContext.capabilities.drop") {
		t.Errorf("escalating's suspects %v lack the capabilities the message names too", paths)
	}
	// LimitRanger names the first value it refuses, the request; the limit it did not name is
	// not claimed.
	small := r.find("Deployment", "small")
	if want := "minimum memory per Container is 32Mi, but the request is 16Mi"; !strings.Contains(small.Suspects[0].Reason, want) {
		t.Errorf("small's reason %q, want it to say %q", small.Suspects[0].Reason, want)
	}
	for _, s := range small.Suspects {
		if s.Path == ctr+".resources.limits.memory" {
			t.Errorf("small's limit is a suspect, though the server's message does not name it: %+v", s)
		}
	}
}

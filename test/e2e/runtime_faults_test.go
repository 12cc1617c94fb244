package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
)

const (
	armImage    = "registry.example.com/shop/api:2.0.0-arm64"
	cacheImage  = "registry.example.com/shop/cache:1.4.0"
	mailerImage = "registry.example.com/shop/mailer:3.1.0"
)

// TestRuntimeFaultsOnALiveCluster runs copies that exit for a reason only their own output
// names, each as the real program prints it: an entrypoint built for another architecture
// (runc 1.3's init prints the exec error and exits 255), a write that readOnlyRootFilesystem
// refuses (Go's os.PathError for EROFS), a variable the env does not set. The audit names the
// field to fix in each, and says why.
func TestRuntimeFaultsOnALiveCluster(t *testing.T) {
	t.Parallel()
	w := kubeletsim.NewWorld().
		SetImage(armImage, kubeletsim.Image{Program: kubeletsim.Program{
			ExitAfter: time.Millisecond, ExitCode: 255, ExitLogs: []string{"exec /usr/local/bin/api: exec format error"},
		}}).
		SetImage(cacheImage, kubeletsim.Image{Program: kubeletsim.Program{
			Logs:      []string{"2026/11/24 10:20:35 cache starting, data dir /var/lib/cache"},
			ExitAfter: 200 * time.Millisecond, ExitCode: 1,
			ExitLogs: []string{"2026/11/24 10:20:35 open /var/lib/cache/data.db: read-only file system"},
		}}).
		SetImage(mailerImage, kubeletsim.Image{Program: kubeletsim.Program{
			Ports: []int32{8080}, RequiredEnv: []string{"DATABASE_URL"},
			Logs: []string{`level=info msg="starting mailer" version=3.1.0`},
		}})
	e := newEnv(t, w)
	e.create(t, deployment("api", armImage, 2, nil), false)
	e.create(t, deployment("cache", cacheImage, 2, func(c *corev1.Container) {
		yes := true
		c.SecurityContext = &corev1.SecurityContext{ReadOnlyRootFilesystem: &yes}
	}), false)
	e.create(t, deployment("mailer", mailerImage, 2, func(c *corev1.Container) {
		c.Env = []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}}
	}), false)
	for _, name := range []string{"api", "cache", "mailer"} {
		e.waitPods(t, name, 2, "restarted", restarted)
	}

	// None of them ever served: whether the spec or what it meets changed cannot be told for
	// the architecture, a rule of the outside kind; the other two are the spec's own.
	want := []verdict{
		{name: "api", shape: "starts-and-dies", cause: "unknown", suspect: "spec.template.spec.containers[0].image"},
		{name: "cache", shape: "starts-and-dies", cause: "spec", suspect: "spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem"},
		{name: "mailer", shape: "starts-and-dies", cause: "spec", suspect: "spec.template.spec.containers[0].env"},
	}
	r := eventuallyAudit(t, 90*time.Second, cp.AdminKubeconfig(), []string{"-n", e.ns}, want...)
	for name, words := range map[string][]string{
		"api":    {"exec format error", "another CPU architecture than the node's amd64"},
		"cache":  {"/var/lib/cache/data.db", "readOnlyRootFilesystem"},
		"mailer": {"DATABASE_URL", "it sets LOG_LEVEL"},
	} {
		d := r.find("Deployment", name)
		if d == nil || len(d.Suspects) == 0 {
			t.Errorf("%s: no suspect", name)
			continue
		}
		for _, word := range words {
			if !strings.Contains(d.Suspects[0].Reason, word) {
				t.Errorf("%s: the first suspect's reason %q does not say %q", name, d.Suspects[0].Reason, word)
			}
		}
	}
	if d := r.find("Deployment", "mailer"); d != nil && d.Fix != "add variable DATABASE_URL to Deployment/mailer spec.template.spec.containers[0].env" {
		t.Errorf("mailer fix %q", d.Fix)
	}
}

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
)

const (
	armImage     = "registry.example.com/shop/api:2.0.0-arm64"
	cacheImage   = "registry.example.com/shop/cache:1.4.0"
	mailerImage  = "registry.example.com/shop/mailer:3.1.0"
	catalogImage = "registry.example.com/shop/catalog:5.2.0"
	ordersImage  = "registry.example.com/shop/orders:1.9.0"
	ledgerImage  = "registry.example.com/shop/ledger:0.8.0"
	migrateImage = "registry.example.com/shop/migrate:2.2.0"
)

// TestRuntimeFaultsOnALiveCluster runs copies that exit for a reason only their own output
// names, each as the real program prints it: an entrypoint built for another architecture
// (runc 1.3's init prints the exec error and exits 255), a write that readOnlyRootFilesystem
// refuses (Go's os.PathError for EROFS), a variable the env does not set, a JVM out of the heap
// its -Xmx allows, a database refusing the password (pgx's error), a non-root user writing a
// host path without fsGroup, a one-shot command that completes. The audit names the field to
// fix in each, and says why.
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
	w.SetImage(catalogImage, kubeletsim.Image{Program: kubeletsim.Program{
		Logs:      []string{"2026-11-24 10:20:35.120  INFO 1 --- [main] c.s.Catalog : loading 2,400,000 products"},
		ExitAfter: 300 * time.Millisecond, ExitCode: 1,
		ExitLogs: []string{`Exception in thread "main" java.lang.OutOfMemoryError: Java heap space`, "\tat com.shop.Catalog.load(Catalog.java:42)"},
	}}).
		SetImage(ordersImage, kubeletsim.Image{Program: kubeletsim.Program{
			ExitAfter: 200 * time.Millisecond, ExitCode: 1,
			ExitLogs: []string{`level=fatal msg="connect to database" error="failed to connect to ` + "`user=orders database=orders`" + `: 10.96.41.7:5432 (orders-db.shop.svc): failed SASL auth: FATAL: password authentication failed for user \"orders\" (SQLSTATE 28P01)"`},
		}}).
		SetImage(ledgerImage, kubeletsim.Image{Program: kubeletsim.Program{
			ExitAfter: 200 * time.Millisecond, ExitCode: 1,
			ExitLogs: []string{`level=fatal msg="open ledger" error="open /data/ledger.db: permission denied"`},
		}})
	w.SetImage(migrateImage, kubeletsim.Image{Program: kubeletsim.Program{
		Logs: []string{"applied 3 migrations"}, ExitAfter: 200 * time.Millisecond, ExitCode: 0,
	}})
	e := newEnv(t, w)
	if _, err := e.cs.CoreV1().Secrets(e.ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "orders-db"}, StringData: map[string]string{"password": "rotated-elsewhere"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.create(t, deployment("catalog", catalogImage, 1, func(c *corev1.Container) {
		c.Env = []corev1.EnvVar{{Name: "JAVA_OPTS", Value: "-Xms32m -Xmx64m"}}
	}), false)
	e.create(t, deployment("orders", ordersImage, 1, func(c *corev1.Container) {
		c.Env = []corev1.EnvVar{
			{Name: "DB_HOST", Value: "orders-db.shop.svc"},
			{Name: "DB_USER", Value: "orders"},
			{Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "orders-db"}, Key: "password",
			}}},
		}
	}), false)
	ledger := deployment("ledger", ledgerImage, 1, func(c *corev1.Container) {
		c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	})
	uid := int64(1000)
	ledger.Spec.Template.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: &uid}
	ledger.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: "/srv/ledger"},
	}}}
	e.create(t, ledger, false)
	// A migration run as a Deployment: it completes, and the controller starts it again.
	e.create(t, deployment("migrate", migrateImage, 1, func(c *corev1.Container) {
		c.Command = []string{"/app/migrate", "up"}
	}), false)
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
	for _, name := range []string{"catalog", "orders", "ledger", "migrate"} {
		e.waitPods(t, name, 1, "restarted", restarted)
	}

	// None of them ever served: whether the spec or what it meets changed cannot be told for
	// the architecture, a rule of the outside kind; the other two are the spec's own.
	want := []verdict{
		{name: "api", shape: "starts-and-dies", cause: "unknown", suspect: "spec.template.spec.containers[0].image"},
		{name: "cache", shape: "starts-and-dies", cause: "spec", suspect: "spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem"},
		{name: "mailer", shape: "starts-and-dies", cause: "spec", suspect: "spec.template.spec.containers[0].env"},
		{name: "catalog", shape: "starts-and-dies", cause: "unknown", suspect: "spec.template.spec.containers[0].env[0].value"},
		{name: "orders", shape: "starts-and-dies", cause: "unknown", suspect: "spec.template.spec.containers[0].env[2].valueFrom.secretKeyRef.key"},
		{name: "ledger", shape: "starts-and-dies", cause: "spec", suspect: "spec.template.spec.securityContext.fsGroup"},
		{name: "migrate", shape: "starts-and-dies", cause: "spec", suspect: "spec.template.spec.containers[0].command"},
	}
	r := eventuallyAudit(t, 90*time.Second, cp.AdminKubeconfig(), []string{"-n", e.ns}, want...)
	for name, words := range map[string][]string{
		"api":     {"exec format error", "another CPU architecture than the node's amd64"},
		"cache":   {"/var/lib/cache/data.db", "readOnlyRootFilesystem"},
		"mailer":  {"DATABASE_URL", "it sets LOG_LEVEL"},
		"catalog": {"Java heap space", "-Xmx64m caps it"},
		"orders":  {"password authentication failed", "key password of Secret orders-db"},
		"ledger":  {"runs as 1000", "/data/ledger.db", "hostPath /srv/ledger", "no fsGroup"},
		"migrate": {"Completed, exit code 0", "/app/migrate up runs to completion"},
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

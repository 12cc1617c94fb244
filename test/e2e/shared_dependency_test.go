package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
)

// TestSharedDependencyOnALiveCluster: three apps of different runtimes crash on one database
// Service that has no copy behind it, each naming it its own way (its short name in logfmt,
// its full DNS name in JSON, its cluster IP in Node's words); a fourth fails on another host.
// The audit names the Service once as the shared dependency of the three, calls each a
// victim with cause dependency, and leaves the fourth out.
func TestSharedDependencyOnALiveCluster(t *testing.T) {
	t.Parallel()
	const (
		goImage   = "registry.example.com/shop/orders-api:4.2.0"
		javaImage = "registry.example.com/shop/payments:7.0.1"
		nodeImage = "registry.example.com/shop/cart:2.3.0"
		lone      = "registry.example.com/shop/search:1.1.0"
	)
	w := kubeletsim.NewWorld()
	e := newEnv(t, w)
	ctx := context.Background()
	svc, err := e.cs.CoreV1().Services(e.ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "mysql"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "mysql"},
			Ports:    []corev1.ServicePort{{Name: "mysql", Port: 3306, TargetPort: intstr.FromInt32(3306)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fqdn := "mysql." + e.ns + ".svc.cluster.local"
	crash := func(line string) kubeletsim.Image {
		return kubeletsim.Image{Program: kubeletsim.Program{ExitAfter: 200 * time.Millisecond, ExitCode: 1, ExitLogs: []string{line}}}
	}
	w.SetImage(goImage, crash(`level=error msg="db ping failed" err="dial tcp mysql:3306: connect: connection refused"`)).
		SetImage(javaImage, crash(fmt.Sprintf(`{"@timestamp":"2026-11-24T10:20:35.120Z","level":"ERROR","logger_name":"com.shop.payments.Db","message":"pool init failed: dial tcp %s:3306: connect: connection refused"}`, fqdn))).
		SetImage(nodeImage, crash(fmt.Sprintf("Error: connect ECONNREFUSED %s:3306", svc.Spec.ClusterIP))).
		SetImage(lone, crash(`level=error msg="index unavailable" err="dial tcp elasticsearch:9200: connect: connection refused"`))
	for _, d := range []struct{ name, image, variable, value string }{
		{"orders-api", goImage, "DB_ADDR", "mysql:3306"},
		{"payments", javaImage, "DATABASE_URL", "mysql://payments@" + fqdn + ":3306/payments"},
		{"cart", nodeImage, "DB_HOST", "mysql"},
		{"search", lone, "ES_URL", "http://elasticsearch:9200"},
	} {
		e.create(t, deployment(d.name, d.image, 1, func(c *corev1.Container) {
			c.Env = []corev1.EnvVar{{Name: d.variable, Value: d.value}}
		}), false)
	}
	for _, name := range []string{"orders-api", "payments", "cart", "search"} {
		e.waitPods(t, name, 1, "restarted", restarted)
	}
	r := eventuallyAudit(t, 90*time.Second, cp.AdminKubeconfig(), []string{"-n", e.ns},
		verdict{name: "orders-api", shape: "starts-and-dies", cause: "dependency"},
		verdict{name: "payments", shape: "starts-and-dies", cause: "dependency"},
		verdict{name: "cart", shape: "starts-and-dies", cause: "dependency"},
		verdict{name: "search", shape: "starts-and-dies"},
	)
	if len(r.SharedDependencies) != 1 {
		t.Fatalf("shared dependencies = %+v, want one", r.SharedDependencies)
	}
	sd := r.SharedDependencies[0]
	want := []string{"Deployment/" + e.ns + "/cart", "Deployment/" + e.ns + "/orders-api", "Deployment/" + e.ns + "/payments"}
	if sd.Target != "mysql:3306" || sd.Object != "Service/mysql" || sd.Namespace != e.ns || !slices.Equal(sd.Workloads, want) || sd.Failure == "" {
		t.Errorf("shared dependency = %+v, want mysql:3306 Service/mysql in %s with %v", sd, e.ns, want)
	}
	if s := r.find("Deployment", "search"); s == nil || s.Cause == "dependency" {
		t.Errorf("search, failing alone on another host, is called a victim: %v", s)
	}
}

// TestSharedRegistryOnALiveCluster: the copies of two new apps cannot pull from a registry whose
// name does not resolve; a third app, on a registry that answers, names a tag it does not have,
// and a fourth names a private repository without a pull secret. The audit names the registry
// once as the shared dependency of the two, with cause dependency for each (alone, a new app's
// unreachable registry leaves its cause unknown), and leaves the two whose references are at
// fault out.
func TestSharedRegistryOnALiveCluster(t *testing.T) {
	t.Parallel()
	const (
		down1   = "registry.down.example/shop/orders-api:4.2.0"
		down2   = "registry.down.example/shop/payments:7.0.1"
		missing = "registry.example.com/shop/search:1.1.9"
		private = "registry.example.com/private/ledger:2.0.0"
	)
	w := kubeletsim.NewWorld()
	w.SetRegistryDown("registry.down.example", true).
		SetImage("registry.example.com/shop/search:1.1.0", kubeletsim.Image{}).
		SetImage(private, kubeletsim.Image{Private: true})
	e := newEnv(t, w)
	for _, d := range []struct{ name, image string }{
		{"orders-api", down1}, {"payments", down2}, {"search", missing}, {"ledger", private},
	} {
		e.create(t, deployment(d.name, d.image, 1, nil), false)
	}
	r := eventuallyAudit(t, 90*time.Second, cp.AdminKubeconfig(), []string{"-n", e.ns},
		verdict{name: "orders-api", shape: "never-starts", cause: "dependency"},
		verdict{name: "payments", shape: "never-starts", cause: "dependency"},
		verdict{name: "search", shape: "never-starts", cause: "spec"},
		verdict{name: "ledger", shape: "never-starts", cause: "spec"},
	)
	if len(r.SharedDependencies) != 1 {
		t.Fatalf("shared dependencies = %+v, want one", r.SharedDependencies)
	}
	sd := r.SharedDependencies[0]
	want := []string{"Deployment/" + e.ns + "/orders-api", "Deployment/" + e.ns + "/payments"}
	if sd.Target != "registry.down.example" || !sd.Pull || sd.Object != "" || !slices.Equal(sd.Workloads, want) || sd.Failure == "" {
		t.Errorf("shared dependency = %+v, want the registry registry.down.example (pull) with %v", sd, want)
	}
}

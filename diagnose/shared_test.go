package diagnose

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
)

// failingOn adds a Deployment of one revision, three days old, whose two copies crash-loop
// logging lines; env replaces its container's variables.
func (c *cluster) failingOn(name string, env []corev1.EnvVar, lines ...string) *appsv1.Deployment {
	d := c.deployment(name, 2, 1, reasonNewRSAvailable, 72*time.Hour)
	d.Spec.Template.Spec.Containers[0].Env = env
	rs := c.replicaSet(d, 1, 2, 72*time.Hour, nil)
	for _, sfx := range []string{"x1a2b", "y3c4d"} {
		p := c.pod(rs, sfx, 72*time.Hour, crashLooping("Error", 1, 14))
		c.logs(p, lines...)
	}
	return d
}

// movedTo adds a Deployment whose revision 2, rolled out ten minutes ago, changed env
// variable name from was to now, and whose copies crash-loop logging lines.
func (c *cluster) movedTo(name, variable, was, now string, lines ...string) *appsv1.Deployment {
	d := c.deployment(name, 2, 2, reasonNewRSAvailable, 72*time.Hour)
	d.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: variable, Value: now}}
	c.replicaSet(d, 1, 0, 72*time.Hour, func(t *corev1.PodTemplateSpec) {
		t.Spec.Containers[0].Env = []corev1.EnvVar{{Name: variable, Value: was}}
	})
	rs := c.replicaSet(d, 2, 2, 10*time.Minute, nil)
	for _, sfx := range []string{"x1a2b", "y3c4d"} {
		p := c.pod(rs, sfx, 10*time.Minute, crashLooping("Error", 1, 5))
		c.logs(p, lines...)
	}
	return d
}

// pullFailing adds a Deployment of one revision, new, whose two copies cannot pull image: the
// kubelet's Failed event (image_manager.go: `Failed to pull image "IMG": ERR`, the same in v1.31
// and v1.37) and an ImagePullBackOff waiting state, whose message carries ERR since v1.37
// (`Back-off pulling image "IMG": ErrImagePull: ERR`) and only the first part in v1.31. ERR
// is the runtime's (containerd's) words.
func (c *cluster) pullFailing(name, image, runtimeErr string, v131 bool) *appsv1.Deployment {
	d := c.deployment(name, 2, 1, reasonReplicaSetUpdated, 6*time.Minute)
	d.Spec.Template.Spec.Containers[0].Image = image
	rs := c.replicaSet(d, 1, 2, 6*time.Minute, nil)
	backOff := fmt.Sprintf("Back-off pulling image %q", image)
	if !v131 {
		backOff += ": ErrImagePull: " + runtimeErr
	}
	for _, sfx := range []string{"x1a2b", "y3c4d"} {
		p := c.pod(rs, sfx, 6*time.Minute, waiting("ImagePullBackOff", backOff))
		c.event("Pod", p.Name, p.UID, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %s", image, runtimeErr), 5, 30*time.Second)
	}
	return d
}

// movedImage adds a Deployment whose revision 2, rolled out ten minutes ago, moved its image
// from was to now; its new copy cannot pull now, and the two copies of revision 1 still serve.
func (c *cluster) movedImage(name, was, now, runtimeErr string) *appsv1.Deployment {
	d := c.deployment(name, 2, 2, reasonReplicaSetUpdated, 72*time.Hour)
	d.Spec.Template.Spec.Containers[0].Image = now
	old := c.replicaSet(d, 1, 2, 72*time.Hour, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = was })
	for _, sfx := range []string{"x1a2b", "y3c4d"} {
		c.pod(old, sfx, 72*time.Hour, running(true))
	}
	rs := c.replicaSet(d, 2, 1, 10*time.Minute, nil)
	p := c.pod(rs, "z5e6f", 10*time.Minute, waiting("ImagePullBackOff", fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %s", now, runtimeErr)))
	c.event("Pod", p.Name, p.UID, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %s", now, runtimeErr), 5, 30*time.Second)
	return d
}

// unpullable is containerd's error for an image it cannot resolve, wrapping why.
func unpullable(image, why string) string {
	return fmt.Sprintf("failed to pull and unpack image %q: failed to resolve reference %q: %s", image, image, why)
}

func (c *cluster) statefulSet(name, serviceName string) *appsv1.StatefulSet {
	st := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS, UID: c.nextUID(), CreationTimestamp: ago(30 * 24 * time.Hour)},
		Spec: appsv1.StatefulSetSpec{
			Replicas: int32p(0), Template: basicTemplate(name), ServiceName: serviceName,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
		},
	}
	c.s.StatefulSets = append(c.s.StatefulSets, st)
	return st
}

func env(kv ...string) []corev1.EnvVar {
	var out []corev1.EnvVar
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, corev1.EnvVar{Name: kv[i], Value: kv[i+1]})
	}
	return out
}

// sharedReport is what the tests read of a report: each shared dependency, and for each
// workload whether it carries the SharedDependency evidence and its cause.
type sharedMember struct {
	shared bool
	cause  Cause
}

func sharedOf(r *Report) map[string]sharedMember {
	out := map[string]sharedMember{}
	for _, d := range r.Workloads {
		m := sharedMember{cause: d.Cause}
		for _, e := range d.Evidence {
			if e.Kind == EvidenceSharedDependency {
				m.shared = true
			}
		}
		out[d.Kind+"/"+d.Name] = m
	}
	return out
}

// TestSharedDependency: broken workloads whose failures dial one target are grouped once,
// whatever the app, the log format, the failure and the spelling of the target; workloads
// failing on different targets, a workload alone, and a workload whose own revision moved it
// to the target are not.
func TestSharedDependency(t *testing.T) {
	type group struct {
		target, object, namespace string
		workloads                 []string
	}
	tests := []struct {
		name  string
		build func(c *cluster)
		want  []group
		// victims are the members, whose unknown cause becomes dependency; others must not
		// carry the SharedDependency evidence.
		victims, others []string
		// spec are members whose own history argues cause spec: they keep it.
		spec []string
		// pull: the groups are of copies that cannot pull their images.
		pull bool
	}{
		{
			name: "connection refused to one Service written three ways, logfmt, JSON and a Java trace",
			build: func(c *cluster) {
				c.service("mysql", "mysql")
				c.failingOn("orders", env("DB_ADDR", "mysql:3306"),
					`time=2026-11-24T11:58:00Z level=error msg="db ping failed" err="dial tcp mysql:3306: connect: connection refused"`)
				c.failingOn("payments", env("DATABASE_URL", "mysql://app@mysql.shop.svc.cluster.local:3306/payments"),
					`{"ts":"2026-11-24T11:58:01Z","level":"error","msg":"cannot open pool","error":"dial tcp mysql.shop.svc.cluster.local:3306: connect: connection refused"}`)
				c.failingOn("cart", env("DB_HOST", "mysql"),
					`Exception in thread "main" java.net.ConnectException: Connection refused (mysql.shop:3306)`,
					"\tat java.base/sun.nio.ch.Net.connect0(Native Method)")
			},
			want:    []group{{"mysql:3306", "Service/mysql", testNS, []string{"Deployment/shop/cart", "Deployment/shop/orders", "Deployment/shop/payments"}}},
			victims: []string{"Deployment/cart", "Deployment/orders", "Deployment/payments"},
		},
		{
			name: "no such host for a StatefulSet's headless name, Go's lookup and Node's getaddrinfo",
			build: func(c *cluster) {
				c.statefulSet("redis", "redis")
				c.failingOn("sessions", env("REDIS_ADDR", "redis:6379"),
					`level=error ts=2026-11-24T11:58:02Z caller=store.go:41 msg="cache unavailable" err="dial tcp: lookup redis on 10.96.0.10:53: no such host"`)
				c.failingOn("catalog", env("REDIS_URL", "redis://redis.shop.svc.cluster.local:6379/0"),
					`Error: getaddrinfo ENOTFOUND redis.shop.svc.cluster.local`,
					`    at GetAddrInfoReqWrap.onlookup [as oncomplete] (node:dns:107:26)`)
				c.failingOn("search", nil, `2026-11-24 11:58:05,120 INFO search: ready on :8080`)
			},
			want:    []group{{"redis", "StatefulSet/redis", testNS, []string{"Deployment/shop/catalog", "Deployment/shop/sessions"}}},
			victims: []string{"Deployment/catalog", "Deployment/sessions"},
			others:  []string{"Deployment/search"},
		},
		{
			name: "timeouts to one outside host, a Python trace and a Go client in JSON",
			build: func(c *cluster) {
				c.failingOn("rates", env("PARTNER_URL", "https://api.partner.example.com/v1"),
					`requests.exceptions.ConnectTimeout: HTTPSConnectionPool(host='api.partner.example.com', port=443): Max retries exceeded with url: /v1/rates (Caused by ConnectTimeoutError(<urllib3.connection.HTTPSConnection object at 0x7f>, 'Connection to api.partner.example.com timed out. (connect timeout=5)'))`)
				c.failingOn("quotes", nil,
					`{"level":"error","time":"2026-11-24T11:58:03Z","msg":"refresh failed","error":"Get \"https://api.partner.example.com/v1/quotes\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"}`)
			},
			want:    []group{{"api.partner.example.com", "", "", []string{"Deployment/shop/quotes", "Deployment/shop/rates"}}},
			victims: []string{"Deployment/quotes", "Deployment/rates"},
		},
		{
			name: "too many connections names no host: the one endpoint of each spec, of the server the failure names",
			build: func(c *cluster) {
				c.service("mysql", "mysql")
				c.failingOn("ledger", env("JDBC_URL", "jdbc:mysql://mysql.shop:3306/ledger", "REDIS_ADDR", "redis:6379"),
					`com.mysql.cj.jdbc.exceptions.MySQLNonTransientConnectionException: Data source rejected establishment of connection,  message from server: "Too many connections"`)
				c.failingOn("invoices", env("DB_HOST", "mysql", "DB_PORT", "3306"),
					`PHP Fatal error:  Uncaught PDOException: SQLSTATE[HY000] [1040] Too many connections in /var/www/html/db.php:12`)
			},
			want:    []group{{"mysql", "Service/mysql", testNS, []string{"Deployment/shop/invoices", "Deployment/shop/ledger"}}},
			victims: []string{"Deployment/invoices", "Deployment/ledger"},
		},
		{
			name: "a StatefulSet's copies through its headless Service are that Service, EAI_AGAIN and a Go timeout",
			build: func(c *cluster) {
				c.service("kafka-headless", "kafka")
				c.statefulSet("kafka", "kafka-headless")
				c.failingOn("ingest", env("BROKERS", "kafka-0.kafka-headless:9092,kafka-1.kafka-headless:9092"),
					`Error: getaddrinfo EAI_AGAIN kafka-0.kafka-headless`)
				c.failingOn("audit", env("KAFKA_BROKERS", "kafka-1.kafka-headless.shop.svc.cluster.local:9092"),
					`{"level":"warn","msg":"broker unreachable, retrying","err":"dial tcp: lookup kafka-1.kafka-headless.shop.svc.cluster.local: i/o timeout"}`)
			},
			want:    []group{{"kafka-headless", "Service/kafka-headless", testNS, []string{"Deployment/shop/audit", "Deployment/shop/ingest"}}},
			victims: []string{"Deployment/audit", "Deployment/ingest"},
		},
		{
			name: "two workloads failing on different hosts are not grouped",
			build: func(c *cluster) {
				c.service("mysql", "mysql")
				c.service("redis", "redis")
				c.failingOn("orders", env("DB_ADDR", "mysql:3306"),
					`level=error msg="db ping failed" err="dial tcp mysql:3306: connect: connection refused"`)
				c.failingOn("sessions", env("REDIS_ADDR", "redis:6379"),
					`level=error msg="cache unavailable" err="dial tcp redis:6379: connect: connection refused"`)
			},
			others: []string{"Deployment/orders", "Deployment/sessions"},
		},
		{
			name: "one workload alone is not a shared dependency",
			build: func(c *cluster) {
				c.service("mysql", "mysql")
				c.failingOn("orders", env("DB_ADDR", "mysql:3306"),
					`level=error msg="db ping failed" err="dial tcp mysql:3306: connect: connection refused"`)
			},
			others: []string{"Deployment/orders"},
		},
		{
			name: "one Service name in two namespaces' spelling is two targets",
			build: func(c *cluster) {
				c.service("mysql", "mysql")
				c.failingOn("orders", env("DB_ADDR", "mysql:3306"),
					`level=error msg="db ping failed" err="dial tcp mysql:3306: connect: connection refused"`)
				c.failingOn("reports", env("DB_ADDR", "mysql.analytics.svc.cluster.local:3306"),
					`level=error msg="db ping failed" err="dial tcp mysql.analytics.svc.cluster.local:3306: connect: connection refused"`)
			},
			others: []string{"Deployment/orders", "Deployment/reports"},
		},
		{
			name: "a workload whose revision moved it to the failing address is no victim",
			build: func(c *cluster) {
				c.service("mysql", "mysql")
				c.failingOn("orders", env("DB_ADDR", "mysql:3306"),
					`level=error msg="db ping failed" err="dial tcp mysql:3306: connect: connection refused"`)
				c.failingOn("payments", env("DB_ADDR", "mysql.shop:3306"),
					`{"level":"error","msg":"cannot open pool","error":"dial tcp mysql.shop:3306: connect: connection refused"}`)
				c.movedTo("billing", "DB_ADDR", "mysql-legacy:3306", "mysql:3306",
					`level=error msg="db ping failed" err="dial tcp mysql:3306: connect: connection refused"`)
			},
			want:    []group{{"mysql:3306", "Service/mysql", testNS, []string{"Deployment/shop/orders", "Deployment/shop/payments"}}},
			victims: []string{"Deployment/orders", "Deployment/payments"},
			others:  []string{"Deployment/billing"},
		},
		{
			name: "a workload whose revision changed something else is a member; its own cause stays",
			build: func(c *cluster) {
				c.service("mysql", "mysql")
				c.failingOn("orders", env("DB_ADDR", "mysql:3306"),
					`level=error msg="db ping failed" err="dial tcp mysql:3306: connect: connection refused"`)
				c.movedTo("billing", "LOG_LEVEL", "info", "debug",
					`level=error msg="db ping failed" err="dial tcp mysql:3306: connect: connection refused"`)
			},
			want:    []group{{"mysql:3306", "Service/mysql", testNS, []string{"Deployment/shop/billing", "Deployment/shop/orders"}}},
			victims: []string{"Deployment/orders"},
			spec:    []string{"Deployment/billing"},
		},
		{
			name: "one host, two ports: mysql:3306 and mysql:33060 fail apart; a name that does not resolve joins the one port",
			build: func(c *cluster) {
				c.service("mysql", "mysql")
				c.failingOn("orders", env("DB_ADDR", "mysql:3306"),
					`level=error msg="db ping failed" err="dial tcp mysql:3306: connect: connection refused"`)
				c.failingOn("payments", env("DB_ADDR", "mysql:3306"),
					`{"level":"error","msg":"cannot open pool","error":"dial tcp mysql.shop:3306: connect: connection refused"}`)
				c.failingOn("xdevapi", env("MYSQLX_URL", "mysqlx://app@mysql:33060/docs"),
					`Error: connect ECONNREFUSED mysql:33060`)
				c.failingOn("docs", env("MYSQLX_ADDR", "mysql:33060"),
					`level=error msg="x protocol session failed" err="dial tcp mysql:33060: connect: connection refused"`)
				c.failingOn("lone", env("MYSQLX_ADDR", "mysql.shop.svc:33061"),
					`level=error msg="x protocol session failed" err="dial tcp mysql.shop.svc:33061: connect: connection refused"`)
			},
			want: []group{
				{"mysql:3306", "Service/mysql", testNS, []string{"Deployment/shop/orders", "Deployment/shop/payments"}},
				{"mysql:33060", "Service/mysql", testNS, []string{"Deployment/shop/docs", "Deployment/shop/xdevapi"}},
			},
			victims: []string{"Deployment/orders", "Deployment/payments", "Deployment/docs", "Deployment/xdevapi"},
			others:  []string{"Deployment/lone"},
		},
		{
			name: "a host that does not resolve, named without a port, groups with the workloads of its one port",
			build: func(c *cluster) {
				c.failingOn("rates", env("PARTNER_ADDR", "api.partner.example.com:8443"),
					`level=error msg="refresh failed" err="Get \"https://api.partner.example.com:8443/v1/rates\": dial tcp 203.0.113.9:8443: connect: connection refused"`)
				c.failingOn("quotes", nil,
					`{"level":"error","msg":"refresh failed","error":"dial tcp: lookup api.partner.example.com on 10.96.0.10:53: no such host"}`)
			},
			want:    []group{{"api.partner.example.com", "", "", []string{"Deployment/shop/quotes", "Deployment/shop/rates"}}},
			victims: []string{"Deployment/quotes", "Deployment/rates"},
		},
		{
			name: "copies of three workloads cannot pull from one registry: no such host, refused, 503, in v1.31 and v1.37 wording",
			build: func(c *cluster) {
				img := "registry.internal/shop/cart:4.2.0"
				c.pullFailing("cart", img, unpullable(img, `failed to do request: Head "https://registry.internal/v2/shop/cart/manifests/4.2.0": dial tcp: lookup registry.internal on 10.96.0.10:53: no such host`), true)
				img = "registry.internal/shop/orders:1.9.3"
				c.pullFailing("orders", img, unpullable(img, `failed to do request: Head "https://registry.internal/v2/shop/orders/manifests/1.9.3": dial tcp 10.20.0.15:443: connect: connection refused`), false)
				img = "registry.internal/shop/search:2.0.1"
				c.pullFailing("search", img, unpullable(img, `unexpected status from HEAD request to https://registry.internal/v2/shop/search/manifests/2.0.1: 503 Service Unavailable`), false)
			},
			want:    []group{{"registry.internal", "", "", []string{"Deployment/shop/cart", "Deployment/shop/orders", "Deployment/shop/search"}}},
			victims: []string{"Deployment/cart", "Deployment/orders", "Deployment/search"},
			pull:    true,
		},
		{
			name: "a workload whose revision moved its image to the unreachable registry is no victim; a new tag on it is",
			build: func(c *cluster) {
				refused := func(img, repo, tag string) string {
					return unpullable(img, `failed to do request: Head "https://registry.internal/v2/`+repo+`/manifests/`+tag+`": dial tcp 10.20.0.15:443: connect: connection refused`)
				}
				img := "registry.internal/shop/cart:4.2.0"
				c.pullFailing("cart", img, refused(img, "shop/cart", "4.2.0"), false)
				img = "registry.internal/shop/orders:1.9.3"
				c.pullFailing("orders", img, refused(img, "shop/orders", "1.9.3"), false)
				img = "registry.internal/shop/search:2.0.1"
				c.movedImage("search", "quay.io/shop/search:2.0.1", img, refused(img, "shop/search", "2.0.1"))
				img = "registry.internal/shop/pricing:3.1.0"
				c.movedImage("pricing", "registry.internal/shop/pricing:3.0.9", img, refused(img, "shop/pricing", "3.1.0"))
			},
			want:    []group{{"registry.internal", "", "", []string{"Deployment/shop/cart", "Deployment/shop/orders", "Deployment/shop/pricing"}}},
			victims: []string{"Deployment/cart", "Deployment/orders"},
			others:  []string{"Deployment/search"},
			pull:    true,
		},
		{
			name: "an image name the registry does not have, or refuses, is no registry victim while others on the host pull",
			build: func(c *cluster) {
				img := "registry.internal/shop/catalgo:3.0.0"
				c.pullFailing("catalog", img, unpullable(img, img+": not found"), false)
				img = "registry.internal/private/ledger:1.0.0"
				c.pullFailing("ledger", img, unpullable(img, `unexpected status from HEAD request to https://registry.internal/v2/private/ledger/manifests/1.0.0: 401 Unauthorized`), true)
				img = "registry.internal/shop/cart:4.2.0"
				c.pullFailing("cart", img, unpullable(img, `failed to do request: Head "https://registry.internal/v2/shop/cart/manifests/4.2.0": dial tcp 10.20.0.15:443: i/o timeout`), false)
				d := c.deployment("storefront", 2, 1, reasonNewRSAvailable, 72*time.Hour)
				rs := c.replicaSet(d, 1, 2, 72*time.Hour, nil)
				c.pod(rs, "x1a2b", 72*time.Hour, running(true))
			},
			others: []string{"Deployment/catalog", "Deployment/ledger", "Deployment/cart", "Deployment/storefront"},
		},
		{
			name: "the moved workload and one other are no group",
			build: func(c *cluster) {
				c.service("mysql", "mysql")
				c.failingOn("orders", env("DB_ADDR", "mysql:3306"),
					`level=error msg="db ping failed" err="dial tcp mysql:3306: connect: connection refused"`)
				c.movedTo("billing", "DB_ADDR", "mysql-legacy:3306", "mysql:3306",
					`level=error msg="db ping failed" err="dial tcp mysql:3306: connect: connection refused"`)
			},
			others: []string{"Deployment/billing", "Deployment/orders"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster()
			tc.build(c)
			r := Diagnose(c.s)
			var got []group
			for _, sd := range r.SharedDependencies {
				got = append(got, group{sd.Target, sd.Object, sd.Namespace, sd.Workloads})
				if sd.Failure == "" {
					t.Errorf("shared dependency %s cites no failure", sd.Target)
				}
				if sd.Pull != tc.pull {
					t.Errorf("shared dependency %s: pull %v, want %v", sd.Target, sd.Pull, tc.pull)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("shared dependencies = %+v, want %+v", got, tc.want)
			}
			if r.SharedDependencies == nil {
				t.Error("SharedDependencies is nil, want [] when none")
			}
			alone := map[string]sharedMember{}
			for name, m := range sharedOf(r) {
				alone[name] = m
			}
			members := sharedOf(r)
			for _, v := range tc.victims {
				m, ok := members[v]
				if !ok || !m.shared || m.cause != CauseDependency {
					t.Errorf("%s: shared evidence %v, cause %q; want the evidence and cause dependency", v, m.shared, m.cause)
				}
			}
			if len(tc.want) == 1 && tc.want[0].object != "" {
				// A victim's fix looks at the dependency.
				for _, d := range r.Workloads {
					if slices.Contains(tc.victims, d.Kind+"/"+d.Name) && !strings.Contains(d.Fix, "kubectl describe "+strings.ToLower(tc.want[0].object)+" -n shop") {
						t.Errorf("%s: fix %q does not look at %s", d.Name, d.Fix, tc.want[0].object)
					}
				}
			}
			for _, o := range tc.spec {
				if m := members[o]; !m.shared || m.cause != CauseSpec {
					t.Errorf("%s: shared evidence %v, cause %q; want the evidence and its own cause spec", o, m.shared, m.cause)
				}
			}
			for _, o := range tc.others {
				m, ok := members[o]
				if !ok || m.shared {
					t.Errorf("%s: found %v, shared evidence %v; want it diagnosed without the evidence", o, ok, m.shared)
				}
			}
		})
	}
}

// TestSharedDependencyRediagnosed: a kept diagnosis is grouped again from what it said alone.
// When one of three victims recovers, the other two stay a group; when one of two recovers,
// the one left is no victim and its own cause comes back; a report equal to Diagnose's each
// time, and the earlier report is left as it was.
func TestSharedDependencyRediagnosed(t *testing.T) {
	const refused = `level=error msg="db ping failed" err="dial tcp mysql:3306: connect: connection refused"`
	build := func(names []string, recovered string) *cluster {
		c := newCluster()
		c.service("mysql", "mysql")
		for _, n := range names {
			if n == recovered {
				d := c.deployment(n, 2, 1, reasonNewRSAvailable, 72*time.Hour)
				rs := c.replicaSet(d, 1, 2, 72*time.Hour, nil)
				c.pod(rs, "x1a2b", 72*time.Hour, running(true))
				c.pod(rs, "y3c4d", 72*time.Hour, running(true))
				continue
			}
			c.failingOn(n, env("DB_ADDR", "mysql:3306"), refused)
		}
		return c
	}
	for _, tc := range []struct {
		names      []string
		recovers   string
		wantGroups int
	}{
		{[]string{"cart", "orders", "payments"}, "orders", 1},
		{[]string{"cart", "orders"}, "orders", 0},
	} {
		before := Diagnose(build(tc.names, "").s)
		if len(before.SharedDependencies) != 1 {
			t.Fatalf("%v: %d shared dependencies before, want 1", tc.names, len(before.SharedDependencies))
		}
		kept := before.Find("Deployment", testNS, "cart")
		keptCause, keptEvidence := kept.Cause, len(kept.Evidence)
		next := build(tc.names, tc.recovers).s
		got := Rediagnose(before, next, func(_, _, name string) bool { return name == tc.recovers })
		want := Diagnose(next)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v, %s recovers: the incremental report differs from a full diagnosis", tc.names, tc.recovers)
		}
		if len(got.SharedDependencies) != tc.wantGroups {
			t.Errorf("%v, %s recovers: %d shared dependencies, want %d", tc.names, tc.recovers, len(got.SharedDependencies), tc.wantGroups)
		}
		if tc.wantGroups == 0 {
			if d := got.Find("Deployment", testNS, "cart"); sharedOf(got)["Deployment/cart"].shared || d.Cause == CauseDependency {
				t.Errorf("%v: the workload left alone keeps the shared verdict (cause %s)", tc.names, d.Cause)
			}
		}
		if kept.Cause != keptCause || len(kept.Evidence) != keptEvidence || kept.Detail.beforeShared == nil {
			t.Errorf("%v: Rediagnose wrote on the earlier report", tc.names)
		}
	}
}

// TestDialedHost reads the host a failing line dials, in the wording of each runtime.
func TestDialedHost(t *testing.T) {
	own := map[string]bool{"10.244.0.5": true}
	for _, tc := range []struct{ line, host, port string }{
		{`dial tcp: lookup mysql on 10.96.0.10:53: no such host`, "mysql", ""},
		{`dial tcp: lookup mysql.shop.svc.cluster.local: i/o timeout`, "mysql.shop.svc.cluster.local", ""},
		{`dial tcp 10.96.3.4:5432: connect: connection refused`, "10.96.3.4", "5432"},
		{`Error: getaddrinfo ENOTFOUND redis`, "redis", ""},
		{`Error: getaddrinfo EAI_AGAIN kafka-0.kafka-headless`, "kafka-0.kafka-headless", ""},
		{`java.net.UnknownHostException: mysql-primary: Name or service not known`, "mysql-primary", ""},
		{`DNS lookup failed for payments-db.shop.svc.cluster.local`, "payments-db.shop.svc.cluster.local", ""},
		{`Get "http://orders.shop:8080/health": dial tcp 10.96.7.7:8080: connect: connection refused`, "orders.shop", "8080"},
		{`com.mysql.cj.jdbc.exceptions.CommunicationsException: Communications link failure`, "", ""},
		{`dial tcp 10.244.0.5:8080: connect: connection refused`, "", ""},
		{`connect ECONNREFUSED 127.0.0.1:5432`, "", ""},
		{`DNS lookup failed`, "", ""},
	} {
		host, port := dialedHost(tc.line, facts.Values(tc.line), own)
		if host != tc.host || port != tc.port {
			t.Errorf("%s: dialed %q %q, want %q %q", tc.line, host, port, tc.host, tc.port)
		}
	}
}

// TestPullHost reads the registry host a pull failure dialled, in containerd's words as the
// kubelet reports them.
func TestPullHost(t *testing.T) {
	for _, tc := range []struct{ text, host string }{
		{`failed to pull and unpack image "registry.internal/shop/cart:4.2.0": failed to resolve reference "registry.internal/shop/cart:4.2.0": failed to do request: Head "https://registry.internal/v2/shop/cart/manifests/4.2.0": dial tcp: lookup registry.internal on 10.96.0.10:53: no such host`, "registry.internal"},
		{`Back-off pulling image "harbor.corp.example:8443/apps/api:2": ErrImagePull: failed to pull and unpack image "harbor.corp.example:8443/apps/api:2": failed to resolve reference "harbor.corp.example:8443/apps/api:2": unexpected status from HEAD request to https://harbor.corp.example:8443/v2/apps/api/manifests/2: 502 Bad Gateway`, "harbor.corp.example:8443"},
		{`rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/library/nginx:1.27": failed to resolve reference "docker.io/library/nginx:1.27": failed to do request: Head "https://registry-1.docker.io/v2/library/nginx/manifests/1.27": dial tcp 54.1.2.3:443: i/o timeout`, "registry-1.docker.io"},
		{`dial tcp: lookup mirror.corp.example: i/o timeout`, "mirror.corp.example"},
		{`Back-off pulling image "registry.internal/shop/cart:4.2.0"`, ""},
	} {
		if got := pullHost(tc.text); got != tc.host {
			t.Errorf("pullHost(%.60q...) = %q, want %q", tc.text, got, tc.host)
		}
	}
}

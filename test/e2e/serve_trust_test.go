package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
)

// The credentials of the orders workload: its database URL's password and its API token.
const (
	ordersDBPassword = "Tr0ub4dor-orders-31"
	ordersAPIToken   = "otk-5521-9f3e-live"
	ordersDBImage    = "registry.sim.example/shop/orders-db-client:4.2.0"
)

// TestServeFromTheShippedManifestsToPodIdentities runs serve as deploy/kubectl-diagnose.yaml
// runs it (its ServiceAccount, ClusterRole, system:auth-delegator binding and arguments, every
// namespace, /report on) beside a workload whose database URL and token sit in its env and
// whose failing log lines quote the URL. /report is asked by pod identities, ServiceAccount
// tokens as a pod holds them: one without rights is refused, one that may list pods and get
// their logs in the workload's namespace reads that namespace alone, with every credential
// redacted. The API server's audit log shows that serve only read (get, list, watch) besides
// the TokenReviews and SubjectAccessReviews that checked the callers, and that the callers'
// tokens were never used as credentials.
func TestServeFromTheShippedManifestsToPodIdentities(t *testing.T) {
	t.Parallel()
	w := world()
	// The app dials its database at the URL in DATABASE_URL, password and all, and logs the
	// URL on every failing readiness probe, as a client with a careless error message does.
	w.SetImage(ordersDBImage, kubeletsim.Image{Program: kubeletsim.Program{
		Ports: []int32{8080}, HealthPaths: []string{"/healthz"}, UpstreamEnv: "DATABASE_URL",
		Logs:             []string{`level=info msg="orders starting" api_token=$(API_TOKEN)`},
		UpstreamErrorLog: `level=error msg="database unreachable" url=$(UPSTREAM) error="$(ERROR)"`,
	}})
	e := newEnv(t, w)
	orders := quickProbe(deployment("orders", ordersDBImage, 2, func(c *corev1.Container) {
		c.Env = []corev1.EnvVar{
			{Name: "DATABASE_URL", Value: "postgres://orders:" + ordersDBPassword + "@orders-db.internal:5432/orders"},
			{Name: "API_TOKEN", Value: ordersAPIToken},
		}
	}))
	e.create(t, orders, false)
	e.waitPods(t, "orders", 2, "running, not Ready", runningNotReady)

	serveKubeconfig := installServe(t, e)
	serveUser := "system:serviceaccount:kubectl-diagnose:kubectl-diagnose"
	readerUser, readerToken := serviceAccountToken(t, e.ns, "report-reader")
	nobodyUser, nobodyToken := serviceAccountToken(t, e.ns, "nobody")
	if err := cp.Grant(context.Background(), readerUser, e.ns, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
		{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
	}); err != nil {
		t.Fatal(err)
	}

	addr := freeAddr(t)
	args := append(shippedServeArgs(t, addr), "--kubeconfig", serveKubeconfig)
	if strings.Join(args[:4], " ") != "serve --all-namespaces --listen "+addr || !contains(args, "--report") {
		t.Fatalf("the shipped Deployment runs %v: the test expects serve -A --listen ... --report", args)
	}
	srv := startServe(t, args...)
	base := "http://" + addr
	var body string
	eventually(t, 90*time.Second, func() string {
		var code int
		code, body = httpGetAs(base+"/report", readerToken)
		if code != http.StatusOK {
			return fmt.Sprintf("/report as %s: %d %.300s; serve's log:\n%s", readerUser, code, body, srv.log())
		}
		r, err := decodeReport(body)
		if err != nil {
			return err.Error()
		}
		return (verdict{name: "orders", shape: "live-but-idle"}).check(r)
	})

	t.Run("a pod identity with the rights reads its namespace, redacted", func(t *testing.T) {
		r, err := decodeReport(body)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range r.Workloads {
			if d.Namespace != e.ns {
				t.Errorf("%s may read %s only, and was served %s/%s", readerUser, e.ns, d.Namespace, d.Name)
			}
		}
		for _, s := range []string{ordersDBPassword, ordersAPIToken} {
			if strings.Contains(body, s) {
				t.Errorf("/report serves %q", s)
			}
		}
		if !strings.Contains(body, "postgres://orders:[redacted:") {
			t.Errorf("/report does not show the database URL with its password redacted:\n%s", body)
		}
		// The same cluster read by audit --show-secrets shows the password where /report
		// redacted it: the test's data holds what it says.
		admin := diagnoseEnv(t, cp.AdminKubeconfig(), "audit", "-n", e.ns, "-o", "json", "--show-secrets")
		if !strings.Contains(admin.stdout, ordersDBPassword) {
			t.Errorf("audit --show-secrets does not show the password: the test proves nothing\n%s", admin.stdout)
		}
	})

	t.Run("a pod identity without rights, a forged token and no token are refused", func(t *testing.T) {
		for _, c := range []struct {
			who, token string
			code       int
		}{
			{nobodyUser, nobodyToken, http.StatusForbidden},
			{"a forged token", "eyJhbGciOiJSUzI1NiJ9.forged.token", http.StatusUnauthorized},
			{"no token", "", http.StatusUnauthorized},
		} {
			code, body := httpGetAs(base+"/report", c.token)
			if code != c.code || strings.Contains(body, "orders") {
				t.Errorf("/report as %s: %d %q, want %d and nothing of the report", c.who, code, body, c.code)
			}
		}
		// /metrics is for Prometheus: names and shapes, behind the NetworkPolicy, no credential.
		code, metrics := httpGetAs(base+"/metrics", "")
		if code != http.StatusOK || !strings.Contains(metrics, `name="orders"`) || strings.Contains(metrics, ordersDBPassword) {
			t.Errorf("/metrics: %d, want the orders series and no credential", code)
		}
	})

	t.Run("the audit log shows reads, and reviews of the callers, only", func(t *testing.T) {
		var entries []auditEntry
		eventually(t, 15*time.Second, func() string {
			all, err := readAuditLog(cp.AuditLogPath())
			if err != nil {
				return err.Error()
			}
			entries = entries[:0]
			reviews := map[string]bool{}
			for _, a := range all {
				if a.User.Username == serveUser {
					entries = append(entries, a)
					if a.Verb == "create" {
						reviews[a.ObjectRef.Resource] = true
					}
				}
			}
			if !reviews["tokenreviews"] || !reviews["subjectaccessreviews"] {
				return fmt.Sprintf("the audit log has no TokenReview and SubjectAccessReview of %s yet (%d requests)", serveUser, len(entries))
			}
			return ""
		})
		for _, a := range entries {
			what := fmt.Sprintf("%s %s %s (agent %q)", a.Verb, a.ObjectRef.Resource, a.RequestURI, a.UserAgent)
			// TokenReviews and SubjectAccessReviews are "create" requests the API server answers
			// and stores nothing of: the way a server asks who a caller is and what it may do.
			review := a.Verb == "create" && (a.ObjectRef.Resource == "tokenreviews" || a.ObjectRef.Resource == "subjectaccessreviews")
			if !contains(readVerbs, a.Verb) && !review {
				t.Errorf("serve wrote: %s", what)
			}
			if a.ObjectRef.Resource == "secrets" || a.ObjectRef.Resource == "configmaps" {
				t.Errorf("serve touched %s: %s", a.ObjectRef.Resource, what)
			}
		}
		all, err := readAuditLog(cp.AuditLogPath())
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range all {
			if a.User.Username == readerUser || a.User.Username == nobodyUser {
				t.Errorf("a caller's token was used against the API server: %s %s by %s", a.Verb, a.RequestURI, a.User.Username)
			}
		}
	})

	// The picture is the shipped ServiceAccount's: it could read everything it needs.
	var full report
	if code, b := httpGetAs(base+"/report", bearerOf(t, serveKubeconfig)); code == http.StatusOK {
		if err := json.Unmarshal([]byte(b), &full); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range full.Visibility {
		if v.Namespace == e.ns {
			t.Errorf("serve as the shipped ServiceAccount could not read %+v", v)
		}
	}
	if code, err := srv.signal(syscall.SIGTERM); code != 143 {
		t.Errorf("serve after SIGTERM: exit %d (%v); log:\n%s", code, err, srv.log())
	}
}

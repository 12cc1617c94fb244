package e2e

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestKubectlFlags runs the binary with the kubeconfig flags a kubectl user reaches for, against
// one namespace with a workload that never starts and a second namespace with one that is healthy.
func TestKubectlFlags(t *testing.T) {
	t.Parallel()
	e := newEnv(t, world())
	e.create(t, deployment("pull", missingImage, 1, nil), false)
	other := cp.Namespace(t)
	if _, err := e.cs.AppsV1().Deployments(other).Create(context.Background(), deployment("elsewhere", missingImage, 0, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitPods(t, "pull", 1, "failing to pull", pullFailing)
	kc := twoContexts(t, e.ns)
	pull := verdict{name: "pull", shape: "never-starts"}

	t.Run("--context selects a context other than the current one", func(t *testing.T) {
		// The current context points at a port nothing listens on: if --context were ignored the
		// run would fail, as this first one must.
		res := diagnoseCmd(t, "audit", "-o", "json", "--kubeconfig", kc, "--request-timeout", "5s")
		if res.code != 1 || !strings.Contains(res.stderr, "connection refused") {
			t.Fatalf("without --context: exit %d stderr %q; want exit 1 naming the unreachable current context", res.code, res.stderr)
		}
		r := eventuallyAudit(t, 30*time.Second, kc, []string{"--context", "good"}, pull)
		if r.Source.Context != "good" || r.Source.Server != cp.Host() {
			t.Errorf("source = %+v, want context good on %s", r.Source, cp.Host())
		}
	})

	t.Run("-n defaults to the context's namespace", func(t *testing.T) {
		r := eventuallyAudit(t, 30*time.Second, kc, []string{"--context", "good"}, pull)
		if w := r.find("Deployment", "elsewhere"); w != nil {
			t.Errorf("without -n the report holds %s/elsewhere; want only the context's namespace %s", w.Namespace, e.ns)
		}
		if w := r.find("Deployment", "pull"); w.Namespace != e.ns {
			t.Errorf("pull is in namespace %q, want %q", w.Namespace, e.ns)
		}
		r = audit(t, kc, "--context", "good", "-n", other)
		if r.find("Deployment", "pull") != nil || r.find("Deployment", "elsewhere") == nil {
			t.Errorf("-n %s: workloads %s; want elsewhere and not pull", other, verdicts(r))
		}
		r = audit(t, kc, "--context", "good", "-A")
		if r.find("Deployment", "pull") == nil || r.find("Deployment", "elsewhere") == nil {
			t.Errorf("-A: workloads %s; want both pull and elsewhere", verdicts(r))
		}
	})

	t.Run("--as reads with the permissions of the impersonated identity", func(t *testing.T) {
		blind := cp.NewIdentity(t, e.ns, readerRules(false))
		// The admin sees everything: any visibility entry below comes from --as.
		admin := eventuallyAudit(t, 30*time.Second, kc, []string{"--context", "good"}, pull)
		if len(admin.Visibility) != 0 {
			t.Fatalf("admin visibility = %+v, want none", admin.Visibility)
		}
		r := eventuallyAudit(t, 30*time.Second, kc, []string{"--context", "good", "--as", blind.User}, pull)
		// A namespaced Role grants no cluster-scoped kind: nodes and volumes are unseen too.
		if !hasVisibility(r, "Event", e.ns) || !hasVisibility(r, "Node", "") || !hasVisibility(r, "PersistentVolume", "") {
			t.Fatalf("visibility = %+v, want Event in %s, Node and PersistentVolume: %s may read none of them", r.Visibility, e.ns, blind.User)
		}
		for _, v := range r.Visibility {
			if v.Kind != "Event" && v.Kind != "Node" && v.Kind != "PersistentVolume" {
				t.Errorf("visibility %+v: %s may read everything but events, nodes and volumes", v, blind.User)
			}
			// The API server names the user it authorized: the impersonated one, not the admin.
			if !strings.Contains(v.Reason, `"`+blind.User+`"`) {
				t.Errorf("visibility reason %q does not name the impersonated user %s", v.Reason, blind.User)
			}
		}
	})
}

// twoContexts writes a kubeconfig with two contexts: "nowhere", the current one, whose server
// refuses connections, and "good", the admin of the control plane with namespace ns.
func twoContexts(t *testing.T, ns string) string {
	t.Helper()
	kc, err := clientcmd.LoadFromFile(cp.AdminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	good := kc.Contexts[kc.CurrentContext]
	if good == nil {
		t.Fatalf("admin kubeconfig has no context %q", kc.CurrentContext)
	}
	good = good.DeepCopy()
	good.Namespace = ns
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	_ = closed.Close()
	kc.Clusters["nowhere"] = &clientcmdapi.Cluster{Server: "https://" + refused, InsecureSkipTLSVerify: true}
	kc.Contexts = map[string]*clientcmdapi.Context{
		"good":    good,
		"nowhere": {Cluster: "nowhere", AuthInfo: good.AuthInfo, Namespace: ns},
	}
	kc.CurrentContext = "nowhere"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

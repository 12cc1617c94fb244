package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestFleetListsNodesOncePerIdentity audits three contexts of one API server: two namespaces
// read as one identity that may list Nodes, and one namespace as an identity that may not. The
// API server's audit log shows one list of Nodes per identity, not per context, and each
// context reports what its identity sees: the Nodes, or one line saying they are forbidden.
func TestFleetListsNodesOncePerIdentity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	one, two := cp.Namespace(t), cp.Namespace(t)
	seer := cp.NewIdentity(t, one, readerRules(true))
	if err := cp.Grant(ctx, seer.User, two, readerRules(true)); err != nil {
		t.Fatal(err)
	}
	if err := cp.Grant(ctx, seer.User, "", []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: readVerbs}}); err != nil {
		t.Fatal(err)
	}
	blind := cp.NewIdentity(t, one, readerRules(true))

	kc := clientcmdapi.NewConfig()
	for _, id := range []struct {
		name string
		file string
	}{{"seer", seer.Kubeconfig}, {"blind", blind.Kubeconfig}} {
		c, err := clientcmd.LoadFromFile(id.file)
		if err != nil {
			t.Fatal(err)
		}
		cur := c.Contexts[c.CurrentContext]
		kc.Clusters[id.name] = c.Clusters[cur.Cluster]
		kc.AuthInfos[id.name] = c.AuthInfos[cur.AuthInfo]
	}
	kc.Contexts["seer-one"] = &clientcmdapi.Context{Cluster: "seer", AuthInfo: "seer", Namespace: one}
	kc.Contexts["seer-two"] = &clientcmdapi.Context{Cluster: "seer", AuthInfo: "seer", Namespace: two}
	kc.Contexts["blind-one"] = &clientcmdapi.Context{Cluster: "blind", AuthInfo: "blind", Namespace: one}
	kc.CurrentContext = "seer-one"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}

	offset := auditLogSize(t)
	res := diagnoseEnv(t, path, "audit", "-o", "json", "--context", "seer-one,blind-one,seer-two")
	if res.code != 0 {
		t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
	}
	l := decodeReportList(t, res.stdout)
	if len(l.Items) != 3 {
		t.Fatalf("%d reports, want 3", len(l.Items))
	}
	for i, name := range []string{"seer-one", "blind-one", "seer-two"} {
		r := l.Items[i]
		var nodes []visibility
		for _, v := range r.Visibility {
			if v.Kind == "Node" {
				nodes = append(nodes, v)
			}
		}
		switch {
		case r.Source.Context != name:
			t.Errorf("report %d is of context %q, want %q", i, r.Source.Context, name)
		case strings.HasPrefix(name, "seer") && len(nodes) != 0:
			t.Errorf("%s: %+v, want the Nodes seen", name, nodes)
		case name == "blind-one" && (len(nodes) != 1 || !strings.HasPrefix(nodes[0].Reason, "forbidden: User \""+blind.User+"\" cannot list resource \"nodes\"")):
			t.Errorf("%s: %+v, want one line saying the Nodes are forbidden to %s", name, nodes, blind.User)
		}
	}
	for _, id := range []string{seer.User, blind.User} {
		// Every other kind is listed per context; waiting for them all means the log is complete.
		least := 13
		if id == seer.User {
			least = 26
		}
		lists := 0
		for _, a := range auditEntriesOf(t, id, offset, least+1) {
			if a.Stage == "ResponseComplete" && a.Verb == "list" && a.ObjectRef.Resource == "nodes" {
				lists++
			}
		}
		if lists != 1 {
			t.Errorf("%s listed Nodes %d times, want once", id, lists)
		}
	}
}

package e2e

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// reportList is the documented fleet document of `audit -o json` with several contexts.
type reportList struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Items      []report `json:"items"`
}

func decodeReportList(t *testing.T, data string) *reportList {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	var l reportList
	if err := dec.Decode(&l); err != nil {
		t.Fatalf("decode the fleet's -o json: %v\n%s", err, data)
	}
	return &l
}

// fleetContexts writes a kubeconfig whose contexts one and two are the control plane's admin
// with namespaces one and two, and dead a server that refuses connections.
func fleetContexts(t *testing.T, one, two string) string {
	t.Helper()
	kc, err := clientcmd.LoadFromFile(cp.AdminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	admin := kc.Contexts[kc.CurrentContext]
	if admin == nil {
		t.Fatalf("admin kubeconfig has no context %q", kc.CurrentContext)
	}
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	_ = closed.Close()
	kc.Clusters["dead"] = &clientcmdapi.Cluster{Server: "https://" + refused, InsecureSkipTLSVerify: true}
	withNS := func(ns string) *clientcmdapi.Context {
		c := admin.DeepCopy()
		c.Namespace = ns
		return c
	}
	kc.Contexts = map[string]*clientcmdapi.Context{
		"one":  withNS(one),
		"two":  withNS(two),
		"dead": {Cluster: "dead", AuthInfo: admin.AuthInfo, Namespace: one},
	}
	kc.CurrentContext = "dead"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFleet audits three contexts: two namespaces of one control plane, one with a workload that
// never starts and one healthy, and a context whose server is gone.
func TestFleet(t *testing.T) {
	t.Parallel()
	e := newEnv(t, world())
	e.create(t, deployment("pull", missingImage, 1, nil), false)
	two := cp.Namespace(t)
	if _, err := e.cs.AppsV1().Deployments(two).Create(context.Background(), deployment("parked", missingImage, 0, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitPods(t, "pull", 1, "failing to pull", pullFailing)
	kc := fleetContexts(t, e.ns, two)
	// The single context reads the same as ever, and sees its own namespace only.
	eventuallyAudit(t, 30*time.Second, kc, []string{"--context", "one"}, verdict{name: "pull", shape: "never-starts"})

	t.Run("json: one Report per context, in the order named; dead is one visibility line", func(t *testing.T) {
		res := diagnoseEnv(t, kc, "audit", "-o", "json", "--context", "two,dead,one", "--request-timeout", "5s")
		if res.code != 1 {
			t.Errorf("exit %d, want 1 for the dead context; stderr %q", res.code, res.stderr)
		}
		l := decodeReportList(t, res.stdout)
		if l.APIVersion != "kubediagnose.dev/v1alpha1" || l.Kind != "ReportList" || len(l.Items) != 3 {
			t.Fatalf("%s %s with %d items, want a ReportList of 3", l.APIVersion, l.Kind, len(l.Items))
		}
		for i, want := range []string{"two", "dead", "one"} {
			if got := l.Items[i].Source.Context; got != want {
				t.Errorf("item %d is context %q, want %q", i, got, want)
			}
		}
		if w := l.Items[0].find("Deployment", "parked"); w == nil || w.Namespace != two || l.Items[0].find("Deployment", "pull") != nil {
			t.Errorf("context two: %s; want parked of namespace %s alone", verdicts(&l.Items[0]), two)
		}
		if d := (verdict{name: "pull", shape: "never-starts"}).check(&l.Items[2]); d != "" || l.Items[2].Workloads[0].Namespace != e.ns {
			t.Errorf("context one: %s", d)
		}
		dead := l.Items[1]
		if len(dead.Workloads) != 0 || len(dead.Visibility) != 1 || dead.Visibility[0].Kind != "" ||
			!strings.Contains(dead.Visibility[0].Reason, "connection refused") || dead.Source.Server == "" {
			t.Errorf("context dead: %+v; want no workload and one visibility line naming the refusal", dead)
		}
		lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "warning: context dead: cannot reach the API server at ") ||
			lines[1] != "error: could not read 1 of 3 contexts: dead (see the warnings above)" {
			t.Errorf("stderr:\n%s\nwant the dead context's warning and one error line", res.stderr)
		}
	})

	t.Run("table: a leading CONTEXT column, each context's rows together", func(t *testing.T) {
		res := diagnoseEnv(t, kc, "audit", "--context", "one,two")
		if res.code != 0 || res.stderr != "" {
			t.Fatalf("exit %d stderr %q, want 0 and nothing", res.code, res.stderr)
		}
		lines := strings.Split(strings.TrimRight(res.stdout, "\n"), "\n")
		if len(lines) != 3 || strings.Join(strings.Fields(lines[0])[:3], " ") != "CONTEXT SHAPE NAMESPACE" {
			t.Fatalf("table:\n%s\nwant a CONTEXT and NAMESPACE header and two rows", res.stdout)
		}
		if f := strings.Fields(lines[1]); f[0] != "one" || f[1] != "never-starts" || f[2] != e.ns || f[3] != "deployment/pull" {
			t.Errorf("first row %q, want one's never-starts pull", lines[1])
		}
		if f := strings.Fields(lines[2]); f[0] != "two" || f[2] != two || f[3] != "deployment/parked" {
			t.Errorf("second row %q, want two's parked", lines[2])
		}
	})

	t.Run("servers that never answer hold only their own contexts, at once, for --request-timeout", func(t *testing.T) {
		hang := hangingListener(t)
		cfg, err := clientcmd.LoadFromFile(kc)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Clusters["hang"] = &clientcmdapi.Cluster{Server: "https://" + hang, InsecureSkipTLSVerify: true}
		cfg.Contexts["hang"] = &clientcmdapi.Context{Cluster: "hang", AuthInfo: cfg.Contexts["one"].AuthInfo, Namespace: e.ns}
		cfg.Contexts["hang-too"] = &clientcmdapi.Context{Cluster: "hang", AuthInfo: cfg.Contexts["one"].AuthInfo, Namespace: two}
		path := filepath.Join(t.TempDir(), "kubeconfig")
		if err := clientcmd.WriteToFile(*cfg, path); err != nil {
			t.Fatal(err)
		}
		res := diagnoseEnv(t, path, "audit", "--context", "hang,one,hang-too,two", "--request-timeout", "2s")
		if res.code != 1 || !strings.Contains(res.stdout, "deployment/pull") || !strings.Contains(res.stdout, "deployment/parked") {
			t.Errorf("exit %d, stdout:\n%s\nwant one's and two's rows and exit 1", res.code, res.stdout)
		}
		if !strings.Contains(res.stderr, "warning: context hang: cannot reach the API server at "+hang) ||
			!strings.Contains(res.stderr, "warning: context hang-too: cannot reach the API server at "+hang) {
			t.Errorf("stderr %q does not name the hanging server", res.stderr)
		}
		// The contexts are read at once: the two hanging ones cost one timeout together, where
		// one after the other would take two. A second of slack covers the binary's start.
		if res.took > 3*time.Second {
			t.Errorf("took %v, want about --request-timeout 2s", res.took)
		}
	})

	t.Run("exit codes cover the whole fleet", func(t *testing.T) {
		tests := []struct {
			args []string
			code int
		}{
			{[]string{"--all-contexts", "--fail-on", "never-starts"}, 3},
			{[]string{"--context", "two,one", "--fail-on", "broken"}, 3},
			{[]string{"--context", "two,dead", "--fail-on", "broken"}, 1},
			{[]string{"--context", "one,two", "--fail-on", "starts-and-dies"}, 0},
			{[]string{"--all-contexts", "--context", "one"}, 2},
		}
		for _, tt := range tests {
			res := diagnoseEnv(t, kc, append([]string{"audit", "-o", "markdown", "--request-timeout", "5s"}, tt.args...)...)
			if res.code != tt.code {
				t.Errorf("audit %s: exit %d, want %d; stderr %q", strings.Join(tt.args, " "), res.code, tt.code, res.stderr)
			}
			if tt.code == 3 && (!strings.Contains(res.stdout, "## Context one") || !strings.Contains(res.stdout, "## Context two")) {
				t.Errorf("audit %s: the report of every context prints before exit 3:\n%s", strings.Join(tt.args, " "), res.stdout)
			}
		}
	})
}

// hangingListener accepts connections and never answers, until the test ends.
func hangingListener(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		<-done
		for _, c := range held {
			_ = c.Close()
		}
	})
	return l.Addr().String()
}

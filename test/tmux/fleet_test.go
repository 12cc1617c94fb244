package tmux

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/controlplane"
)

// The console over several contexts follows each context's watch: a Deployment created in one
// context shows with no key pressed, beside the other context's rows, while a third context,
// whose server refuses connections, is counted as failing and holds up neither.
func TestFleetConsoleFollowsEachContext(t *testing.T) {
	bin := build(t)
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	one, two := cp.Namespace(t), cp.Namespace(t)
	cs := kubernetes.NewForConfigOrDie(cp.AdminConfig())
	create := func(ns, name string) {
		t.Helper()
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create(one, "first-in-one")
	create(two, "first-in-two")

	kc, err := clientcmd.LoadFromFile(cp.AdminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	admin := kc.Contexts[kc.CurrentContext]
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
		"one": withNS(one), "two": withNS(two),
		"dead": {Cluster: "dead", AuthInfo: admin.AuthInfo, Namespace: one},
	}
	kc.CurrentContext = "one"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}

	tm := start(t, 200, 30, bin, "--kubeconfig", path, "--context", "one,two,dead", "--request-timeout", "5s")
	s := tm.waitFor("first-in-one", "first-in-two", "▲ 1 of 3 contexts failing", "context dead: cannot reach the API server")
	if strings.Contains(s, "contexts stale") {
		t.Errorf("a context that never read is called stale:\n%s", s)
	}

	// No key: the watch of context two brings the new Deployment.
	create(two, "later-in-two")
	s = tm.waitForWithin(time.Minute, "later-in-two", "first-in-one", "first-in-two")
	t.Logf("after the change in context two:\n%s", s)
	if !strings.Contains(s, "▲ 1 of 3 contexts failing") {
		t.Errorf("the dead context is no longer counted:\n%s", s)
	}

	tm.keys("q")
	if st := tm.waitExit(); st != "0" {
		t.Errorf("exit status %s after q, want 0", st)
	}
	tm.quietStderr()
}

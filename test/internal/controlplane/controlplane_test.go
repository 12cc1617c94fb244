package controlplane_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/controlplane"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(controlplane.RunTests(m, controlplane.Options{Users: []string{"named-reader"}},
		func(c *controlplane.ControlPlane) { cp = c }))
}

func TestStartWithoutAssetsNamesTheFix(t *testing.T) {
	_, err := controlplane.Start(context.Background(), controlplane.Options{AssetsDir: t.TempDir()})
	if err == nil {
		t.Fatal("Start with an empty assets dir succeeded")
	}
	if !strings.Contains(err.Error(), "make e2e-assets") || !strings.Contains(err.Error(), "kube-apiserver") {
		t.Fatalf("error does not name the missing binary and the fix: %v", err)
	}
}

func TestServerVersionIsTheBuiltRelease(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(cp.AdminConfig())
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != controlplane.KubernetesVersion {
		t.Fatalf("server version %q, want %q", v.GitVersion, controlplane.KubernetesVersion)
	}
}

func TestControllersCreateReplicaSetsAndPods(t *testing.T) {
	ns := cp.Namespace(t)
	cs := kubernetes.NewForConfigOrDie(cp.AdminConfig())
	ctx := context.Background()
	labels := map[string]string{"app": "web"}
	_, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) == 2 {
			owner := metav1.GetControllerOf(&pods.Items[0])
			if owner == nil || owner.Kind != "ReplicaSet" {
				t.Fatalf("pod owner %+v, want a ReplicaSet", owner)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("deployment controller made %d pods, want 2", len(pods.Items))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestIdentityHasOnlyItsRolePermissions(t *testing.T) {
	ns := cp.Namespace(t)
	id := cp.NewIdentity(t, ns, controlplane.ReadOnlyRules([]string{""}, "pods"))
	cs := kubernetes.NewForConfigOrDie(id.Config)
	ctx := context.Background()
	if _, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("list pods in %s as %s: %v", ns, id.User, err)
	}
	if _, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("list secrets: got %v, want forbidden", err)
	}
	if _, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("list nodes: got %v, want forbidden", err)
	}
	if _, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("list pods in another namespace: got %v, want forbidden", err)
	}
	if err := cp.Grant(ctx, id.User, "", controlplane.ReadOnlyRules([]string{""}, "nodes")); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("list nodes after Grant: %v", err)
	}

	// The kubeconfig authenticates as the same user with the Role's namespace as default.
	loaded, err := clientcmd.LoadFromFile(id.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if got := loaded.Contexts[loaded.CurrentContext].Namespace; got != ns {
		t.Fatalf("kubeconfig namespace %q, want %q", got, ns)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", id.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("list pods through the kubeconfig: %v", err)
	}
	info, err := os.Stat(id.Kubeconfig)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig mode %v (%v), want 0600", info.Mode().Perm(), err)
	}
}

func TestNamedUserStartsWithoutPermissions(t *testing.T) {
	id, err := cp.UserIdentity("named-reader", "default")
	if err != nil {
		t.Fatal(err)
	}
	_, err = kubernetes.NewForConfigOrDie(id.Config).CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("got %v, want forbidden", err)
	}
}

// auditEvent is the part of an audit.k8s.io/v1 Event the tests read.
type auditEvent struct {
	Verb      string                    `json:"verb"`
	Stage     string                    `json:"stage"`
	Level     string                    `json:"level"`
	User      struct{ Username string } `json:"user"`
	ObjectRef *struct {
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
	} `json:"objectRef"`
}

func TestAuditLogRecordsEachRequestAtMetadataLevel(t *testing.T) {
	ns := cp.Namespace(t)
	id := cp.NewIdentity(t, ns, controlplane.ReadOnlyRules([]string{""}, "configmaps"))
	cs := kubernetes.NewForConfigOrDie(id.Config)
	if _, err := cs.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(cp.AuditLogPath())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	found := false
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line is not JSON: %v", err)
		}
		if ev.User.Username != id.User {
			continue
		}
		if ev.Level != "Metadata" || ev.Stage == "RequestReceived" {
			t.Fatalf("audit event level %q stage %q, want Metadata without RequestReceived", ev.Level, ev.Stage)
		}
		if ev.Verb == "list" && ev.ObjectRef != nil && ev.ObjectRef.Resource == "configmaps" && ev.ObjectRef.Namespace == ns {
			found = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Fatalf("no list configmaps event by %s in %s", id.User, cp.AuditLogPath())
	}
}

func TestAdminKubeconfigWorks(t *testing.T) {
	cfg, err := clientcmd.BuildConfigFromFlags("", cp.AdminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Get(context.Background(), "kube-system", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(cp.AdminKubeconfig()) != cp.Dir() {
		t.Fatalf("admin kubeconfig %s outside %s", cp.AdminKubeconfig(), cp.Dir())
	}
}

func TestStopKillsProcessesAndRemovesFiles(t *testing.T) {
	own := controlplane.StartT(t, controlplane.Options{})
	dir := own.Dir()
	own.Stop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s still exists after Stop: %v", dir, err)
	}
	cs := kubernetes.NewForConfigOrDie(own.AdminConfig())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err == nil {
		t.Fatal("API server still answers after Stop")
	}
	own.Stop() // idempotent
}

func TestAPIServerRestartKeepsItsPortAndData(t *testing.T) {
	own := controlplane.StartT(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(own.AdminConfig())
	ns, err := own.CreateNamespace(ctx, "restart-")
	if err != nil {
		t.Fatal(err)
	}
	readyz := func() error {
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		_, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	}

	own.StopAPIServer()
	if err := readyz(); err == nil {
		t.Fatal("API server answers after StopAPIServer")
	}
	if err := own.Err(); err != nil {
		t.Fatalf("a stopped API server is reported as a failure: %v", err)
	}

	if err := own.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	if err := readyz(); err != nil {
		t.Fatalf("API server not ready after StartAPIServer: %v", err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
		t.Fatalf("namespace created before the restart: %v", err)
	}
	if err := own.Err(); err != nil {
		t.Fatal(err)
	}
	if err := own.StartAPIServer(ctx); err == nil {
		t.Error("StartAPIServer on a running API server did not fail")
	}
}

package tmux

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/internal/controlplane"
)

// The console on a live cluster whose API server goes away: it keeps the last snapshot on
// screen, says it is stale, and follows the cluster again once the server is back, with no key
// pressed. The control plane is this test's own, since it is stopped halfway.
func TestLiveConsoleGoesStaleAndRecovers(t *testing.T) {
	bin := build(t)
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := cp.Namespace(t)
	cs := kubernetes.NewForConfigOrDie(cp.AdminConfig())
	create := func(name string) {
		t.Helper()
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("before-outage")

	tm := start(t, 160, 30, bin, "--kubeconfig", cp.AdminKubeconfig(), "-n", ns)
	s := tm.waitFor("● live", "before-outage")
	if strings.Contains(s, "▲ stale") {
		t.Fatalf("stale before the outage:\n%s", s)
	}

	cp.StopAPIServer()
	s = tm.waitForWithin(time.Minute, "▲ stale")
	t.Logf("while the API server is away:\n%s", s)
	if !strings.Contains(s, "before-outage") {
		t.Errorf("the last snapshot left the screen when the server went away:\n%s", s)
	}

	if err := cp.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	create("after-outage")
	// The informers retry with a back-off that grew during the outage (up to 30 s).
	s = tm.waitForWithin(2*time.Minute, "● live", "before-outage", "after-outage")
	if strings.Contains(s, "▲ stale") {
		t.Errorf("still stale after recovering:\n%s", s)
	}

	tm.keys("q")
	if st := tm.waitExit(); st != "0" {
		t.Errorf("exit status %s after q, want 0", st)
	}
	// client-go logging a failed watch, say.
	tm.quietStderr()
}

func deployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "registry.example/shop/" + name + ":1.0.0",
				}}},
			},
		},
	}
}

package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func TestRunWithoutAKubeconfigSaysHow(t *testing.T) {
	if err := run(context.Background(), nil); err == nil {
		t.Fatal("run without -kubeconfig succeeded")
	}
}

// TestFixturesControlPlane starts the command as hack/fixtures/cluster.sh does, with a controller
// the e2e set leaves out (the disruption controller, which the flicker-pdb fixture needs), waits
// for the kubeconfig that says it is ready, sees that controller write a PodDisruptionBudget's
// status, and stops it as cluster.sh down does.
func TestFixturesControlPlane(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{
			"-kubeconfig", kubeconfig,
			"-controllers", "serviceaccount-controller,disruption-controller",
			"-apiserver-arg=--enable-priority-and-fairness=false",
		})
	}()

	deadline := time.After(5 * time.Minute)
	for {
		if _, err := os.Stat(kubeconfig); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the command ended before it was ready: %v", err)
		case <-deadline:
			t.Fatal("no kubeconfig after 5 minutes")
		case <-time.After(200 * time.Millisecond):
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	minAvailable := intstr.FromInt32(1)
	_, err = cs.PolicyV1().PodDisruptionBudgets("default").Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: &minAvailable,
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		pdb, err := cs.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pdb.Status.ObservedGeneration == pdb.Generation {
			break
		}
		select {
		case <-deadline:
			t.Fatal("the disruption controller never wrote the PodDisruptionBudget's status")
		case <-time.After(200 * time.Millisecond):
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("interrupted, the command returned %v, want nil", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the command did not stop within a minute of its interrupt")
	}
	if _, err := cs.Discovery().ServerVersion(); err == nil {
		t.Error("the API server still answers after the command stopped")
	}
}

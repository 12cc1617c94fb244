package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"github.com/kubediagnose/kubectl-diagnose/internal/live"
)

// TestLiveProgressCountsWhatTheServerReturned checks the console's progress feed against the
// real API server's paginated lists: each kind's last count is what the snapshot holds.
func TestLiveProgressCountsWhatTheServerReturned(t *testing.T) {
	t.Parallel()
	ns := cp.Namespace(t)
	cs := kubernetes.NewForConfigOrDie(cp.AdminConfig())
	ctx := context.Background()
	// No simulated kubelet: the controllers create the copies and they stay Pending, which is
	// all a count needs.
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment("many", missingImage, 4, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() string {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		if len(pods.Items) != 4 {
			return fmt.Sprintf("%d of 4 copies created", len(pods.Items))
		}
		return ""
	})

	kubeconfig := cp.AdminKubeconfig()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	src, err := live.New(flags, live.Options{Namespaces: []string{ns}})
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]int{}
	snap, err := src.SnapshotWithProgress(ctx, func(what string, n int) { last[what] = n })
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		"pods":        len(snap.Pods),
		"deployments": len(snap.Deployments),
		"replicasets": len(snap.ReplicaSets),
		"nodes":       len(snap.Nodes),
	}
	if want["pods"] != 4 || want["deployments"] != 1 || want["replicasets"] != 1 {
		t.Fatalf("snapshot holds %d pods, %d deployments, %d replicasets; want 4, 1, 1", want["pods"], want["deployments"], want["replicasets"])
	}
	for what, n := range want {
		if n > 0 && last[what] != n {
			t.Errorf("last %s report = %d, want %d, the number the snapshot holds", what, last[what], n)
		}
	}
}

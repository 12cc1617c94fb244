package e2e

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubediagnose/kubectl-diagnose/internal/live"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// TestLiveWatchFollowsTheCluster checks the console's feed against the real API server: the
// informers fill, and a change shows in a fresh snapshot within seconds.
func TestLiveWatchFollowsTheCluster(t *testing.T) {
	t.Parallel()
	e := newEnv(t, world())
	e.create(t, ingester("api", 2, reachableIntake), true)

	kubeconfig := cp.AdminKubeconfig()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	src, err := live.New(flags, live.Options{Namespaces: []string{e.ns}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snaps, errs := src.Watch(ctx)

	until := func(what string, cond func(*snapshot.Snapshot) bool) *snapshot.Snapshot {
		t.Helper()
		deadline := time.After(90 * time.Second)
		for {
			select {
			case s := <-snaps:
				if cond(s) {
					return s
				}
			case err := <-errs:
				t.Errorf("watch error: %v", err)
			case <-deadline:
				t.Fatalf("no snapshot with %s within 90s", what)
			}
		}
	}
	// The endpoint slice controller writes the service's slice after the copies turn ready, so a
	// snapshot can hold the ready copies before the slice: wait for both.
	s := until("both copies of api ready and the service's endpoint slice", func(s *snapshot.Snapshot) bool {
		if len(s.EndpointSlices) == 0 {
			return false
		}
		ready := 0
		for _, p := range s.Pods {
			for _, c := range p.Status.Conditions {
				if c.Type == "Ready" && c.Status == "True" {
					ready++
				}
			}
		}
		return ready == 2
	})
	for _, p := range s.Pods {
		if p.ManagedFields != nil {
			t.Errorf("pod %s kept its managedFields", p.Name)
		}
		if p.Namespace != e.ns {
			t.Errorf("pod %s/%s of another namespace", p.Namespace, p.Name)
		}
	}
	if len(s.Services) != 1 || len(s.EndpointSlices) == 0 || len(s.Nodes) == 0 || len(s.Events) == 0 {
		t.Errorf("services %d, endpoint slices %d, nodes %d, events %d; want all read",
			len(s.Services), len(s.EndpointSlices), len(s.Nodes), len(s.Events))
	}

	created := time.Now()
	if _, err := e.cs.AppsV1().Deployments(e.ns).Create(ctx, ingester("second", 1, reachableIntake), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	until("the new deployment", func(s *snapshot.Snapshot) bool {
		for _, d := range s.Deployments {
			if d.Name == "second" {
				return true
			}
		}
		return false
	})
	if took := time.Since(created); took > 10*time.Second {
		t.Errorf("the change took %v to show, want a few seconds (debounce %v)", took, live.Debounce)
	}
	cancel()
	for range snaps {
	}
}

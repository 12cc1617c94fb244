package live

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// TestSelectorsGoToTheServerForWorkloadsOnly records every list the source sends: the workload
// kinds carry -l and --field-selector, the evidence (pods, replicasets, jobs, events...) is listed whole.
func TestSelectorsGoToTheServerForWorkloadsOnly(t *testing.T) {
	sel, err := snapshot.ParseSelector("tier=web,team!=ops", "metadata.name=api")
	if err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset(deployment("shop", "api"))
	var mu sync.Mutex
	got := map[string][2]string{}
	client.PrependReactor("list", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		l := a.(k8stesting.ListActionImpl)
		mu.Lock()
		got[a.GetResource().Resource] = [2]string{l.ListOptions.LabelSelector, l.ListOptions.FieldSelector}
		mu.Unlock()
		return false, nil, nil
	})
	src := newForClient(client, Options{Namespaces: []string{"shop"}, Selector: sel}, fixedNow)
	if _, err := src.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"deployments": true, "statefulsets": true, "daemonsets": true, "cronjobs": true}
	var resources []string
	for r, opts := range got {
		resources = append(resources, r)
		switch {
		case want[r] && opts != [2]string{"tier=web,team!=ops", "metadata.name=api"}:
			t.Errorf("list %s: label %q field %q, want the selectors", r, opts[0], opts[1])
		case !want[r] && opts != [2]string{}:
			t.Errorf("list %s: label %q field %q, want none: it is evidence, not a workload", r, opts[0], opts[1])
		}
	}
	sort.Strings(resources)
	for r := range want {
		if _, ok := got[r]; !ok {
			t.Errorf("no list of %s among %v", r, resources)
		}
	}
	if _, ok := got["pods"]; !ok {
		t.Errorf("no list of pods among %v", resources)
	}
}

// TestWatchedSnapshotsKeepOnlySelectedWorkloads follows a namespace with -l: the server
// filters Deployments, and ReplicaSets, listed whole because they follow their Deployment,
// are kept only with a selected owner, as the one-shot read keeps them.
func TestWatchedSnapshotsKeepOnlySelectedWorkloads(t *testing.T) {
	sel, err := snapshot.ParseSelector("tier=web", "")
	if err != nil {
		t.Fatal(err)
	}
	web, batch := deployment("shop", "web"), deployment("shop", "batch")
	web.Labels, batch.Labels = map[string]string{"tier": "web"}, map[string]string{"tier": "batch"}
	yes := true
	rs := func(name string, owner *appsv1.Deployment) *appsv1.ReplicaSet {
		r := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("rs-" + name), Labels: owner.Labels, ManagedFields: managed()}}
		r.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: owner.Name, UID: owner.UID, Controller: &yes}}
		return r
	}
	client := fake.NewClientset(web, batch, rs("web-1", web), rs("batch-1", batch))
	src := newForClient(client, Options{Namespaces: []string{"shop"}, Selector: sel}, fixedNow)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snaps, errs := src.Watch(ctx)
	select {
	case err := <-errs:
		t.Fatal(err)
	case s := <-snaps:
		var got []string
		for _, d := range s.Deployments {
			got = append(got, d.Name)
		}
		for _, r := range s.ReplicaSets {
			got = append(got, r.Name)
		}
		if strings.Join(got, ",") != "web,web-1" {
			t.Errorf("watched snapshot holds %v, want the selected Deployment web and its ReplicaSet web-1", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no snapshot")
	}
}

package live

import (
	"context"
	"sort"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
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

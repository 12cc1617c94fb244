package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestServiceSelectorChangedUnderAServingDeployment: a Deployment served behind its Service, then
// the Service's selector is changed to one that matches none of its copies. The workload's spec
// never changed; the live source keeps the Service's managedFields, whose time dates the change
// after the revision served: the cause is a dependency, and the timeline carries the change.
func TestServiceSelectorChangedUnderAServingDeployment(t *testing.T) {
	t.Parallel()
	e := newEnv(t, world())
	const name = "gateway"
	e.create(t, ingester(name, 2, reachableIntake), true)
	e.waitServing(t, name, 2)
	// Served for a while: the engine dates a change under a workload only after its revision
	// has run for two minutes (diagnose's servedReady).
	e.waitPods(t, name, 2, "ready for over two minutes since they started", func(p corev1.Pod) bool {
		return running(p) && p.Status.ContainerStatuses[0].Ready && p.Status.StartTime != nil &&
			time.Since(p.Status.StartTime.Time) > 2*time.Minute+10*time.Second
	})
	ctx := context.Background()
	svc, err := e.cs.CoreV1().Services(e.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Spec.Selector = map[string]string{"app": "gw"}
	if _, err := e.cs.CoreV1().Services(e.ns).Update(ctx, svc, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}

	r := eventuallyAudit(t, 90*time.Second, cp.AdminKubeconfig(), []string{"-n", e.ns},
		verdict{name: name, shape: "live-but-idle", cause: "dependency", object: "Service/" + name, suspect: "spec.selector"})
	w := r.find("Deployment", name)
	dated := false
	for _, m := range w.Timeline {
		dated = dated || m.Kind == "dependency" && m.Object == "Service/"+name
	}
	if !dated {
		t.Errorf("timeline %+v has no dated change of Service/%s", w.Timeline, name)
	}
	if w.Revisions == nil || w.Revisions.LastServing != w.Revisions.Current || len(w.Revisions.ChangedPaths) != 0 {
		t.Errorf("revisions = %+v, want the current one as the last serving, unchanged", w.Revisions)
	}
}

package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
)

const envPath = "spec.template.spec.containers[0].env[0].value"

const (
	notifierRegistry = "registry.internal"
	notifierImage    = notifierRegistry + "/platform/notifier:2.3.1"
)

// TestRolloutToAWrongPortIsASpecFault is the canonical incident: the ingester served with
// INGEST_ENDPOINT on :8443, a new revision points it at :9443 where nothing listens, and the
// new copies run but never become ready. The tool must name the env value and blame the spec.
func TestRolloutToAWrongPortIsASpecFault(t *testing.T) {
	t.Parallel()
	e := newEnv(t, world())
	const name = "telemetry-ingester"
	// The default 600 s deadline: the tool must see the failed rollout long before the
	// controller gives up on it. The probe is short from the first revision, so the update
	// changes only the env value.
	e.create(t, quickProbe(ingester(name, 3, reachableIntake)), true)
	e.waitServing(t, name, 3)

	e.update(t, name, func(c *corev1.Container) { c.Env[0].Value = unreachableIntake })
	e.waitPods(t, name, 1, "of the new revision running but not ready", func(p corev1.Pod) bool {
		return runningNotReady(p) && p.Spec.Containers[0].Env[0].Value == unreachableIntake
	})
	e.waitUnhealthy(t, name)

	// While the new copy is inside its probe allowance the rollout is only under way; past it,
	// never Ready and logging errors, it has failed, inside the progress deadline.
	r := eventuallyAudit(t, 90*time.Second, cp.AdminKubeconfig(), []string{"-n", e.ns},
		verdict{name: name, shape: "live-but-idle", cause: "spec", suspect: envPath})
	// ProgressDeadlineExceeded, once written, stays until the rollout progresses; absent after
	// the audit, it was absent during it.
	e.insideDeadline(t, name)
	w := r.find("Deployment", name)
	if hasEvidence(w, "ProgressDeadlineExceeded") {
		t.Errorf("evidence cites ProgressDeadlineExceeded inside the deadline:\n%s", w)
	}
	top := w.Suspects[0]
	if top.Value != unreachableIntake || top.PreviousValue != reachableIntake {
		t.Errorf("top suspect value %q previous %q, want %q previous %q", top.Value, top.PreviousValue, unreachableIntake, reachableIntake)
	}
	if top.Object != "Deployment/"+name {
		t.Errorf("top suspect object = %q, want Deployment/%s", top.Object, name)
	}
	if w.Revisions == nil || !slices.Contains(w.Revisions.ChangedPaths, envPath) {
		t.Errorf("revisions = %+v, want %s among the changed paths", w.Revisions, envPath)
	}
	if !hasLogEvidence(w, "9443") {
		t.Errorf("no log evidence naming :9443 (the log tails of the failing copies):\n%s", w)
	}
}

// TestUpstreamOutageUnderAnUnchangedSpecIsADependency is the twin: one revision that served,
// then the upstream stops answering. Nothing in the spec changed, so the spec is not to blame.
// Its neighbour meets the other outside failure: a registry that stops resolving.
func TestUpstreamOutageUnderAnUnchangedSpecIsADependency(t *testing.T) {
	t.Parallel()
	e := newEnv(t, world())
	const name = "telemetry-ingester"
	e.create(t, ingester(name, 3, reachableIntake), true)
	// Its neighbour pulls on every start from a registry that is about to stop resolving.
	e.sim.World().SetImage(notifierImage, kubeletsim.Image{Program: kubeletsim.Program{Ports: []int32{8080}}})
	e.create(t, deployment("notifier", notifierImage, 2, func(c *corev1.Container) { c.ImagePullPolicy = corev1.PullAlways }), false)
	e.waitServing(t, name, 3)
	e.waitServing(t, "notifier", 2)

	// A copy counts as having served on its own history when its Ready condition went False more
	// than two minutes after it started (diagnose's servedReady); the real twin served for hours.
	// The notifier serves as long, under the controller's record that its rollout completed.
	e.waitPods(t, name, 3, "ready for over two minutes since they started", func(p corev1.Pod) bool {
		return running(p) && p.Status.ContainerStatuses[0].Ready && p.Status.StartTime != nil &&
			time.Since(p.Status.StartTime.Time) > 2*time.Minute+5*time.Second
	})
	// The registry's name stops resolving and the notifier's copies are replaced (a node drain,
	// say): the same template cannot pull. Their history is gone with them: the controller's
	// record that the revision completed, and stayed available until now, is what shows it served.
	e.sim.World().SetRegistryDown(notifierRegistry, true)
	if err := e.cs.CoreV1().Pods(e.ns).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=notifier"}); err != nil {
		t.Fatal(err)
	}
	e.waitPods(t, "notifier", 2, "failing to pull", pullFailing)

	e.sim.World().SetReachable(reachableIntake, false)
	e.waitPods(t, name, 3, "running but not ready", runningNotReady)
	e.waitUnhealthy(t, name)

	r := eventuallyAudit(t, 60*time.Second, cp.AdminKubeconfig(), []string{"-n", e.ns},
		verdict{name: name, shape: "live-but-idle", cause: "dependency"},
		verdict{name: "notifier", shape: "never-starts", cause: "dependency", suspect: "spec.template.spec.containers[0].image"})
	w := r.find("Deployment", name)
	if w.Revisions != nil && len(w.Revisions.ChangedPaths) != 0 {
		t.Errorf("changed paths %v under an unchanged spec", w.Revisions.ChangedPaths)
	}
	if w.Counts.Existing != 3 || w.Counts.Serving != 0 {
		t.Errorf("counts = %+v, want 3 existing and none serving", w.Counts)
	}
	// The deployment controller's NewReplicaSetAvailable would also say the revision served; the
	// copies' own Ready history must say it too, for it is what outlives a later rollout.
	if !hasEvidence(w, "was Ready until") {
		t.Errorf("the evidence does not cite a copy's Ready history as proof the revision served:\n%s", w)
	}
	// The notifier's copies were replaced, so only the controller's record shows it served.
	if n := r.find("Deployment", "notifier"); !hasEvidence(n, "NewReplicaSetAvailable") {
		t.Errorf("the notifier's evidence does not cite NewReplicaSetAvailable as proof it served:\n%s", n)
		saveDump(t, cp.AdminKubeconfig(), []string{"-n", e.ns})
	}
}

func hasLogEvidence(w *workload, word string) bool {
	for _, ev := range w.Evidence {
		if ev.Source == "log" && strings.Contains(ev.Message, word) {
			return true
		}
	}
	return false
}

package e2e

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestEveryShapeOnALiveCluster runs one workload of each shape side by side in one namespace,
// as an on-call engineer would find them, and checks the verdict and main suspect of each.
// It then saves the namespace with `dump` and checks that `audit --dump` says the same.
func TestEveryShapeOnALiveCluster(t *testing.T) {
	t.Parallel()
	e := newEnv(t, world())

	e.create(t, ingester("api", 2, reachableIntake), true)
	e.create(t, deployment("recommender", recommenderV1, 2, nil), true)
	// Every deployment keeps the default 600 s progress deadline: the broken ones must be
	// diagnosed long before the controller would give up on them.
	e.create(t, deployment("pull", missingImage, 2, nil), false)
	e.create(t, deployment("thumbs", thumbsImage, 2, nil), false)
	// The readiness probe asks port 9090; the program and the declared containerPort are 8080.
	// Its copies run but never become Ready; past their probe's allowance that has failed.
	idle := quickProbe(ingester("idle", 2, reachableIntake))
	idle.Spec.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Port = intstr.FromInt32(9090)
	e.create(t, idle, true)
	// A node label no simulated node has.
	pinned := ingester("pinned", 2, reachableIntake)
	pinned.Spec.Template.Spec.NodeSelector = map[string]string{"disktype": "ssd"}
	e.create(t, pinned, false)
	// A Secret that does not exist (the tool must find this out without reading Secrets).
	creds := ingester("creds", 2, reachableIntake)
	creds.Spec.Template.Spec.Containers[0].Env = append(creds.Spec.Template.Spec.Containers[0].Env, corev1.EnvVar{
		Name: "INGEST_TOKEN",
		ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "ingest-credentials"}, Key: "token",
		}},
	})
	e.create(t, creds, false)
	// Copies that serve on 8080 behind a Service that will be re-applied with targetPort 8000.
	e.create(t, ingester("search", 2, reachableIntake), true)

	e.waitServing(t, "api", 2)
	e.waitServing(t, "recommender", 2)
	// A rollout to a version that loads its model for 30 minutes: under way, within its deadline.
	e.update(t, "recommender", func(c *corev1.Container) { c.Image = recommenderV2 })
	e.waitPods(t, "pull", 2, "failing to pull", pullFailing)
	e.waitPods(t, "thumbs", 2, "restarted after OOMKilled", restarted)
	e.waitPods(t, "idle", 2, "running but not ready", runningNotReady)
	e.waitPods(t, "pinned", 2, "unschedulable", func(p corev1.Pod) bool {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
				return true
			}
		}
		return false
	})
	e.waitPods(t, "creds", 2, "in CreateContainerConfigError", func(p corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].State.Waiting != nil &&
			p.Status.ContainerStatuses[0].State.Waiting.Reason == "CreateContainerConfigError"
	})
	e.waitServing(t, "search", 2)
	// No need to let the copies age: a Ready copy that is not an endpoint is idle, not warming
	// up, once it has been Ready for 30 s, which passes while the audit below converges.
	svc, err := e.cs.CoreV1().Services(e.ns).Get(context.Background(), "search", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Spec.Ports[0].TargetPort = intstr.FromInt32(8000)
	if _, err := e.cs.CoreV1().Services(e.ns).Update(context.Background(), svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitPods(t, "recommender", 1, "running the new version, not ready yet", func(p corev1.Pod) bool {
		return runningNotReady(p) && p.Spec.Containers[0].Image == recommenderV2
	})

	kc := cp.AdminKubeconfig()
	want := []verdict{
		{name: "api", shape: "healthy"},
		{name: "recommender", shape: "progressing"},
		{name: "pull", shape: "never-starts", cause: "spec", suspect: "spec.template.spec.containers[0].image"},
		// Its copies were Ready only for seconds between kills: nothing ever served, so nothing
		// shows whether the limit or an input that outgrew it is at fault.
		{name: "thumbs", shape: "starts-and-dies", cause: "unknown", suspect: "spec.template.spec.containers[0].resources.limits.memory"},
		{name: "idle", shape: "live-but-idle", cause: "spec", suspect: "spec.template.spec.containers[0].readinessProbe.httpGet.port"},
		{name: "pinned", shape: "never-starts", cause: "spec", suspect: "spec.template.spec.nodeSelector[disktype]"},
		{name: "creds", shape: "never-starts", cause: "spec", suspect: "spec.template.spec.containers[0].env[1].valueFrom.secretKeyRef.name"},
		{name: "search", shape: "live-but-idle", cause: "spec", object: "Service/search", suspect: "spec.ports[0].targetPort"},
	}
	r := eventuallyAudit(t, 90*time.Second, kc, []string{"-n", e.ns}, want...)
	// ProgressDeadlineExceeded, once written, stays until the rollout progresses; absent after
	// the audit, it was absent during it.
	for _, name := range []string{"pull", "thumbs", "idle", "pinned", "creds"} {
		e.insideDeadline(t, name)
		if w := r.find("Deployment", name); hasEvidence(w, "ProgressDeadlineExceeded") {
			t.Errorf("%s evidence cites ProgressDeadlineExceeded inside the deadline:\n%s", name, w)
		}
	}

	if r.APIVersion != "kubediagnose.dev/v1alpha1" || r.Kind != "Report" {
		t.Errorf("apiVersion/kind = %s/%s", r.APIVersion, r.Kind)
	}
	if r.Source.Type != "live" || r.Source.Server == "" || r.Source.Context == "" {
		t.Errorf("source = %+v, want a live source naming its context and server", r.Source)
	}
	if time.Since(r.ReferenceTime) > time.Minute || time.Until(r.ReferenceTime) > time.Second {
		t.Errorf("referenceTime = %v, want now", r.ReferenceTime)
	}
	for _, w := range r.Workloads {
		if w.Namespace != e.ns {
			t.Errorf("workload %s/%s of another namespace in a -n %s audit", w.Namespace, w.Name, e.ns)
		}
	}
	if api := r.find("Deployment", "api"); api != nil && (api.Counts.Declared != 2 || api.Counts.Serving != 2) {
		t.Errorf("api counts = %+v, want 2 declared and 2 serving", api.Counts)
	}
	if pull := r.find("Deployment", "pull"); pull != nil && pull.Counts.Serving != 0 {
		t.Errorf("pull counts = %+v, want none serving", pull.Counts)
	}
	// Log tails of failing copies come through pods/log from the simulated kubelet.
	if thumbs := r.find("Deployment", "thumbs"); thumbs != nil && !hasEvidence(thumbs, "OOMKilled") {
		t.Errorf("thumbs evidence does not mention OOMKilled:\n%s", thumbs)
	}

	t.Run("dump then audit --dump gives the same verdicts", func(t *testing.T) {
		var dir string
		// The cluster keeps moving (a crash loop restarts, a rollout steps on), so compare at a
		// moment it holds still: the verdicts read just before and just after the dump agree.
		var live, offline *report
		for attempt := 1; ; attempt++ {
			before := audit(t, kc, "-n", e.ns)
			dir = filepath.Join(t.TempDir(), "incident") // a new directory each time
			res := diagnoseCmd(t, "dump", "--kubeconfig", kc, "-n", e.ns, "--output-directory", dir)
			if res.code != 0 {
				t.Fatalf("dump: exit %d: %s", res.code, res.stderr)
			}
			live = audit(t, kc, "-n", e.ns)
			// The offline verdict is computed at the live one's reference time, to the nanosecond:
			// ages near a threshold (a probe allowance, the endpoint grace) must not round.
			offline = audit(t, kc, "--dump", dir, "--at", live.ReferenceTime.UTC().Format(time.RFC3339Nano))
			if verdicts(before) == verdicts(live) || attempt == 3 {
				break
			}
			t.Logf("the cluster moved during the dump; again:\nbefore:\n%s\nafter:\n%s", verdicts(before), verdicts(live))
		}
		if offline.Source.Type != "dump" {
			t.Errorf("offline source = %+v, want dump", offline.Source)
		}
		if got, want := verdicts(offline), verdicts(live); got != want {
			t.Errorf("verdicts differ between the cluster and its dump:\noffline:\n%s\nlive:\n%s", got, want)
		}
		again := diagnoseCmd(t, "dump", "--kubeconfig", kc, "-n", e.ns, "--output-directory", dir)
		if again.code != 1 || !strings.Contains(again.stderr, "--force") {
			t.Errorf("dump into a non-empty directory: exit %d, stderr %q; want exit 1 naming --force", again.code, again.stderr)
		}
	})
}

func hasEvidence(w *workload, word string) bool {
	for _, ev := range w.Evidence {
		if strings.Contains(ev.Message, word) || strings.Contains(ev.Kind, word) {
			return true
		}
	}
	return false
}

// verdicts renders what must survive a dump: per workload its shape, cause and ranked suspect paths.
func verdicts(r *report) string {
	var lines []string
	for _, w := range r.Workloads {
		var paths []string
		for _, s := range w.Suspects {
			paths = append(paths, s.Path)
		}
		lines = append(lines, strings.Join([]string{w.Kind, w.Namespace, w.Name, w.Shape, w.Cause, strings.Join(paths, ",")}, " "))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

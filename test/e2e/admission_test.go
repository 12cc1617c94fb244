package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAdmissionRefusalsOnALiveCluster covers copies that are never created: the API server's
// own admission (ResourceQuota, ServiceAccount) refuses the pods and the ReplicaSet controller
// records why. Nothing here is simulated; the messages are the real server's.
func TestAdmissionRefusalsOnALiveCluster(t *testing.T) {
	t.Parallel()
	e := newEnv(t, world())
	ctx := context.Background()

	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "compute"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsMemory: resource.MustParse("1Gi")}},
	}
	if _, err := e.cs.CoreV1().ResourceQuotas(e.ns).Create(ctx, quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Admission enforces the quota from the status resourcequota-controller writes; wait for it,
	// so the story is a quota that is known and exceeded.
	deadline := time.Now().Add(time.Minute)
	for {
		q, err := e.cs.CoreV1().ResourceQuotas(e.ns).Get(ctx, "compute", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, hard := q.Status.Hard[corev1.ResourceRequestsMemory]
		_, used := q.Status.Used[corev1.ResourceRequestsMemory]
		if hard && used {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("resourcequota-controller never wrote the quota's status")
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Each copy asks for 2Gi of a namespace allowed 1Gi in all.
	e.create(t, deployment("builder", ingesterImage, 2, func(c *corev1.Container) {
		c.Env = []corev1.EnvVar{{Name: "INGEST_ENDPOINT", Value: reachableIntake}}
		c.Resources.Requests[corev1.ResourceMemory] = resource.MustParse("2Gi")
		c.Resources.Limits[corev1.ResourceMemory] = resource.MustParse("2Gi")
	}), false)
	exporter := ingester("exporter", 2, reachableIntake)
	exporter.Spec.Template.Spec.ServiceAccountName = "exporter"
	e.create(t, exporter, false)

	r := eventuallyAudit(t, 90*time.Second, cp.AdminKubeconfig(), []string{"-n", e.ns},
		verdict{name: "builder", shape: "never-starts", cause: "spec", suspect: "spec.template.spec.containers[0].resources.requests.memory"},
		verdict{name: "exporter", shape: "never-starts", cause: "spec", suspect: "spec.template.spec.serviceAccountName"},
	)
	for name, word := range map[string]string{"builder": "exceeded quota: compute", "exporter": `serviceaccount "exporter" not found`} {
		w := r.find("Deployment", name)
		if !hasEvidence(w, word) {
			t.Errorf("%s evidence does not quote the server's refusal (%q):\n%s", name, word, w)
		}
		if w.Counts.Existing != 0 || w.Counts.Declared != 2 {
			t.Errorf("%s counts = %+v, want 2 declared and none existing", name, w.Counts)
		}
	}
}

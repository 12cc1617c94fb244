package diagnose

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// withClaim mounts one PersistentVolumeClaim in the Deployment's template.
func withClaim(d *appsv1.Deployment) {
	d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "db-data"},
	}}}
}

// attachWaits records the attach/detach controller's event on a copy waiting for the volume,
// as reportMultiAttachError words it.
func attachWaits(c *cluster, p *corev1.Pod, suffix string) {
	c.event("Pod", p.Name, p.UID, corev1.EventTypeWarning, "FailedAttachVolume",
		`Waiting for detach for volume "pvc-4f7a2c1e-0b9d-4c1a-9a57-2f1d9e6b7c10" `+suffix, 12, time.Minute)
}

func TestVolumeMultiAttach(t *testing.T) {
	t.Run("two copies of one revision: replicas", func(t *testing.T) {
		c := newCluster()
		d := c.deployment("db", 2, 1, "NewReplicaSetAvailable", 2*time.Hour)
		withClaim(d)
		rs := c.replicaSet(d, 1, 2, 2*time.Hour, nil)
		a := c.pod(rs, "a", 2*time.Hour, running(true))
		b := c.pod(rs, "b", 20*time.Minute, waiting("ContainerCreating", ""))
		b.Spec.NodeName = "node-b"
		attachWaits(c, b, "Volume is already used by pod(s) "+a.Name)
		got := c.diagnoseOne("db")
		if len(got.Suspects) == 0 || got.Suspects[0].Rule != rules.RuleVolumeMultiAttach || got.Suspects[0].Path.String() != "spec.replicas" {
			t.Fatalf("suspects %+v, want spec.replicas first", got.Suspects)
		}
		if !strings.Contains(got.Suspects[0].Reason, "2 copies share it: "+a.Name+" already uses it") {
			t.Errorf("reason %q", got.Suspects[0].Reason)
		}
		// It served with one copy; scaling makes no revision, and two copies can never share
		// the volume: the spec's fault, not something outside.
		if got.Cause != CauseSpec || !strings.HasPrefix(got.Fix, "change Deployment/db spec.replicas") {
			t.Errorf("cause %s fix %q, want the spec's replicas", got.Cause, got.Fix)
		}
	})
	t.Run("a rolling update overlapping the old copy: the strategy", func(t *testing.T) {
		c := newCluster()
		d := c.deployment("db", 1, 2, "ReplicaSetUpdated", 2*time.Hour)
		withClaim(d)
		old := c.replicaSet(d, 1, 1, 2*time.Hour, nil)
		cur := c.replicaSet(d, 2, 1, 20*time.Minute, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "registry.example/db:1.1.0" })
		held := c.pod(old, "a", 2*time.Hour, running(true))
		waits := c.pod(cur, "b", 20*time.Minute, waiting("ContainerCreating", ""))
		waits.Spec.NodeName = "node-b"
		attachWaits(c, waits, "Volume is already used by pod(s) "+held.Name)
		got := c.diagnoseOne("db")
		if len(got.Suspects) == 0 || got.Suspects[0].Rule != rules.RuleVolumeMultiAttach || got.Suspects[0].Path.String() != "spec.strategy.type" {
			t.Fatalf("suspects %+v, want spec.strategy.type first", got.Suspects)
		}
		for _, s := range got.Suspects {
			if s.Path.String() == "spec.replicas" {
				t.Errorf("one copy declared, yet replicas is a suspect: %+v", s)
			}
		}
	})
	t.Run("another workload's pod holds it: the claim", func(t *testing.T) {
		c := newCluster()
		d := c.deployment("db", 1, 1, "NewReplicaSetAvailable", 2*time.Hour)
		withClaim(d)
		rs := c.replicaSet(d, 1, 1, 2*time.Hour, nil)
		waits := c.pod(rs, "b", 20*time.Minute, waiting("ContainerCreating", ""))
		attachWaits(c, waits, "Volume is already used by pod(s) backup-7c9f6d8b5-q2w3e")
		got := c.diagnoseOne("db")
		if len(got.Suspects) == 0 || got.Suspects[0].Path.String() != "spec.template.spec.volumes[0].persistentVolumeClaim.claimName" ||
			!strings.Contains(got.Suspects[0].Reason, "pods of another workload use it: backup-7c9f6d8b5-q2w3e") {
			t.Fatalf("suspects %+v, want the claim first, shared with backup", got.Suspects)
		}
		for _, s := range got.Suspects {
			if p := s.Path.String(); p == "spec.replicas" || p == "spec.strategy.type" {
				t.Errorf("%s is a suspect, though no copy of this workload holds the volume", p)
			}
		}
	})
	t.Run("no copy left holds it, the old node has not let go: the strategy", func(t *testing.T) {
		c := newCluster()
		d := c.deployment("db", 1, 2, "ReplicaSetUpdated", 2*time.Hour)
		withClaim(d)
		c.replicaSet(d, 1, 0, 2*time.Hour, nil)
		cur := c.replicaSet(d, 2, 1, 20*time.Minute, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "registry.example/db:1.1.0" })
		waits := c.pod(cur, "b", 20*time.Minute, waiting("ContainerCreating", ""))
		attachWaits(c, waits, "Volume is already exclusively attached to one node, waiting on detach before it can be attached to another node")
		got := c.diagnoseOne("db")
		if len(got.Suspects) == 0 || got.Suspects[0].Path.String() != "spec.strategy.type" {
			t.Fatalf("suspects %+v, want spec.strategy.type first", got.Suspects)
		}
	})
}

package diagnose

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// TestRefusedProbeOfACopyThatExitsByItself: a readiness probe refused on the port the container
// declares, while the container exits with a code of its own between restarts, says only that
// the process is not running: the probe's port is no suspect. Killed by its liveness probe
// (exit 137 or 143), the same refusal still names the probe's port.
func TestRefusedProbeOfACopyThatExitsByItself(t *testing.T) {
	for _, tt := range []struct {
		name      string
		exit      int32
		wantProbe bool
	}{
		{name: "the app exits 1", exit: 1, wantProbe: false},
		{name: "the app exits 2", exit: 2, wantProbe: false},
		{name: "the kubelet killed it", exit: 137, wantProbe: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			d := c.deployment("cart", 1, 1, reasonNewRSAvailable, time.Hour)
			d.Spec.Template.Spec.Containers[0].ReadinessProbe = readinessHTTP(intstr.FromString("http"), 0)
			rs := c.replicaSet(d, 1, 1, time.Hour, nil)
			p := c.pod(rs, "a", time.Hour, crashLooping("Error", tt.exit, 9))
			c.event("Pod", p.Name, p.UID, corev1.EventTypeWarning, "Unhealthy", readinessRefused(p, 8080), 12, 10*time.Second)
			got := c.diagnoseOne("cart")
			hasProbe := false
			for _, s := range got.Suspects {
				if s.Rule == rules.RuleProbePort {
					hasProbe = true
				}
			}
			if hasProbe != tt.wantProbe {
				t.Errorf("probe-port among the suspects = %t, want %t: %+v", hasProbe, tt.wantProbe, got.Suspects)
			}
		})
	}
}

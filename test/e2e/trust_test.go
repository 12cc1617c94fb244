package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRolloutGateStopsOnARecreatedObject deletes the Deployment a gate follows and creates
// another of the same name at once (no replicas, another image): the new object is done as soon
// as the controller sees it, and a gate that followed the name would pass it. kubectl rollout
// status aborts on a deletion; the gate must exit 1 with one line, never "succeeded".
func TestRolloutGateStopsOnARecreatedObject(t *testing.T) {
	t.Parallel()
	e := newEnv(t, gateWorld())
	e.create(t, deployment("recommender", recommenderV1, 2, nil), false)
	e.waitServing(t, "recommender", 2)
	e.update(t, "recommender", func(c *corev1.Container) { c.Image = slowStartImage })

	g := e.startGate(t, "recommender")
	eventually(t, 30*time.Second, func() string {
		if !strings.Contains(g.stderrNow(), "progressing") {
			return "no progress line yet"
		}
		return ""
	})
	ctx := context.Background()
	if err := e.cs.AppsV1().Deployments(e.ns).Delete(ctx, "recommender", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.create(t, deployment("recommender", recommenderV1, 0, nil), false)

	r := g.wait(t, 60*time.Second)
	t.Logf("rollout's stderr:\n%s", r.stderr)
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	if r.code != 1 || r.stdout != "" || !strings.HasPrefix(last, "error: deployment/recommender was deleted") {
		t.Errorf("exit %d, stdout %q, last line %q; want exit 1, no verdict and one error line saying the deployment was deleted\nstderr:\n%s", r.code, r.stdout, last, r.stderr)
	}
	if strings.Count(r.stderr, "error: ") != 1 {
		t.Errorf("want one error line:\n%s", r.stderr)
	}
}

package e2e

import (
	"context"
	"fmt"
	"net/http"
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

// internalErrorOn answers the lists whose path ends in /resource as kube-apiserver answers when
// its storage fails: 500 with an InternalError Status.
func internalErrorOn(resource string) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasSuffix(r.URL.Path, "/"+resource) || r.URL.Query().Get("watch") == "true" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: rpc error: code = Unavailable desc = etcdserver: leader changed","reason":"InternalError","details":{"causes":[{"message":"rpc error: code = Unavailable desc = etcdserver: leader changed"}]},"code":500}`+"\n")
		return true
	}
}

// TestAServerErrorOnEventsIsAWarning: the real API server behind a proxy that fails the list of
// events with 500: audit gives the report and warns what it could not read; a 500 on pods ends
// it, naming the list and the namespace.
func TestAServerErrorOnEventsIsAWarning(t *testing.T) {
	t.Parallel()
	ns := pendingCopies(t, 2)
	p := newProxy(t, ns, internalErrorOn("events"))
	res := diagnoseCmd(t, "audit", "-o", "json", "--kubeconfig", p.kubeconfig)
	if res.code != 0 {
		t.Fatalf("exit %d stderr %q; want the report without events", res.code, res.stderr)
	}
	r, err := decodeReport(res.stdout)
	if err != nil {
		t.Fatal(err)
	}
	if w := r.find("Deployment", "many"); w == nil || w.Counts.Existing != 2 {
		t.Errorf("report = %+v, want deployment many with its 2 copies", r.Workloads)
	}
	want := "warning: could not read Event in namespace " + ns + ": the API server failed to list events: Error from server (InternalError): Internal error occurred"
	if !strings.Contains(res.stderr, want) {
		t.Errorf("stderr %q lacks %q", res.stderr, want)
	}

	pods := newProxy(t, ns, internalErrorOn("pods"))
	oneErrorLine(t, diagnoseCmd(t, "audit", "--kubeconfig", pods.kubeconfig), "list pods in namespace "+ns+": Internal error occurred")
}

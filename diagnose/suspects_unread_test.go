package diagnose

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// TestReasoningWithoutLogs: with the failing copies' logs unread, the fields the failing revision
// changed are ranked by what the failure looks like, and visibility says the logs were not read.
func TestReasoningWithoutLogs(t *testing.T) {
	const minute, day = time.Minute, 24 * time.Hour
	tests := []struct {
		name    string
		mutate  func(*corev1.PodTemplateSpec)
		state   podState
		logs    bool
		wantTop string
	}{
		{
			name: "readiness fails: an env value naming an endpoint above a CPU request",
			mutate: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Env[0].Value = "upstream.internal:9443"
				t.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("750m")}
			},
			state: running(false), wantTop: "spec.template.spec.containers[0].env[0].value",
		},
		{
			name: "copies start and die: the command above a CPU request and a plain env value",
			mutate: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Command = []string{"/app/server", "--mode=worker"}
				t.Spec.Containers[0].Env = append(t.Spec.Containers[0].Env, corev1.EnvVar{Name: "LOG_LEVEL", Value: "debug"})
				t.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("750m")}
			},
			state: crashLooping("Error", 1, 6), wantTop: "spec.template.spec.containers[0].command",
		},
	}
	for _, tt := range tests {
		for _, logs := range []bool{false, true} {
			name := tt.name
			if logs {
				name += ", logs read"
			}
			t.Run(name, func(t *testing.T) {
				c := newCluster()
				d := c.deployment("web", 2, 2, "", 10*day)
				tt.mutate(&d.Spec.Template)
				c.replicaSet(d, 1, 0, 10*day, func(tp *corev1.PodTemplateSpec) { *tp = basicTemplate("web") })
				cur := c.replicaSet(d, 2, 2, 6*minute, nil)
				for _, s := range []string{"a", "b"} {
					pod := c.pod(cur, s, 6*minute, tt.state)
					if logs {
						c.logEvery(pod, 5*minute, time.Minute, func(time.Time) string { return "starting" })
					}
				}
				dg := c.diagnoseOne("web")
				if dg == nil || len(dg.Suspects) == 0 {
					t.Fatalf("no suspects: %+v", dg)
				}
				unread := false
				for _, e := range dg.Evidence {
					unread = unread || e.Kind == "LogsNotRead" && e.Source == SourceVisibility
				}
				if unread == logs {
					t.Errorf("LogsNotRead evidence = %v with logs read = %v", unread, logs)
				}
				if logs {
					return
				}
				if got := dg.Suspects[0].Path.String(); got != tt.wantTop {
					t.Errorf("top suspect = %s, want %s (all %+v)", got, tt.wantTop, dg.Suspects)
				}
			})
		}
	}
}

func TestEndpointLike(t *testing.T) {
	for v, want := range map[string]bool{
		"upstream.internal:9443": true, "https://api.example.com/v1": true, "postgres://u@db.internal:5432/app": true,
		"orders-db.internal:5433": true, "debug": false, "750m": false, "10.0.0.1": false, "info:verbose": false,
	} {
		if got := rules.NamesEndpoint(v); got != want {
			t.Errorf("endpointLike(%q) = %v, want %v", v, got, want)
		}
	}
}

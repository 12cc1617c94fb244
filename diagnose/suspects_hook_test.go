package diagnose

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// The hook family, on the kubelet's own words (kuberuntime_container.go, lifecycle/handlers.go
// of v1.37): an exec postStart hook whose script the image lacks, seen only as events and a
// crash loop; an httpGet postStart hook to a port nothing listens on, seen in the waiting
// state's message; a preStop hook that fails while copies crash for another reason.
func TestLifecycleHookFamily(t *testing.T) {
	c0 := "spec.template.spec.containers[0]"
	tests := []struct {
		name  string
		hook  func(*corev1.Container)
		state func(c *cluster, p *corev1.Pod)
		rule  RuleID
		path  string
	}{
		{
			name: "exec postStart, events and a crash loop",
			hook: func(ct *corev1.Container) {
				ct.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", "/opt/app/bin/warm-cache.sh"}}}}
			},
			state: func(c *cluster, p *corev1.Pod) {
				crashLooping("Error", 143, 5)(p)
				c.hookEvents(p, "FailedPostStartHook", "PostStartHook failed")
			},
			rule: rules.RulePostStartHook, path: c0 + ".lifecycle.postStart.exec.command",
		},
		{
			name: "httpGet postStart to a port nothing listens on",
			hook: func(ct *corev1.Container) {
				ct.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/admin/warmup", Port: intstr.FromInt32(9090)}}}
			},
			state: func(_ *cluster, p *corev1.Pod) {
				waiting("PostStartHookError", fmt.Sprintf(`HTTP lifecycle hook (/admin/warmup) for Container "app" in Pod "%s_%s(%s)" failed - error: Get "http://10.244.1.7:9090/admin/warmup": dial tcp 10.244.1.7:9090: connect: connection refused`, p.Name, p.Namespace, p.UID))(p)
				p.Status.Phase = corev1.PodRunning
				p.Status.ContainerStatuses[0].RestartCount = 3
			},
			rule: rules.RulePostStartHook, path: c0 + ".lifecycle.postStart.httpGet.port",
		},
		{
			name: "preStop hook failing as copies are stopped",
			hook: func(ct *corev1.Container) {
				ct.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"/usr/local/bin/drain"}}}}
			},
			state: func(c *cluster, p *corev1.Pod) {
				crashLooping("Error", 137, 4)(p)
				c.hookEvents(p, "FailedPreStopHook", "PreStopHook failed")
			},
			rule: rules.RulePreStopHook, path: c0 + ".lifecycle.preStop.exec.command",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			d := c.deployment("portal", 2, 1, reasonReplicaSetUpdated, 8*time.Minute)
			tt.hook(&d.Spec.Template.Spec.Containers[0])
			rs := c.replicaSet(d, 1, 2, 8*time.Minute, nil)
			for _, s := range []string{"a", "b"} {
				p := c.pod(rs, s, 8*time.Minute, running(false))
				tt.state(c, p)
			}
			got := c.diagnoseOne("portal")
			if got.Shape != ShapeStartsAndDies {
				t.Errorf("shape = %s (%s)", got.Shape, got.Headline)
			}
			if len(got.Suspects) == 0 || got.Suspects[0].Rule != tt.rule || got.Suspects[0].Path.String() != tt.path {
				t.Fatalf("suspects = %+v, want %s on %s first", got.Suspects, tt.rule, tt.path)
			}
			if tt.rule == rules.RulePostStartHook && got.Cause != CauseSpec {
				t.Errorf("cause = %s, want spec (%+v)", got.Cause, got.Argument)
			}
		})
	}
}

// hookEvents adds the kubelet's events of a failed hook on the copy's container: the Warning
// and, for postStart, the Normal kill that follows.
func (c *cluster) hookEvents(p *corev1.Pod, reason, message string) {
	c.event("Pod", p.Name, p.UID, corev1.EventTypeWarning, reason, message, 5, 30*time.Second)
	c.s.Events[len(c.s.Events)-1].InvolvedObject.FieldPath = "spec.containers{app}"
	if reason == "FailedPostStartHook" {
		c.event("Pod", p.Name, p.UID, corev1.EventTypeNormal, "Killing", "FailedPostStartHook", 5, 30*time.Second)
		c.s.Events[len(c.s.Events)-1].InvolvedObject.FieldPath = "spec.containers{app}"
	}
}

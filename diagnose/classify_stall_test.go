package diagnose

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// readinessHTTP is a readiness probe as the API server defaults it, on the named port "http".
func readinessHTTP(port intstr.IntOrString, initialDelay int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: "/ready", Port: port, Scheme: corev1.URISchemeHTTP,
		}},
		InitialDelaySeconds: initialDelay, TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
	}
}

// rolloutStarted sets the Deployment's Progressing condition as the controller writes it when
// the new ReplicaSet was created or scaled `ago` ago and nothing has completed since.
func rolloutStarted(d *appsv1.Deployment, reason, rs string, since time.Duration) {
	d.Status.Conditions = []appsv1.DeploymentCondition{{
		Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: reason,
		Message:        fmt.Sprintf("ReplicaSet %q is progressing.", rs),
		LastUpdateTime: ago(since), LastTransitionTime: ago(since),
	}, {
		Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable",
		Message:        "Deployment does not have minimum availability.",
		LastUpdateTime: ago(since), LastTransitionTime: ago(since),
	}}
}

func (c *cluster) logs(pod *corev1.Pod, lines ...string) {
	c.s.Logs = append(c.s.Logs, snapshot.ContainerLog{Namespace: testNS, Pod: pod.Name, Container: "app", Lines: lines})
}

func readinessRefused(p *corev1.Pod, port int) string {
	return fmt.Sprintf(`Readiness probe failed: Get "http://%s:%d/ready": dial tcp %s:%d: connect: connection refused`, p.Status.PodIP, port, p.Status.PodIP, port)
}

const readiness503 = "Readiness probe failed: HTTP probe failed with statuscode: 503"

// TestRolloutFailingInsideDeadline: a rollout the controller still calls progressing, whose new
// copies visibly fail, takes the failing revision's shape and gets suspects; a normal rolling
// update, and a slow loader that logs no error, stay progressing.
func TestRolloutFailingInsideDeadline(t *testing.T) {
	const minute = time.Minute
	tests := []struct {
		name      string
		build     func(c *cluster)
		wantShape Shape
		wantTop   string
		wantCause Cause
		// wantLow: the suspects of a progressing row are all low confidence.
		wantLow bool
	}{
		{
			name: "Recreate to an endpoint that refuses: Running, never Ready, connection refused in the logs",
			build: func(c *cluster) {
				d := c.deployment("ingester", 3, 2, "", 30*24*time.Hour)
				d.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType
				d.Spec.Template.Spec.Containers[0].ReadinessProbe = readinessHTTP(intstr.FromString("http"), 5)
				d.Spec.Template.Spec.Containers[0].Env[0].Value = "upstream.internal:9443"
				old := c.replicaSet(d, 1, 0, 30*24*time.Hour, func(t *corev1.PodTemplateSpec) {
					t.Spec.Containers[0].Env[0].Value = "upstream.internal:8443"
				})
				cur := c.replicaSet(d, 2, 3, 8*minute, nil)
				rolloutStarted(d, reasonNewReplicaSetCreated, cur.Name, 8*minute)
				_ = old
				for _, s := range []string{"x7k2p", "m4q9z", "t2v8w"} {
					p := c.pod(cur, s, 7*minute, running(false))
					c.event("Pod", p.Name, p.UID, corev1.EventTypeWarning, "Unhealthy", readiness503, 40, 5*time.Second)
					c.logs(p,
						"2026-11-24T11:53:02.114Z INFO ingest: starting, endpoint=upstream.internal:9443",
						"2026-11-24T11:53:03.120Z ERROR ingest: flush failed: dial tcp 10.96.14.7:9443: connect: connection refused")
				}
			},
			wantShape: ShapeLiveButIdle, wantTop: "spec.template.spec.containers[0].env[0].value", wantCause: CauseSpec,
		},
		{
			name: "a brand-new Deployment whose readiness probe targets a port no container declares",
			build: func(c *cluster) {
				d := c.deployment("api", 2, 1, "", 4*minute)
				d.Spec.Template.Spec.Containers[0].ReadinessProbe = readinessHTTP(intstr.FromInt32(9090), 0)
				cur := c.replicaSet(d, 1, 2, 4*minute, nil)
				rolloutStarted(d, reasonNewReplicaSetCreated, cur.Name, 4*minute)
				for _, s := range []string{"b5c7d", "f9g2h"} {
					p := c.pod(cur, s, 4*minute, running(false))
					c.event("Pod", p.Name, p.UID, corev1.EventTypeWarning, "Unhealthy", readinessRefused(p, 9090), 22, 5*time.Second)
				}
			},
			wantShape: ShapeLiveButIdle, wantTop: "spec.template.spec.containers[0].readinessProbe.httpGet.port", wantCause: CauseSpec,
		},
		{
			name: "a readiness probe on a port a sidecar declares is no spec fault: without error lines it stays progressing",
			build: func(c *cluster) {
				d := c.deployment("api", 1, 1, "", 4*minute)
				d.Spec.Template.Spec.Containers[0].ReadinessProbe = readinessHTTP(intstr.FromInt32(15021), 0)
				d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{
					Name: "proxy", Image: "registry.example/proxy:1.24.0",
					Ports: []corev1.ContainerPort{{Name: "health", ContainerPort: 15021, Protocol: corev1.ProtocolTCP}},
				})
				cur := c.replicaSet(d, 1, 1, 4*minute, nil)
				rolloutStarted(d, reasonNewReplicaSetCreated, cur.Name, 4*minute)
				p := c.pod(cur, "b5c7d", 4*minute, running(false))
				c.event("Pod", p.Name, p.UID, corev1.EventTypeWarning, "Unhealthy", readiness503, 22, 5*time.Second)
			},
			wantShape: ShapeProgressing,
		},
		{
			name: "a rolling update whose first new copy is Ready and the next two are loading stays progressing",
			build: func(c *cluster) {
				d := c.deployment("reco", 3, 2, "", 9*24*time.Hour)
				d.Spec.Template.Spec.Containers[0].ReadinessProbe = readinessHTTP(intstr.FromString("http"), 20)
				old := c.replicaSet(d, 1, 1, 9*24*time.Hour, func(t *corev1.PodTemplateSpec) {
					t.Spec.Containers[0].Image = "registry.example/reco:0.9.0"
				})
				cur := c.replicaSet(d, 2, 3, 4*minute, nil)
				rolloutStarted(d, reasonReplicaSetUpdated, cur.Name, 90*time.Second)
				c.pod(old, "a1b2c", 9*24*time.Hour, running(true))
				c.pod(cur, "d4f5g", 4*minute, running(true))
				for _, s := range []string{"h6j7k", "l8m9n"} {
					p := c.pod(cur, s, 100*time.Second, running(false))
					c.event("Pod", p.Name, p.UID, corev1.EventTypeWarning, "Unhealthy", readiness503, 6, 5*time.Second)
					c.logs(p, "2026-11-24 11:58:31,018 INFO reco.model: loading item embeddings (48113920 x 64, float16)")
				}
			},
			wantShape: ShapeProgressing,
		},
		{
			name: "new copies that have not become Ready and log no error stay progressing",
			build: func(c *cluster) {
				d := c.deployment("reco", 1, 1, "", 3*minute)
				d.Spec.Template.Spec.Containers[0].ReadinessProbe = readinessHTTP(intstr.FromString("http"), 0)
				cur := c.replicaSet(d, 1, 1, 3*minute, nil)
				rolloutStarted(d, reasonNewReplicaSetCreated, cur.Name, 3*minute)
				p := c.pod(cur, "q2r4s", 3*minute, running(false))
				c.event("Pod", p.Name, p.UID, corev1.EventTypeWarning, "Unhealthy", readiness503, 17, 5*time.Second)
				c.logs(p, "2026-11-24 11:58:31,018 INFO reco.model: downloading model from s3://models/reco/")
			},
			wantShape: ShapeProgressing,
		},
		{
			name: "error lines from copies still inside their probe allowance stay progressing, with low-confidence suspects",
			build: func(c *cluster) {
				d := c.deployment("ingester", 2, 2, "", 30*24*time.Hour)
				d.Spec.Template.Spec.Containers[0].ReadinessProbe = readinessHTTP(intstr.FromString("http"), 30)
				d.Spec.Template.Spec.Containers[0].Env[0].Value = "upstream.internal:9443"
				old := c.replicaSet(d, 1, 2, 30*24*time.Hour, func(t *corev1.PodTemplateSpec) {
					t.Spec.Containers[0].Env[0].Value = "upstream.internal:8443"
				})
				cur := c.replicaSet(d, 2, 1, 40*time.Second, nil)
				rolloutStarted(d, reasonReplicaSetUpdated, cur.Name, 40*time.Second)
				c.pod(old, "a1b2c", 30*24*time.Hour, running(true))
				c.pod(old, "c3d4f", 30*24*time.Hour, running(true))
				p := c.pod(cur, "g5h6j", 40*time.Second, running(false))
				c.logs(p, "2026-11-24T11:59:40.120Z ERROR ingest: flush failed: dial tcp 10.96.14.7:9443: connect: connection refused")
			},
			wantShape: ShapeProgressing, wantTop: "spec.template.spec.containers[0].env[0].value", wantLow: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			tt.build(c)
			r := Diagnose(c.s)
			if len(r.Workloads) != 1 {
				t.Fatalf("got %d workloads, want 1", len(r.Workloads))
			}
			d := r.Workloads[0]
			t.Logf("%s; fix: %s", d.Headline, d.Fix)
			for _, s := range d.Suspects {
				t.Logf("suspect %s %s=%q (was %q) %s: %s", s.Rule, s.Path, s.Value, s.PreviousValue, s.Confidence, s.Reason)
			}
			if d.Shape != tt.wantShape {
				t.Fatalf("shape = %s, want %s (%s)", d.Shape, tt.wantShape, d.Headline)
			}
			if tt.wantTop == "" {
				if len(d.Suspects) != 0 {
					t.Fatalf("suspects = %v, want none", d.Suspects)
				}
				return
			}
			if len(d.Suspects) == 0 || d.Suspects[0].Path.String() != tt.wantTop {
				t.Fatalf("suspects = %v, want %s first", d.Suspects, tt.wantTop)
			}
			if tt.wantCause != "" && d.Cause != tt.wantCause {
				t.Errorf("cause = %s, want %s", d.Cause, tt.wantCause)
			}
			for _, s := range d.Suspects {
				if tt.wantLow && s.Confidence != ConfidenceLow {
					t.Errorf("suspect %s confidence %s on a progressing row, want low", s.Path, s.Confidence)
				}
			}
		})
	}
}

// TestWarmUpIsTheProbesAllowance: a copy is warming up only for as long as its own probes and
// the endpoint publication allow, not for a fixed two minutes.
func TestWarmUpIsTheProbesAllowance(t *testing.T) {
	tests := []struct {
		name      string
		build     func(c *cluster)
		wantShape Shape
	}{
		{
			name: "copies Ready for a minute that are not ready endpoints of their Service are idle",
			build: func(c *cluster) {
				d := c.deployment("web", 2, 1, reasonNewRSAvailable, 20*24*time.Hour)
				rs := c.replicaSet(d, 1, 2, 20*24*time.Hour, nil)
				a := c.pod(rs, "k2m4p", 90*time.Second, running(true))
				b := c.pod(rs, "r5t7v", 90*time.Second, running(true))
				svc := c.service("web", "web")
				c.endpointSlice(svc, 8080, map[*corev1.Pod]bool{a: false, b: false})
			},
			wantShape: ShapeLiveButIdle,
		},
		{
			name: "a copy that was Ready and lost its upstream a minute after starting is idle",
			build: func(c *cluster) {
				d := c.deployment("web", 1, 1, reasonNewRSAvailable, 20*24*time.Hour)
				rs := c.replicaSet(d, 1, 1, 20*24*time.Hour, nil)
				p := c.pod(rs, "k2m4p", 100*time.Second, func(p *corev1.Pod) {
					running(false)(p)
					p.Status.Conditions[0].LastTransitionTime = ago(40 * time.Second)
				})
				c.event("Pod", p.Name, p.UID, corev1.EventTypeWarning, "Unhealthy", readiness503, 4, 5*time.Second)
				c.logs(p, "2026-11-24T11:59:30.120Z ERROR upstream: dial tcp 10.96.14.7:8443: connect: connection refused")
			},
			wantShape: ShapeLiveButIdle,
		},
		{
			name: "a copy Ready ten seconds ago and not yet an endpoint is warming up",
			build: func(c *cluster) {
				d := c.deployment("web", 1, 1, reasonNewRSAvailable, 20*24*time.Hour)
				rs := c.replicaSet(d, 1, 1, 20*24*time.Hour, nil)
				p := c.pod(rs, "k2m4p", 20*time.Second, func(p *corev1.Pod) {
					running(true)(p)
					p.Status.Conditions[0].LastTransitionTime = ago(10 * time.Second)
				})
				svc := c.service("web", "web")
				c.endpointSlice(svc, 8080, map[*corev1.Pod]bool{p: false})
			},
			wantShape: ShapeProgressing,
		},
		{
			name: "a copy not Ready inside its readiness probe's allowance is warming up",
			build: func(c *cluster) {
				d := c.deployment("web", 1, 1, reasonNewRSAvailable, 20*24*time.Hour)
				d.Spec.Template.Spec.Containers[0].ReadinessProbe = readinessHTTP(intstr.FromString("http"), 20)
				rs := c.replicaSet(d, 1, 1, 20*24*time.Hour, nil)
				c.pod(rs, "k2m4p", 60*time.Second, running(false))
			},
			wantShape: ShapeProgressing,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			tt.build(c)
			d := c.diagnoseOne("web")
			if d == nil {
				t.Fatal("no diagnosis of Deployment web")
			}
			if d.Shape != tt.wantShape {
				t.Fatalf("shape = %s, want %s (%s)", d.Shape, tt.wantShape, d.Headline)
			}
		})
	}
}

// oomLooping is a copy whose container is OOMKilled every runFor after it starts: restarts
// kills so far, the last one `lastKill` ago, and Ready again since `readyFor` when it is running.
func oomLooping(restarts int32, runFor, lastKill time.Duration, runningSince time.Duration) podState {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		lt := &corev1.ContainerStateTerminated{
			Reason: "OOMKilled", ExitCode: 137,
			StartedAt: ago(lastKill + runFor), FinishedAt: ago(lastKill),
		}
		cs := corev1.ContainerStatus{Name: "app", RestartCount: restarts, LastTerminationState: corev1.ContainerState{Terminated: lt}}
		if runningSince > 0 {
			t := true
			cs.Ready, cs.Started = true, &t
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: ago(runningSince)}
			setReady(p, true, ago(runningSince-2*time.Second))
		} else {
			f := false
			cs.Started = &f
			cs.State.Waiting = &corev1.ContainerStateWaiting{
				Reason:  "CrashLoopBackOff",
				Message: "back-off 1m20s restarting failed container=app pod=" + p.Name + "_" + p.Namespace + "(" + string(p.UID) + ")",
			}
			setReady(p, false, ago(lastKill))
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
	}
}

// TestBrieflyReadyDidNotServe: a fresh Deployment OOMKilled from its first minutes, whose copies
// are Ready for seconds between kills, never served: its cause is not a dependency.
func TestBrieflyReadyDidNotServe(t *testing.T) {
	const minute = time.Minute
	c := newCluster()
	d := c.deployment("resizer", 3, 1, "", 5*minute)
	rs := c.replicaSet(d, 1, 3, 5*minute, nil)
	// What the controllers wrote during a moment when every copy was Ready between kills.
	rs.Status.ReadyReplicas, rs.Status.AvailableReplicas = 1, 1
	d.Status.Conditions = []appsv1.DeploymentCondition{{
		Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: reasonNewRSAvailable,
		Message:        fmt.Sprintf("ReplicaSet %q has successfully progressed.", rs.Name),
		LastUpdateTime: ago(3 * minute), LastTransitionTime: ago(3 * minute),
	}}
	// Four kills in five minutes: runs of ~20 s, back-off 10, 20, 40, 80 s.
	c.pod(rs, "a2b4c", 5*minute, oomLooping(4, 20*time.Second, 95*time.Second, 15*time.Second))
	c.pod(rs, "d5f7g", 5*minute, oomLooping(4, 20*time.Second, 30*time.Second, 0))
	c.pod(rs, "h8j9k", 5*minute, oomLooping(3, 20*time.Second, 70*time.Second, 0))
	got := c.diagnoseOne("resizer")
	if got.Shape != ShapeStartsAndDies {
		t.Fatalf("shape = %s, want starts-and-dies (%s)", got.Shape, got.Headline)
	}
	if got.Revisions == nil || got.Revisions.LastServing != "" {
		t.Errorf("revisions = %+v, want no last serving revision", got.Revisions)
	}
	if len(got.Suspects) == 0 || got.Suspects[0].Path.String() != "spec.template.spec.containers[0].resources.limits.memory" {
		t.Fatalf("suspects = %v, want limits.memory first", got.Suspects)
	}
	// OOM is an outside rule: with nothing ever served, nothing shows the input fit before.
	if got.Cause != CauseUnknown {
		t.Errorf("cause = %s, want unknown", got.Cause)
	}
}

func TestBriefReadyOnly(t *testing.T) {
	const minute = time.Minute
	tests := []struct {
		name string
		age  time.Duration
		st   podState
		want bool
	}{
		{"never restarted", 5 * minute, running(true), false},
		{"a crash loop since the copy started", 5 * minute, oomLooping(4, 20*time.Second, 95*time.Second, 15*time.Second), true},
		{"three days old, crashing for ten minutes", 72 * time.Hour, oomLooping(6, 40*time.Second, 20*time.Second, 0), false},
		{"Ready again for a quarter of an hour after its last kill", 40 * minute, oomLooping(4, 20*time.Second, 15*minute, 15*minute-time.Second), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: testNS, CreationTimestamp: ago(tt.age)}}
			p.Status.StartTime = agoPtr(tt.age - time.Second)
			tt.st(p)
			c := facts.ReadCopy(p)
			if got := c.BriefReadyOnly(testRef); got != tt.want {
				t.Errorf("BriefReadyOnly = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestWarmingCopyWithErrorsListsSuspects: a replacement copy still inside its probe allowance
// is warming up, but its error lines already name the field to look at, at low confidence.
func TestWarmingCopyWithErrorsListsSuspects(t *testing.T) {
	c := newCluster()
	d := c.deployment("web", 1, 1, reasonNewRSAvailable, 20*24*time.Hour)
	d.Spec.Template.Spec.Containers[0].ReadinessProbe = readinessHTTP(intstr.FromString("http"), 20)
	rs := c.replicaSet(d, 1, 1, 20*24*time.Hour, nil)
	p := c.pod(rs, "k2m4p", 40*time.Second, running(false))
	c.logs(p, "2026-11-24T11:59:40.120Z ERROR upstream: dial tcp 10.96.14.7:8443: connect: connection refused")
	got := c.diagnoseOne("web")
	if got.Shape != ShapeProgressing {
		t.Fatalf("shape = %s, want progressing (%s)", got.Shape, got.Headline)
	}
	if len(got.Suspects) == 0 || got.Suspects[0].Path.String() != "spec.template.spec.containers[0].env[0].value" {
		t.Fatalf("suspects = %v, want env[0].value first", got.Suspects)
	}
	for _, s := range got.Suspects {
		if s.Confidence != ConfidenceLow {
			t.Errorf("suspect %s confidence %s on a progressing row, want low", s.Path, s.Confidence)
		}
	}
	if got.Cause != CauseUnknown {
		t.Errorf("cause = %s, want unknown on a progressing row", got.Cause)
	}
}

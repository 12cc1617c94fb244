package diagnose

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// TestShapeRules covers each shape rule of issue 2 on small constructed clusters, including the
// healthy distractors (old restarts, a rollout in progress, scaled to zero).
func TestShapeRules(t *testing.T) {
	const (
		day    = 24 * time.Hour
		hour   = time.Hour
		minute = time.Minute
	)
	pullMsg := `rpc error: code = NotFound desc = failed to pull and unpack image "registry.example/web:1.0.l": failed to resolve image: registry.example/web:1.0.l: not found`
	tests := []struct {
		name      string
		build     func(c *cluster)
		wantShape Shape
		// wantCounts is checked when set.
		wantCounts *Counts
		// wantEvidence names an evidence kind that must be present.
		wantEvidence string
	}{
		{
			name: "every copy Ready is healthy",
			build: func(c *cluster) {
				d := c.deployment("web", 3, 1, reasonNewRSAvailable, 3*day)
				rs := c.replicaSet(d, 1, 3, 3*day, nil)
				for _, s := range []string{"a", "b", "c"} {
					c.pod(rs, s, 3*day, running(true))
				}
			},
			wantShape: ShapeHealthy, wantCounts: &Counts{Declared: 3, Existing: 3, Serving: 3},
		},
		{
			name: "an OOMKill three days ago followed by days of Ready stays healthy",
			build: func(c *cluster) {
				d := c.deployment("web", 2, 1, reasonNewRSAvailable, 8*day)
				rs := c.replicaSet(d, 1, 2, 8*day, nil)
				c.pod(rs, "a", 8*day, running(true))
				c.pod(rs, "b", 8*day, restartedOnce("OOMKilled", 3*day))
			},
			wantShape: ShapeHealthy, wantCounts: &Counts{Declared: 2, Existing: 2, Serving: 2, Restarts: 1},
			wantEvidence: "OOMKilled",
		},
		{
			name: "scaled to zero is healthy",
			build: func(c *cluster) {
				d := c.deployment("web", 0, 1, reasonNewRSAvailable, 30*day)
				c.replicaSet(d, 1, 0, 30*day, nil)
			},
			wantShape: ShapeHealthy, wantCounts: &Counts{},
		},
		{
			name: "a rollout inside its deadline with copies warming up is progressing",
			build: func(c *cluster) {
				d := c.deployment("web", 2, 2, reasonReplicaSetUpdated, 5*day)
				old := c.replicaSet(d, 1, 1, 5*day, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "registry.example/web:0.9.0" })
				cur := c.replicaSet(d, 2, 2, 3*minute, nil)
				c.pod(old, "a", 5*day, running(true))
				c.pod(cur, "b", 3*minute, running(true))
				c.pod(cur, "c", 1*minute, running(false))
			},
			wantShape: ShapeProgressing, wantCounts: &Counts{Declared: 2, Existing: 3, Serving: 2},
		},
		{
			name: "an image that does not exist never starts, even inside the deadline",
			build: func(c *cluster) {
				d := c.deployment("web", 2, 2, reasonReplicaSetUpdated, 5*day)
				old := c.replicaSet(d, 1, 2, 5*day, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "registry.example/web:1.0.0" })
				cur := c.replicaSet(d, 2, 1, 4*minute, nil)
				c.pod(old, "a", 5*day, running(true))
				c.pod(old, "b", 5*day, running(true))
				c.pod(cur, "c", 4*minute, waiting("ErrImagePull", pullMsg))
			},
			wantShape: ShapeNeverStarts, wantCounts: &Counts{Declared: 2, Existing: 3, Serving: 2},
			wantEvidence: "ImagePullBackOff",
		},
		{
			name: "a secret key that does not exist never starts",
			build: func(c *cluster) {
				d := c.deployment("web", 1, 1, reasonTimedOut, 20*minute)
				rs := c.replicaSet(d, 1, 1, 20*minute, nil)
				c.pod(rs, "a", 20*minute, waiting("CreateContainerConfigError", "couldn't find key passwd in Secret shop/db"))
			},
			wantShape: ShapeNeverStarts, wantEvidence: "CreateContainerConfigError",
		},
		{
			name: "an unschedulable copy never starts",
			build: func(c *cluster) {
				d := c.deployment("web", 1, 1, reasonTimedOut, 20*minute)
				rs := c.replicaSet(d, 1, 1, 20*minute, nil)
				c.pod(rs, "a", 20*minute, unschedulable("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."))
			},
			wantShape: ShapeNeverStarts, wantEvidence: "Unschedulable",
		},
		{
			name: "a quota FailedCreate with zero pods never starts although status is self-consistent",
			build: func(c *cluster) {
				d := c.deployment("web", 3, 1, reasonReplicaSetUpdated, 20*minute)
				d.Status.Conditions[0].LastUpdateTime = ago(20 * minute)
				d.Status.Conditions = append(d.Status.Conditions, appsv1.DeploymentCondition{
					Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
					Message: `pods "web-abc001-x" is forbidden: exceeded quota: compute, requested: limits.memory=64Mi, used: limits.memory=1Gi, limited: limits.memory=1Gi`,
				})
				c.replicaSet(d, 1, 3, 20*minute, nil)
			},
			wantShape: ShapeNeverStarts, wantCounts: &Counts{Declared: 3}, wantEvidence: "FailedCreate",
		},
		{
			name: "an executable that is not in the image never starts despite restarts",
			build: func(c *cluster) {
				d := c.deployment("web", 1, 1, reasonTimedOut, 20*minute)
				rs := c.replicaSet(d, 1, 1, 20*minute, nil)
				c.pod(rs, "a", 20*minute, func(p *corev1.Pod) {
					crashLooping("StartError", 128, 5)(p)
					p.Status.ContainerStatuses[0].LastTerminationState.Terminated.Message = `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: exec: "serve": executable file not found in $PATH`
				})
			},
			wantShape: ShapeNeverStarts,
		},
		{
			name: "CrashLoopBackOff after OOMKilled starts and dies",
			build: func(c *cluster) {
				d := c.deployment("web", 2, 1, reasonNewRSAvailable, 3*day)
				rs := c.replicaSet(d, 1, 2, 3*day, nil)
				c.pod(rs, "a", 3*day, crashLooping("OOMKilled", 137, 6))
				c.pod(rs, "b", 3*day, crashLooping("OOMKilled", 137, 6))
			},
			wantShape: ShapeStartsAndDies, wantCounts: &Counts{Declared: 2, Existing: 2, Restarts: 12},
			wantEvidence: "OOMKilled",
		},
		{
			name: "a stuck rollout takes the failing revision's shape while the old one serves",
			build: func(c *cluster) {
				d := c.deployment("web", 2, 2, reasonTimedOut, 5*day)
				old := c.replicaSet(d, 1, 2, 5*day, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "registry.example/web:0.9.0" })
				cur := c.replicaSet(d, 2, 1, 30*minute, nil)
				c.pod(old, "a", 5*day, running(true))
				c.pod(old, "b", 5*day, running(true))
				c.pod(cur, "c", 30*minute, crashLooping("Error", 1, 9))
			},
			wantShape: ShapeStartsAndDies, wantCounts: &Counts{Declared: 2, Existing: 3, Serving: 2, Restarts: 9},
		},
		{
			name: "a stuck rollout whose old copies cover the count takes the new revision's shape",
			build: func(c *cluster) {
				d := c.deployment("web", 2, 2, reasonTimedOut, 5*day)
				old := c.replicaSet(d, 1, 2, 5*day, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "registry.example/web:0.9.0" })
				cur := c.replicaSet(d, 2, 1, 30*minute, nil)
				c.pod(old, "a", 5*day, running(true))
				c.pod(old, "b", 5*day, running(true))
				c.pod(cur, "c", 30*minute, running(false))
			},
			wantShape: ShapeLiveButIdle, wantCounts: &Counts{Declared: 2, Existing: 3, Serving: 2},
		},
		{
			name: "every copy young while the count returns to target is churn",
			build: func(c *cluster) {
				d := c.deployment("web", 2, 1, reasonNewRSAvailable, 3*day)
				rs := c.replicaSet(d, 1, 2, 3*day, nil)
				c.pod(rs, "a", 3*minute, running(true))
				c.pod(rs, "b", 2*minute, running(true))
				c.event("ReplicaSet", rs.Name, rs.UID, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: "+rs.Name+"-z", 14, time.Minute)
			},
			wantShape: ShapeStartsAndDies,
		},
		{
			name: "running copies that never get Ready after the deadline are live but idle",
			build: func(c *cluster) {
				d := c.deployment("web", 3, 1, reasonTimedOut, 20*minute)
				rs := c.replicaSet(d, 1, 3, 20*minute, nil)
				for _, s := range []string{"a", "b", "c"} {
					c.pod(rs, s, 20*minute, running(false))
				}
				c.event("Pod", rs.Name+"-a", "", corev1.EventTypeWarning, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 404", 120, time.Minute)
			},
			wantShape: ShapeLiveButIdle, wantCounts: &Counts{Declared: 3, Existing: 3},
			wantEvidence: "NotReady",
		},
		{
			name: "Ready copies that no Service endpoint serves are live but idle",
			build: func(c *cluster) {
				d := c.deployment("web", 2, 1, reasonNewRSAvailable, 6*day)
				rs := c.replicaSet(d, 1, 2, 6*day, nil)
				c.pod(rs, "a", 6*day, running(true))
				c.pod(rs, "b", 6*day, running(true))
				svc := c.service("web", "wbe")
				c.endpointSlice(svc, 8080, nil)
			},
			wantShape: ShapeLiveButIdle, wantCounts: &Counts{Declared: 2, Existing: 2},
			wantEvidence: "SelectorMatchesNoCopy",
		},
		{
			name: "a copy just started outside any rollout is still warming up",
			build: func(c *cluster) {
				d := c.deployment("web", 2, 1, reasonNewRSAvailable, 6*day)
				rs := c.replicaSet(d, 1, 2, 6*day, nil)
				c.pod(rs, "a", 6*day, running(true))
				c.pod(rs, "b", 30*time.Second, running(false))
			},
			wantShape: ShapeProgressing,
		},
		{
			name: "missing copies with no signal are unknown, not healthy",
			build: func(c *cluster) {
				d := c.deployment("web", 3, 1, reasonNewRSAvailable, 6*day)
				rs := c.replicaSet(d, 1, 3, 6*day, nil)
				c.pod(rs, "a", 6*day, running(true))
			},
			wantShape: ShapeUnknown, wantCounts: &Counts{Declared: 3, Existing: 1, Serving: 1},
		},
		{
			name: "ContainerCreating for minutes never starts",
			build: func(c *cluster) {
				d := c.deployment("web", 1, 1, reasonReplicaSetUpdated, 6*minute)
				rs := c.replicaSet(d, 1, 1, 6*minute, nil)
				c.pod(rs, "a", 6*minute, waiting("ContainerCreating", ""))
				c.event("Pod", rs.Name+"-a", "", corev1.EventTypeWarning, "FailedMount",
					`MountVolume.SetUp failed for volume "config" : configmap "web-config" not found`, 5, time.Minute)
			},
			wantShape: ShapeNeverStarts, wantEvidence: "FailedMount",
		},
		{
			name: "ContainerCreating for seconds inside a rollout is progressing",
			build: func(c *cluster) {
				d := c.deployment("web", 1, 1, reasonReplicaSetUpdated, 20*time.Second)
				rs := c.replicaSet(d, 1, 1, 20*time.Second, nil)
				c.pod(rs, "a", 20*time.Second, waiting("ContainerCreating", ""))
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
				t.Fatal("no diagnosis for Deployment web")
			}
			if d.Shape != tt.wantShape {
				t.Errorf("shape = %s, want %s; headline %q", d.Shape, tt.wantShape, d.Headline)
			}
			if tt.wantCounts != nil && d.Counts != *tt.wantCounts {
				t.Errorf("counts = %+v, want %+v", d.Counts, *tt.wantCounts)
			}
			if tt.wantEvidence != "" && !hasEvidence(d, tt.wantEvidence) {
				t.Errorf("no %s evidence in %v", tt.wantEvidence, evidenceKinds(d))
			}
			if !tt.wantShape.Broken() && len(d.Suspects) > 0 {
				t.Errorf("%s workload has suspects %v", d.Shape, d.Suspects)
			}
			if !tt.wantShape.Broken() && d.Cause != CauseUnknown {
				t.Errorf("cause = %s on a %s workload, want unknown", d.Cause, d.Shape)
			}
		})
	}
}

func hasEvidence(d *Diagnosis, kind string) bool {
	for _, e := range d.Evidence {
		if e.Kind == kind {
			return true
		}
	}
	return false
}

func evidenceKinds(d *Diagnosis) []string {
	var out []string
	for _, e := range d.Evidence {
		out = append(out, e.Kind+"("+string(e.Source)+")")
	}
	return out
}

// TestEvidenceAggregatesCopies: the same fault on every copy is one evidence item naming all
// the copies, not one item per pod.
func TestEvidenceAggregatesCopies(t *testing.T) {
	c := newCluster()
	d := c.deployment("web", 4, 1, reasonTimedOut, time.Hour)
	rs := c.replicaSet(d, 1, 4, time.Hour, nil)
	for i, s := range []string{"a", "b", "c", "d"} {
		reason := "ErrImagePull"
		if i%2 == 1 {
			reason = "ImagePullBackOff"
		}
		c.pod(rs, s, time.Hour, waiting(reason, `failed to pull and unpack image "registry.example/web:1.0.0": not found`))
	}
	got := c.diagnoseOne("web")
	var pull []Evidence
	for _, e := range got.Evidence {
		if e.Source == SourcePodStatus {
			pull = append(pull, e)
		}
	}
	if len(pull) != 1 {
		t.Fatalf("pod-status evidence items = %d (%v), want 1", len(pull), evidenceKinds(got))
	}
	if pull[0].Count != 4 || len(pull[0].Objects) != 4 {
		t.Errorf("evidence covers %d copies (%v), want 4", pull[0].Count, pull[0].Objects)
	}
	if len(got.Detail.Copies()) != 4 {
		t.Errorf("copies = %d, want 4", len(got.Detail.Copies()))
	}
	for _, cp := range got.Detail.Copies() {
		if cp.Reason != "ErrImagePull" && cp.Reason != "ImagePullBackOff" {
			t.Errorf("copy %s reason = %q", cp.Name, cp.Reason)
		}
	}
}

// TestFailedCreateEventOfCurrentRevision: a FailedCreate event on the current ReplicaSet with no
// copies is never-starts; the same event on a replaced ReplicaSet is history.
func TestFailedCreateEventOfCurrentRevision(t *testing.T) {
	const msg = `Error creating: pods "web-abc002-" is forbidden: error looking up service account shop/web: serviceaccount "web" not found`
	for _, tt := range []struct {
		name    string
		onOld   bool
		want    Shape
		wantEvi bool
	}{
		{name: "on the current ReplicaSet", want: ShapeNeverStarts, wantEvi: true},
		{name: "on a replaced ReplicaSet", onOld: true, want: ShapeHealthy},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			d := c.deployment("web", 1, 2, reasonNewRSAvailable, 24*time.Hour)
			old := c.replicaSet(d, 1, 0, 24*time.Hour, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image += "-old" })
			cur := c.replicaSet(d, 2, 1, 30*time.Minute, nil)
			target := cur
			if tt.onOld {
				target = old
				c.pod(cur, "a", 30*time.Minute, running(true))
			}
			c.event("ReplicaSet", target.Name, target.UID, corev1.EventTypeWarning, "FailedCreate", msg, 7, time.Minute)
			got := c.diagnoseOne("web")
			if got.Shape != tt.want {
				t.Errorf("shape = %s, want %s (%s)", got.Shape, tt.want, got.Headline)
			}
			controller := false
			for _, e := range got.Evidence {
				controller = controller || e.Kind == "FailedCreate" && e.Source == SourceControllerStatus
			}
			if controller != tt.wantEvi {
				t.Errorf("controller FailedCreate evidence = %v, want %v (%v)", controller, tt.wantEvi, evidenceKinds(got))
			}
		})
	}
}

// TestRecentRestartSettles: one restart half an hour ago followed by a Ready run is healthy; the
// same with restarts piling up, or a copy not yet Ready again, is starts-and-dies.
//
// TestOneRestartWhileStarting (below) holds a restart in the copy's first moments to the
// same verdict after minutes, not half an hour.
func TestRecentRestartSettles(t *testing.T) {
	for _, tt := range []struct {
		name     string
		restarts int32
		ready    bool
		want     Shape
	}{
		{name: "one restart, Ready since", restarts: 1, ready: true, want: ShapeHealthy},
		{name: "restarts piling up", restarts: 4, ready: true, want: ShapeStartsAndDies},
		{name: "not Ready again", restarts: 1, ready: false, want: ShapeStartsAndDies},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			d := c.deployment("web", 1, 1, reasonNewRSAvailable, 24*time.Hour)
			rs := c.replicaSet(d, 1, 1, 24*time.Hour, nil)
			c.pod(rs, "a", 24*time.Hour, func(p *corev1.Pod) {
				restartedOnce("Error", 30*time.Minute)(p)
				cs := &p.Status.ContainerStatuses[0]
				cs.RestartCount, cs.Ready = tt.restarts, tt.ready
				if !tt.ready {
					p.Status.Conditions[0].Status = corev1.ConditionFalse
				}
			})
			if got := c.diagnoseOne("web"); got.Shape != tt.want {
				t.Errorf("shape = %s, want %s (%s)", got.Shape, tt.want, got.Headline)
			}
		})
	}
}

// TestEventGroupingKey: events of one signal group together although they name different pods,
// back-off durations and addresses, or carry the correlator's "combined" prefix.
func TestEventGroupingKey(t *testing.T) {
	ev := func(obj, msg string) *corev1.Event {
		return &corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: "ReplicaSet", Name: obj}, Message: msg}
	}
	same := []*corev1.Event{
		ev("web-7b47ddbc88", `Error creating: pods "web-7b47ddbc88-vlm98" is forbidden: exceeded quota: compute`),
		ev("web-7b47ddbc88", `Error creating: pods "web-7b47ddbc88-rxwwz" is forbidden: exceeded quota: compute`),
		ev("web-7b47ddbc88", `(combined from similar events): Error creating: pods "web-7b47ddbc88-g4fgb" is forbidden: exceeded quota: compute`),
	}
	for _, e := range same[1:] {
		if a, b := normalizeEventMessage(same[0]), normalizeEventMessage(e); a != b {
			t.Errorf("keys differ:\n%s\n%s", a, b)
		}
	}
	probe := func(ip string) *corev1.Event {
		return ev("web-abc-x1", `Liveness probe failed: Get "http://`+ip+`:8081/healthz": dial tcp `+ip+`:8081: connect: connection refused`)
	}
	if normalizeEventMessage(probe("10.244.1.2")) != normalizeEventMessage(probe("10.244.7.9")) {
		t.Error("probe failures on two pod IPs do not group")
	}
	if normalizeEventMessage(ev("a", "Readiness probe failed: connection refused")) == normalizeEventMessage(ev("a", "Liveness probe failed: connection refused")) {
		t.Error("readiness and liveness failures group together")
	}
}

// TestLogEvidence: failure lines from copies that do not serve become one signal per pattern
// across copies; info lines, kubectl's own "Request log error" and serving copies' logs do not.
func TestLogEvidence(t *testing.T) {
	c := newCluster()
	d := c.deployment("web", 3, 1, reasonTimedOut, time.Hour)
	rs := c.replicaSet(d, 1, 3, time.Hour, nil)
	a := c.pod(rs, "a", time.Hour, running(false))
	b := c.pod(rs, "b", time.Hour, running(false))
	ok := c.pod(rs, "c", time.Hour, running(true))
	refused := func(n int, ip string) string {
		return fmt.Sprintf(`{"level":"warn","ts":"2026-11-24T11:%02d:00Z","msg":"upstream dial failed","attempt":%d,"error":"dial tcp 10.96.14.7:9443: connect: connection refused","peer":"%s"}`, n, n, ip)
	}
	c.s.Logs = []snapshot.ContainerLog{
		{Namespace: testNS, Pod: a.Name, Container: "app", Lines: []string{
			`{"level":"info","msg":"starting"}`, refused(1, "10.244.0.1"), refused(2, "10.244.0.1"),
			`2026/11/24 11:02:00 [error] 34#34: *1 open() "/usr/share/nginx/html/healthz" failed (2: No such file or directory), client: 10.244.3.1`,
		}},
		{Namespace: testNS, Pod: b.Name, Container: "app", Lines: []string{refused(3, "10.244.0.2"), "Request log error: container is waiting to start"}},
		{Namespace: testNS, Pod: ok.Name, Container: "app", Lines: []string{`{"level":"error","msg":"unrelated failure on a serving copy"}`}},
	}
	got := c.diagnoseOne("web")
	var logs []Evidence
	for _, e := range got.Evidence {
		if e.Source == SourceLog {
			logs = append(logs, e)
		}
	}
	if len(logs) != 2 {
		t.Fatalf("log evidence = %+v, want the refused pattern and the nginx line", logs)
	}
	if logs[0].Count != 3 || len(logs[0].Objects) != 2 || !strings.Contains(logs[0].Message, "connection refused") {
		t.Errorf("first log signal = %+v, want connection refused, 3 lines on 2 copies", logs[0])
	}
	for _, e := range logs {
		if strings.Contains(e.Message, "serving copy") || strings.Contains(e.Message, "Request log error") || strings.Contains(e.Message, "starting") {
			t.Errorf("unexpected log signal %q", e.Message)
		}
	}
}

// TestOneRestartWhileStarting: a copy that restarted once in its first seconds (its
// dependency was not up yet) and has been Ready and serving for minutes is healthy, its
// restart a note; a second restart, or one long after the start, keeps the dying shape until
// it settles, and a copy not past its probes' allowance since is not yet proven.
func TestOneRestartWhileStarting(t *testing.T) {
	const minute = time.Minute
	for _, tt := range []struct {
		name           string
		age, died, run time.Duration
		restarts       int32
		want           Shape
	}{
		{name: "one restart 5s after the start, Ready 4 minutes since", age: 4*minute + 20*time.Second, died: 4*minute + 15*time.Second, run: 4 * minute, restarts: 1, want: ShapeHealthy},
		{name: "a StatefulSet-like slow start: restart at 40s, Ready 6 minutes since", age: 7 * minute, died: 6*minute + 20*time.Second, run: 6 * minute, restarts: 1, want: ShapeHealthy},
		{name: "two restarts while starting", age: 5 * minute, died: 4*minute + 30*time.Second, run: 4 * minute, restarts: 2, want: ShapeStartsAndDies},
		{name: "one restart an hour into its life, running 4 minutes", age: 2 * time.Hour, died: 4*minute + 5*time.Second, run: 4 * minute, restarts: 1, want: ShapeStartsAndDies},
		{name: "one restart while starting, running 20s", age: 40 * time.Second, died: 25 * time.Second, run: 20 * time.Second, restarts: 1, want: ShapeStartsAndDies},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			d := c.deployment("web", 1, 1, reasonNewRSAvailable, 30*24*time.Hour)
			rs := c.replicaSet(d, 1, 1, 30*24*time.Hour, nil)
			c.pod(rs, "a", tt.age, func(p *corev1.Pod) {
				running(true)(p)
				p.Status.StartTime = agoPtr(tt.age)
				cs := &p.Status.ContainerStatuses[0]
				cs.RestartCount = tt.restarts
				cs.State.Running.StartedAt = ago(tt.run)
				cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, StartedAt: ago(tt.age), FinishedAt: ago(tt.died)}
				setReady(p, true, ago(tt.run-10*time.Second))
			})
			got := c.diagnoseOne("web")
			if got.Shape != tt.want {
				t.Errorf("shape = %s, want %s (%s)", got.Shape, tt.want, got.Headline)
			}
			if tt.want == ShapeHealthy && got.Counts.Restarts != tt.restarts {
				t.Errorf("restarts = %d, want the restart counted as a note", got.Counts.Restarts)
			}
		})
	}
}

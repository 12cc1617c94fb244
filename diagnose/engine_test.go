package diagnose

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestShapeRules covers each shape rule of issue 2 on small constructed clusters, including the
// healthy distractors (old restarts, a rollout in progress, scaled to zero).
func TestShapeRules(t *testing.T) {
	const (
		day  = 24 * time.Hour
		hour = time.Hour
		min  = time.Minute
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
				cur := c.replicaSet(d, 2, 2, 3*min, nil)
				c.pod(old, "a", 5*day, running(true))
				c.pod(cur, "b", 3*min, running(true))
				c.pod(cur, "c", 1*min, running(false))
			},
			wantShape: ShapeProgressing, wantCounts: &Counts{Declared: 2, Existing: 3, Serving: 2},
		},
		{
			name: "an image that does not exist never starts, even inside the deadline",
			build: func(c *cluster) {
				d := c.deployment("web", 2, 2, reasonReplicaSetUpdated, 5*day)
				old := c.replicaSet(d, 1, 2, 5*day, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "registry.example/web:1.0.0" })
				cur := c.replicaSet(d, 2, 1, 4*min, nil)
				c.pod(old, "a", 5*day, running(true))
				c.pod(old, "b", 5*day, running(true))
				c.pod(cur, "c", 4*min, waiting("ErrImagePull", pullMsg))
			},
			wantShape: ShapeNeverStarts, wantCounts: &Counts{Declared: 2, Existing: 3, Serving: 2},
			wantEvidence: "ImagePullBackOff",
		},
		{
			name: "a secret key that does not exist never starts",
			build: func(c *cluster) {
				d := c.deployment("web", 1, 1, reasonTimedOut, 20*min)
				rs := c.replicaSet(d, 1, 1, 20*min, nil)
				c.pod(rs, "a", 20*min, waiting("CreateContainerConfigError", "couldn't find key passwd in Secret shop/db"))
			},
			wantShape: ShapeNeverStarts, wantEvidence: "CreateContainerConfigError",
		},
		{
			name: "an unschedulable copy never starts",
			build: func(c *cluster) {
				d := c.deployment("web", 1, 1, reasonTimedOut, 20*min)
				rs := c.replicaSet(d, 1, 1, 20*min, nil)
				c.pod(rs, "a", 20*min, unschedulable("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."))
			},
			wantShape: ShapeNeverStarts, wantEvidence: "Unschedulable",
		},
		{
			name: "a quota FailedCreate with zero pods never starts although status is self-consistent",
			build: func(c *cluster) {
				d := c.deployment("web", 3, 1, reasonReplicaSetUpdated, 20*min)
				d.Status.Conditions[0].LastUpdateTime = ago(20 * min)
				d.Status.Conditions = append(d.Status.Conditions, appsv1.DeploymentCondition{
					Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
					Message: `pods "web-abc001-x" is forbidden: exceeded quota: compute, requested: limits.memory=64Mi, used: limits.memory=1Gi, limited: limits.memory=1Gi`})
				c.replicaSet(d, 1, 3, 20*min, nil)
			},
			wantShape: ShapeNeverStarts, wantCounts: &Counts{Declared: 3}, wantEvidence: "FailedCreate",
		},
		{
			name: "an executable that is not in the image never starts despite restarts",
			build: func(c *cluster) {
				d := c.deployment("web", 1, 1, reasonTimedOut, 20*min)
				rs := c.replicaSet(d, 1, 1, 20*min, nil)
				c.pod(rs, "a", 20*min, func(p *corev1.Pod) {
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
				cur := c.replicaSet(d, 2, 1, 30*min, nil)
				c.pod(old, "a", 5*day, running(true))
				c.pod(old, "b", 5*day, running(true))
				c.pod(cur, "c", 30*min, crashLooping("Error", 1, 9))
			},
			wantShape: ShapeStartsAndDies, wantCounts: &Counts{Declared: 2, Existing: 3, Serving: 2, Restarts: 9},
		},
		{
			name: "every copy young while the count returns to target is churn",
			build: func(c *cluster) {
				d := c.deployment("web", 2, 1, reasonNewRSAvailable, 3*day)
				rs := c.replicaSet(d, 1, 2, 3*day, nil)
				c.pod(rs, "a", 3*min, running(true))
				c.pod(rs, "b", 2*min, running(true))
				c.event("ReplicaSet", rs.Name, rs.UID, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: "+rs.Name+"-z", 14, time.Minute)
			},
			wantShape: ShapeStartsAndDies,
		},
		{
			name: "running copies that never get Ready after the deadline are live but idle",
			build: func(c *cluster) {
				d := c.deployment("web", 3, 1, reasonTimedOut, 20*min)
				rs := c.replicaSet(d, 1, 3, 20*min, nil)
				for _, s := range []string{"a", "b", "c"} {
					c.pod(rs, s, 20*min, running(false))
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
				d := c.deployment("web", 1, 1, reasonReplicaSetUpdated, 6*min)
				rs := c.replicaSet(d, 1, 1, 6*min, nil)
				c.pod(rs, "a", 6*min, waiting("ContainerCreating", ""))
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
	if len(got.Detail.Copies) != 4 {
		t.Errorf("copies = %d, want 4", len(got.Detail.Copies))
	}
	for _, cp := range got.Detail.Copies {
		if cp.Reason != "ErrImagePull" && cp.Reason != "ImagePullBackOff" {
			t.Errorf("copy %s reason = %q", cp.Name, cp.Reason)
		}
	}
}

// TestCountsServiceEndpoints: serving means Ready and, when a Service selects the workload, a
// ready endpoint of it on a port a container exposes.
func TestCountsServiceEndpoints(t *testing.T) {
	tests := []struct {
		name        string
		port        int32
		readyInMesh []bool // per copy: is it a ready endpoint (absent when shorter)
		noSlices    bool
		want        int32
		evidence    string
	}{
		{name: "ready endpoints on the exposed port serve", port: 8080, readyInMesh: []bool{true, true, true}, want: 3},
		{name: "a not-ready endpoint does not serve", port: 8080, readyInMesh: []bool{true, false, true}, want: 2},
		{name: "a Ready pod missing from the slice does not serve", port: 8080, readyInMesh: []bool{true}, want: 1},
		{name: "endpoints on a port no container exposes do not serve", port: 9090, readyInMesh: []bool{true, true, true}, want: 0},
		{name: "without EndpointSlices Ready copies count and the gap is said", noSlices: true, want: 3, evidence: "NoEndpointSlices"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			d := c.deployment("web", 3, 1, reasonNewRSAvailable, 24*time.Hour)
			rs := c.replicaSet(d, 1, 3, 24*time.Hour, nil)
			var pods []*corev1.Pod
			for _, s := range []string{"a", "b", "c"} {
				pods = append(pods, c.pod(rs, s, 24*time.Hour, running(true)))
			}
			svc := c.service("web", "web")
			if !tt.noSlices {
				eps := map[*corev1.Pod]bool{}
				for i, r := range tt.readyInMesh {
					eps[pods[i]] = r
				}
				c.endpointSlice(svc, tt.port, eps)
			}
			got := c.diagnoseOne("web")
			if got.Counts.Serving != tt.want {
				t.Errorf("serving = %d, want %d", got.Counts.Serving, tt.want)
			}
			if got.Counts.Existing != 3 {
				t.Errorf("existing = %d, want 3", got.Counts.Existing)
			}
			if tt.evidence != "" && !hasEvidence(got, tt.evidence) {
				t.Errorf("no %s evidence in %v", tt.evidence, evidenceKinds(got))
			}
		})
	}
}

// TestCountsExcludeFinishedCopies: terminating, evicted and completed pods are not existing
// copies (the controllers do not count them either), but they stay in the copy list.
func TestCountsExcludeFinishedCopies(t *testing.T) {
	c := newCluster()
	d := c.deployment("web", 2, 1, reasonNewRSAvailable, 24*time.Hour)
	rs := c.replicaSet(d, 1, 2, 24*time.Hour, nil)
	c.pod(rs, "a", 24*time.Hour, running(true))
	c.pod(rs, "b", 24*time.Hour, running(true))
	c.pod(rs, "c", 24*time.Hour, func(p *corev1.Pod) {
		running(true)(p)
		p.DeletionTimestamp = agoPtr(10 * time.Second)
	})
	c.pod(rs, "d", 24*time.Hour, func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.Reason = "Evicted"
	})
	got := c.diagnoseOne("web")
	if got.Counts.Existing != 2 || got.Counts.Serving != 2 {
		t.Errorf("counts = %+v, want 2 existing, 2 serving", got.Counts)
	}
	if len(got.Detail.Copies) != 4 {
		t.Errorf("copy list has %d entries, want 4", len(got.Detail.Copies))
	}
	if got.YoungestCopySeconds == nil || *got.YoungestCopySeconds != int64(24*time.Hour/time.Second) {
		t.Errorf("youngest = %v, want %d", got.YoungestCopySeconds, int64(24*time.Hour/time.Second))
	}
}

// TestRevisionsLastServing checks the rule that names the last serving revision.
func TestRevisionsLastServing(t *testing.T) {
	tests := []struct {
		name            string
		oldLived        time.Duration
		oldReady        bool
		wantLastServing string
		wantChanged     []string
	}{
		{name: "an old revision that still has Ready copies served", oldLived: 5 * time.Minute, oldReady: true,
			wantLastServing: "1", wantChanged: []string{"spec.template.spec.containers[0].env[0].value"}},
		{name: "an old revision that ran for hours before being replaced is presumed to have served", oldLived: 4 * time.Hour,
			wantLastServing: "1", wantChanged: []string{"spec.template.spec.containers[0].env[0].value"}},
		{name: "an old revision replaced within the deadline with no copies left did not serve", oldLived: 3 * time.Minute,
			wantLastServing: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			d := c.deployment("web", 1, 2, reasonTimedOut, 10*time.Hour)
			d.Spec.Template.Spec.Containers[0].Env[0].Value = "upstream.internal:9443"
			old := c.replicaSet(d, 1, 0, 20*time.Minute+tt.oldLived, func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Env[0].Value = "upstream.internal:8443"
			})
			cur := c.replicaSet(d, 2, 1, 20*time.Minute, nil)
			if tt.oldReady {
				old.Spec.Replicas = int32p(1)
				c.pod(old, "a", 20*time.Minute+tt.oldLived, running(true))
			}
			c.pod(cur, "b", 20*time.Minute, running(false))
			got := c.diagnoseOne("web")
			if got.Revisions == nil {
				t.Fatal("no revisions")
			}
			if got.Revisions.Current != "2" {
				t.Errorf("current = %q, want 2", got.Revisions.Current)
			}
			if got.Revisions.LastServing != tt.wantLastServing {
				t.Errorf("lastServing = %q, want %q", got.Revisions.LastServing, tt.wantLastServing)
			}
			if strings.Join(got.Revisions.ChangedPaths, ",") != strings.Join(tt.wantChanged, ",") {
				t.Errorf("changedPaths = %v, want %v", got.Revisions.ChangedPaths, tt.wantChanged)
			}
		})
	}
}

// TestRevisionsCurrentServedBefore: a single revision whose copies were Ready once (their Ready
// condition went False hours after they started) served; nothing changed since.
func TestRevisionsCurrentServedBefore(t *testing.T) {
	c := newCluster()
	d := c.deployment("web", 1, 1, reasonNewRSAvailable, 7*time.Hour)
	rs := c.replicaSet(d, 1, 1, 7*time.Hour, nil)
	c.pod(rs, "a", 7*time.Hour, func(p *corev1.Pod) {
		running(false)(p)
		p.Status.Conditions[0].LastTransitionTime = ago(9 * time.Minute)
	})
	got := c.diagnoseOne("web")
	if got.Shape != ShapeLiveButIdle {
		t.Errorf("shape = %s, want live-but-idle", got.Shape)
	}
	if got.Revisions.LastServing != "1" || len(got.Revisions.ChangedPaths) != 0 {
		t.Errorf("revisions = %+v, want last serving 1 and no changes", got.Revisions)
	}
	if !hasEvidence(got, "UnchangedSinceServing") {
		t.Errorf("no UnchangedSinceServing evidence in %v", evidenceKinds(got))
	}
}

// TestDiffTemplates checks the structural diff: struct fields by JSON name, map keys as [key],
// list elements as [i], a field set on one side only as one change, quantities by value, and
// the pod-template-hash label ignored.
func TestDiffTemplates(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(t *corev1.PodTemplateSpec)
		want   []Change
	}{
		{name: "identical templates", mutate: func(*corev1.PodTemplateSpec) {}},
		{name: "env value", mutate: func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Env[0].Value = "upstream.internal:9443" },
			want: []Change{{Path: p("spec.template.spec.containers[0].env[0].value"), Previous: "upstream.internal:8443", Current: "upstream.internal:9443"}}},
		{name: "memory limit by quantity", mutate: func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("128Mi")
		}, want: []Change{{Path: p("spec.template.spec.containers[0].resources.limits[memory]"), Previous: "64Mi", Current: "128Mi"}}},
		{name: "equal quantities written differently do not differ", mutate: func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("65536Ki")
		}},
		{name: "added envFrom is one change at the list", mutate: func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "flags"}}}}
		}, want: []Change{{Path: p("spec.template.spec.containers[0].envFrom"), Previous: "", Current: `[{"configMapRef":{"name":"flags"}}]`}}},
		{name: "label by key, pod-template-hash ignored", mutate: func(t *corev1.PodTemplateSpec) {
			t.Labels["version"] = "2"
			t.Labels[podTemplateHashLabel] = "ffff"
		}, want: []Change{{Path: p("spec.template.metadata.labels[version]"), Previous: "", Current: "2"}}},
		{name: "added container by index", mutate: func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers = append(t.Spec.Containers, corev1.Container{Name: "sidecar", Image: "sidecar:1"})
		}, want: []Change{{Path: p("spec.template.spec.containers[1]"), Previous: "", Current: `{"name":"sidecar","image":"sidecar:1","resources":{}}`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := basicTemplate("web")
			prev.Labels[podTemplateHashLabel] = "abc001"
			cur := *prev.DeepCopy()
			tt.mutate(&cur)
			w := &workload{Template: &cur, TemplatePath: p("spec.template")}
			w.cls.Current = &revision{Number: 2, Template: &cur}
			w.cls.LastServing = &revision{Number: 1, Template: &prev}
			w.diffRevisions()
			if len(w.Changes) != len(tt.want) {
				t.Fatalf("changes = %v, want %v", w.Changes, tt.want)
			}
			for i := range tt.want {
				g, wnt := w.Changes[i], tt.want[i]
				if g.Path.String() != wnt.Path.String() || g.Previous != wnt.Previous || g.Current != wnt.Current {
					t.Errorf("change %d = %s %q→%q, want %s %q→%q", i, g.Path, g.Previous, g.Current, wnt.Path, wnt.Previous, wnt.Current)
				}
			}
		})
	}
}

// TestPathsRelated: a suspect is implicated by a change at its path, above it or below it, with
// map keys written either as [key] or as a field.
func TestPathsRelated(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"spec.template.spec.containers[0].env[0].value", "spec.template.spec.containers[0].env[0].value", true},
		{"spec.template.spec.containers[0].envFrom[0].configMapRef.name", "spec.template.spec.containers[0].envFrom", true},
		{"spec.template.spec.containers[0].resources", "spec.template.spec.containers[0].resources.limits[memory]", true},
		{"spec.template.spec.containers[0].resources.limits.memory", "spec.template.spec.containers[0].resources.limits[memory]", true},
		{"spec.template.spec.containers[0].env[1].value", "spec.template.spec.containers[0].env[10].value", false},
		{"spec.template.spec.containers[0].image", "spec.template.spec.containers[0].imagePullPolicy", false},
		{"spec.template.spec.containers[1].image", "spec.template.spec.containers[0].image", false},
	}
	for _, tt := range tests {
		if got := pathsRelated(tt.a, tt.b); got != tt.want {
			t.Errorf("pathsRelated(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestDecideCause covers the cause rule: spec when the failing revision changed the implicated
// field or the fault is intrinsic to the spec or lies in another object's spec; dependency when
// an outside failure hits a spec unchanged since it served; unknown when nothing is attributable.
func TestDecideCause(t *testing.T) {
	cur := &revision{Number: 2}
	old := &revision{Number: 1}
	envPath := "spec.template.spec.containers[0].env[0].value"
	tests := []struct {
		name        string
		shape       Shape
		lastServing *revision
		changes     []string
		top         *Suspect
		want        Cause
	}{
		{name: "healthy has nothing to attribute", shape: ShapeHealthy, lastServing: cur, want: CauseUnknown},
		{name: "progressing has nothing to attribute", shape: ShapeProgressing, lastServing: old,
			top: &Suspect{Object: "Deployment/web", Path: p(envPath), Rule: RuleNamedInFailure}, want: CauseUnknown},
		{name: "changed field named by the failure is spec", shape: ShapeLiveButIdle, lastServing: old, changes: []string{envPath},
			top: &Suspect{Object: "Deployment/web", Path: p(envPath), Rule: RuleNamedInFailure}, want: CauseSpec},
		{name: "same outside failure on a spec unchanged since it served is dependency", shape: ShapeLiveButIdle, lastServing: cur,
			top: &Suspect{Object: "Deployment/web", Path: p(envPath), Rule: RuleNamedInFailure}, want: CauseDependency},
		{name: "outside failure on a field the new revision did not change is dependency", shape: ShapeLiveButIdle, lastServing: old,
			changes: []string{"spec.template.spec.containers[0].image"},
			top:     &Suspect{Object: "Deployment/web", Path: p(envPath), Rule: RuleNamedInFailure}, want: CauseDependency},
		{name: "outside failure on a workload that never served is unknown", shape: ShapeLiveButIdle,
			top: &Suspect{Object: "Deployment/web", Path: p(envPath), Rule: RuleNamedInFailure}, want: CauseUnknown},
		{name: "a name that does not exist is spec even without history", shape: ShapeNeverStarts,
			top: &Suspect{Object: "Deployment/web", Path: p("spec.template.spec.containers[0].envFrom[0].configMapRef.name"), Rule: RuleEnvRefNotFound}, want: CauseSpec},
		{name: "another object's spec is spec", shape: ShapeLiveButIdle, lastServing: cur,
			top: &Suspect{Object: "Service/web", Path: p("spec.selector"), Rule: RuleServiceSelector}, want: CauseSpec},
		{name: "OOM at a limit unchanged since it served is dependency", shape: ShapeStartsAndDies, lastServing: cur,
			top: &Suspect{Object: "Deployment/web", Path: p("spec.template.spec.containers[0].resources.limits.memory"), Rule: RuleMemoryLimit}, want: CauseDependency},
		{name: "OOM at a limit the new revision lowered is spec", shape: ShapeStartsAndDies, lastServing: old,
			changes: []string{"spec.template.spec.containers[0].resources.limits[memory]"},
			top:     &Suspect{Object: "Deployment/web", Path: p("spec.template.spec.containers[0].resources.limits.memory"), Rule: RuleMemoryLimit}, want: CauseSpec},
		{name: "no suspect on a spec unchanged since it served is dependency", shape: ShapeStartsAndDies, lastServing: cur, want: CauseDependency},
		{name: "no suspect and no history is unknown", shape: ShapeStartsAndDies, want: CauseUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &workload{Kind: "Deployment", Name: "web"}
			w.cls.Current = cur
			w.cls.LastServing = tt.lastServing
			for _, c := range tt.changes {
				w.Changes = append(w.Changes, Change{Path: p(c)})
			}
			if got := decideCause(w, tt.shape, tt.top); got != tt.want {
				t.Errorf("cause = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestCrashLoopWithoutProbeDidNotServe: without a readiness probe each start of a crash loop
// makes the copy Ready for a moment; that is not serving, so a new workload that never stayed
// up has no serving revision.
func TestCrashLoopWithoutProbeDidNotServe(t *testing.T) {
	c := newCluster()
	d := c.deployment("web", 1, 1, reasonTimedOut, time.Hour)
	rs := c.replicaSet(d, 1, 1, time.Hour, nil)
	c.pod(rs, "a", time.Hour, func(p *corev1.Pod) {
		crashLooping("OOMKilled", 137, 12)(p)
		p.Status.Conditions[0].LastTransitionTime = ago(2 * time.Minute)
	})
	got := c.diagnoseOne("web")
	if got.Shape != ShapeStartsAndDies {
		t.Errorf("shape = %s, want starts-and-dies", got.Shape)
	}
	if got.Revisions.LastServing != "" {
		t.Errorf("lastServing = %q, want none", got.Revisions.LastServing)
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

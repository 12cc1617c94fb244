package diagnose

import (
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestRevisionsLastServing checks the rule that names the last serving revision.
func TestRevisionsLastServing(t *testing.T) {
	tests := []struct {
		name            string
		oldLived        time.Duration
		oldReady        bool
		wantLastServing string
		wantChanged     []string
	}{
		{
			name: "an old revision that still has Ready copies served", oldLived: 5 * time.Minute, oldReady: true,
			wantLastServing: "1", wantChanged: []string{"spec.template.spec.containers[0].env[0].value"},
		},
		{
			name: "an old revision that ran for hours before being replaced is presumed to have served", oldLived: 4 * time.Hour,
			wantLastServing: "1", wantChanged: []string{"spec.template.spec.containers[0].env[0].value"},
		},
		{
			name: "an old revision replaced within the deadline with no copies left did not serve", oldLived: 3 * time.Minute,
			wantLastServing: "",
		},
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
		{
			name: "env value", mutate: func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Env[0].Value = "upstream.internal:9443" },
			want: []Change{{Path: p("spec.template.spec.containers[0].env[0].value"), Previous: "upstream.internal:8443", Current: "upstream.internal:9443"}},
		},
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

// TestRevisionServingNowIsServed: a rollout gate reads a Deployment seconds after its update, so
// the old revision's copies have been Ready for less than their warm-up allowance. A copy that is
// Ready and routed to now serves however short its episode is so far; a Ready copy its Service
// routes no traffic to has not shown that it served.
func TestRevisionServingNowIsServed(t *testing.T) {
	const image = "spec.template.spec.containers[0].image"
	pullFails := waiting("ErrImagePull", `failed to pull image "registry.example/web:9.9.9": not found`)
	tests := []struct {
		name     string
		newCopy  podState
		unrouted bool
		wantLast string
	}{
		{name: "the new copies cannot pull", newCopy: pullFails, wantLast: "1"},
		{name: "the new copies crash", newCopy: crashLooping("Error", 2, 2), wantLast: "1"},
		{name: "the Service routes to no old copy", newCopy: pullFails, unrouted: true, wantLast: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			d := c.deployment("web", 2, 2, "ReplicaSetUpdated", 30*time.Second)
			d.Spec.Template.Spec.Containers[0].Image = "registry.example/web:9.9.9"
			old := c.replicaSet(d, 1, 2, 30*time.Second, func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Image = "registry.example/web:1.0.0"
			})
			cur := c.replicaSet(d, 2, 1, 8*time.Second, nil)
			c.pod(old, "a", 20*time.Second, running(true))
			c.pod(old, "b", 20*time.Second, running(true))
			c.pod(cur, "c", 8*time.Second, tt.newCopy)
			if tt.unrouted {
				c.endpointSlice(c.service("web", "web"), 8080, nil)
			}
			got := c.diagnoseOne("web")
			if got.Revisions == nil || got.Revisions.LastServing != tt.wantLast {
				t.Fatalf("revisions = %+v, want last serving %q", got.Revisions, tt.wantLast)
			}
			if tt.wantLast != "" && !slices.Contains(got.Revisions.ChangedPaths, image) {
				t.Errorf("changed paths = %v, want %s", got.Revisions.ChangedPaths, image)
			}
		})
	}
}

// TestControllerRecordOfACompletedRollout: a Deployment's copies were all replaced (a node
// drain) and the replacements cannot pull, so only the controller's record says the revision
// served: its rollout completed (NewReplicaSetAvailable) and it stayed available until the
// Available condition went False. Available False since the very second the rollout completed
// (the times are whole seconds) is no service at all, and the evidence and fix say so.
func TestControllerRecordOfACompletedRollout(t *testing.T) {
	const image = "registry.example/web:1.0.0"
	for _, tt := range []struct {
		name             string
		completedAgo     time.Duration
		unavailableAgo   time.Duration
		wantLast         string
		wantEvidence     string
		wantFixSubstring string
	}{
		{
			name: "available for hours, then the copies were replaced", completedAgo: 5 * time.Hour, unavailableAgo: 3 * time.Minute,
			wantLast: "1", wantEvidence: "UnchangedSinceServing", wantFixSubstring: "unchanged since revision 1 served",
		},
		{
			name: "unavailable the second the rollout completed", completedAgo: 3 * time.Minute, unavailableAgo: 3 * time.Minute,
			wantLast: "", wantEvidence: "NeverServed",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			d := c.deployment("web", 2, 1, reasonNewRSAvailable, 6*time.Hour)
			d.Spec.Template.Spec.Containers[0].Image = image
			rs := c.replicaSet(d, 1, 2, 6*time.Hour, nil)
			completed(d, rs, tt.completedAgo)
			d.Status.Conditions = append(d.Status.Conditions, appsv1.DeploymentCondition{
				Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable",
				Message: "Deployment does not have minimum availability.", LastUpdateTime: ago(tt.unavailableAgo), LastTransitionTime: ago(tt.unavailableAgo),
			})
			msg := `Failed to pull image "` + image + `": failed to resolve image: dial tcp: lookup registry.example on 127.0.0.53:53: no such host`
			c.pod(rs, "a", tt.unavailableAgo, waiting("ErrImagePull", msg))
			c.pod(rs, "b", tt.unavailableAgo, waiting("ErrImagePull", msg))
			got := c.diagnoseOne("web")
			if got.Revisions == nil || got.Revisions.LastServing != tt.wantLast {
				t.Fatalf("revisions = %+v, want last serving %q", got.Revisions, tt.wantLast)
			}
			if !slices.ContainsFunc(got.Evidence, func(e Evidence) bool { return e.Kind == tt.wantEvidence }) {
				t.Errorf("no %s evidence in %+v", tt.wantEvidence, got.Evidence)
			}
			if !strings.Contains(got.Fix, tt.wantFixSubstring) || strings.Contains(got.Fix, "revision  ") {
				t.Errorf("fix %q, want it to contain %q", got.Fix, tt.wantFixSubstring)
			}
		})
	}
}

// TestServedOnlyInItsEarlyLife: the only revision served for minutes, then failed inside its
// early life (its progress deadline). Its service is not a baseline, so no revision is the last
// that served; the evidence says it served and where the failure began, never that no copy of it
// served, and no fix names an empty revision.
func TestServedOnlyInItsEarlyLife(t *testing.T) {
	c := newCluster()
	d := c.deployment("web", 2, 1, reasonNewRSAvailable, 8*time.Minute)
	rs := c.replicaSet(d, 1, 2, 8*time.Minute, nil)
	completed(d, rs, 8*time.Minute-20*time.Second)
	for _, n := range []string{"a", "b"} {
		p := c.pod(rs, n, 8*time.Minute, readyThenNot(5*time.Minute))
		c.logEvery(p, 5*time.Minute, 20*time.Second, func(at time.Time) string {
			return at.UTC().Format(time.RFC3339) + " ERROR dial tcp 10.96.0.40:5432: connect: connection refused"
		})
	}
	got := c.diagnoseOne("web")
	if got.Revisions == nil || got.Revisions.LastServing != "" {
		t.Fatalf("revisions = %+v, want no last serving revision", got.Revisions)
	}
	var msg string
	for _, e := range got.Evidence {
		if e.Kind == "NeverServed" {
			msg = e.Message
		}
	}
	if !strings.Contains(msg, "revision 1 served") || strings.Contains(msg, "no copy of it has served") {
		t.Errorf("NeverServed evidence %q, want it to say revision 1 served and the failure began in its first moments", msg)
	}
	if strings.Contains(got.Fix, "revision  ") {
		t.Errorf("fix %q names an empty revision", got.Fix)
	}
}

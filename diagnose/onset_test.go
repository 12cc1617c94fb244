package diagnose

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// readyThenNot is a copy that ran since its start, was Ready, and stopped being Ready `unready` ago.
func readyThenNot(unready time.Duration) podState {
	return func(p *corev1.Pod) {
		running(false)(p)
		p.Status.Conditions = nil
		setReady(p, false, ago(unready))
	}
}

// logEvery writes lines from `from` ago to now every step, with line(t) giving the text.
func (c *cluster) logEvery(pod *corev1.Pod, from, step time.Duration, line func(t time.Time) string) {
	var lines []string
	for t := testRef.Add(-from); t.Before(testRef); t = t.Add(step) {
		lines = append(lines, line(t))
	}
	c.s.Logs = append(c.s.Logs, snapshot.ContainerLog{Namespace: testNS, Pod: pod.Name, Container: "app", Lines: lines})
}

func completed(d *appsv1.Deployment, rs *appsv1.ReplicaSet, age time.Duration) {
	d.Status.Conditions = []appsv1.DeploymentCondition{{
		Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: reasonNewRSAvailable,
		LastUpdateTime: ago(age), LastTransitionTime: ago(age),
		Message: fmt.Sprintf("ReplicaSet %q has successfully progressed.", rs.Name),
	}}
}

// TestFailureFromARevisionsFirstMoments: copies of a new revision that were Ready for minutes
// but logged, from their first second, the failure they still log did not serve; the cause is
// the revision's change, with the previous value from the revision before. The same failure
// beginning long after a revision served is a dependency.
func TestFailureFromARevisionsFirstMoments(t *testing.T) {
	const minute, day = time.Minute, 24 * time.Hour
	jsonDial := func(endpoint, port string) func(time.Time) string {
		return func(t time.Time) string {
			return fmt.Sprintf(`{"level":"warn","ts":"%s","msg":"upstream dial failed, will retry","endpoint":"%s","error":"dial tcp 10.96.14.7:%s: connect: connection refused"}`,
				t.UTC().Format("2006-01-02T15:04:05.000Z"), endpoint, port)
		}
	}
	plainDB := func(t time.Time) string {
		return t.UTC().Format(time.RFC3339) + " ERROR cannot reach orders-db.internal:5433: connection timed out"
	}
	tests := []struct {
		name string
		// build returns the deployment name.
		build     func(c *cluster)
		wantCause Cause
		wantPath  string
		wantPrev  string
		wantLast  string
	}{
		{
			name: "env endpoint changed, JSON log from the first second, Ready for 3 minutes",
			build: func(c *cluster) {
				d := c.deployment("ingest", 3, 2, "", 10*day)
				d.Spec.Template.Spec.Containers[0].Env[0].Value = "upstream.internal:9443"
				c.replicaSet(d, 1, 0, 10*day, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Env[0].Value = "upstream.internal:8443" })
				cur := c.replicaSet(d, 2, 3, 6*minute, nil)
				completed(d, cur, 5*minute)
				for _, s := range []string{"a", "b", "c"} {
					pod := c.pod(cur, s, 6*minute, readyThenNot(3*minute))
					c.logEvery(pod, 6*minute-2*time.Second, 20*time.Second, jsonDial("upstream.internal:9443", "9443"))
				}
			},
			wantCause: CauseSpec, wantPath: "spec.template.spec.containers[0].env[0].value", wantPrev: "upstream.internal:8443", wantLast: "1",
		},
		{
			name: "args endpoint changed, plain-text log, Ready for 5 minutes",
			build: func(c *cluster) {
				d := c.deployment("orders", 2, 4, "", 30*day)
				d.Spec.Template.Spec.Containers[0].Args = []string{"--db=orders-db.internal:5433"}
				c.replicaSet(d, 3, 0, 20*day, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Args = []string{"--db=orders-db.internal:5432"} })
				cur := c.replicaSet(d, 4, 2, 9*minute, nil)
				completed(d, cur, 8*minute)
				for _, s := range []string{"x", "y"} {
					pod := c.pod(cur, s, 9*minute, readyThenNot(4*minute))
					c.logEvery(pod, 9*minute-3*time.Second, 30*time.Second, plainDB)
				}
			},
			wantCause: CauseSpec, wantPath: "spec.template.spec.containers[0].args[0]", wantPrev: "--db=orders-db.internal:5432", wantLast: "3",
		},
		{
			name: "one revision served for days, the same failure began 9 minutes ago",
			build: func(c *cluster) {
				d := c.deployment("ingest", 3, 1, "", 10*day)
				cur := c.replicaSet(d, 1, 3, 10*day, nil)
				completed(d, cur, 10*day)
				for _, s := range []string{"a", "b", "c"} {
					pod := c.pod(cur, s, 7*day, readyThenNot(8*minute))
					c.logEvery(pod, 9*minute, 20*time.Second, jsonDial("upstream.internal:8443", "8443"))
				}
			},
			wantCause: CauseDependency, wantPath: "spec.template.spec.containers[0].env[0].value", wantPrev: "upstream.internal:8443", wantLast: "1",
		},
		{
			name: "a warning at start-up that is not the failure it logs now leaves the revision served",
			build: func(c *cluster) {
				d := c.deployment("ingest", 2, 2, "", 10*day)
				c.replicaSet(d, 1, 0, 10*day, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "registry.example/ingest:0.9.0" })
				cur := c.replicaSet(d, 2, 2, 3*day, nil)
				completed(d, cur, 3*day)
				for _, s := range []string{"a", "b"} {
					pod := c.pod(cur, s, 3*day, readyThenNot(8*minute))
					start := pod.Status.StartTime.Add(time.Second)
					var lines []string
					lines = append(lines, fmt.Sprintf(`{"level":"warn","ts":"%s","msg":"deprecated setting batch_size, use batch_max_items"}`, start.Format(time.RFC3339Nano)))
					for t := testRef.Add(-9 * minute); t.Before(testRef); t = t.Add(20 * time.Second) {
						lines = append(lines, jsonDial("upstream.internal:8443", "8443")(t))
					}
					c.s.Logs = append(c.s.Logs, snapshot.ContainerLog{Namespace: testNS, Pod: pod.Name, Container: "app", Lines: lines})
				}
			},
			wantCause: CauseDependency, wantPath: "spec.template.spec.containers[0].env[0].value", wantPrev: "upstream.internal:8443", wantLast: "2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			tt.build(c)
			r := Diagnose(c.s)
			if len(r.Workloads) != 1 {
				t.Fatalf("%d workloads", len(r.Workloads))
			}
			d := r.Workloads[0]
			if d.Cause != tt.wantCause {
				t.Errorf("cause = %s, want %s (headline %q, evidence %+v)", d.Cause, tt.wantCause, d.Headline, d.Evidence)
			}
			if d.Revisions == nil || d.Revisions.LastServing != tt.wantLast {
				t.Errorf("revisions = %+v, want last serving %s", d.Revisions, tt.wantLast)
			}
			if len(d.Suspects) == 0 {
				t.Fatalf("no suspects (headline %q)", d.Headline)
			}
			top := d.Suspects[0]
			if top.Path.String() != tt.wantPath || top.PreviousValue != tt.wantPrev {
				t.Errorf("top suspect %s previous %q, want %s previous %q", top.Path, top.PreviousValue, tt.wantPath, tt.wantPrev)
			}
			if tt.wantCause == CauseDependency && strings.Contains(d.Fix, "undo") {
				t.Errorf("dependency with fix %q", d.Fix)
			}
			if tt.wantCause == CauseSpec && (!strings.Contains(d.Fix, "rollout undo") || !strings.Contains(d.Fix, "--to-revision="+tt.wantLast)) {
				t.Errorf("fix = %q, want a rollback to revision %s", d.Fix, tt.wantLast)
			}
		})
	}
}

// TestGoneUnderAServingRevision: a spec unchanged since it served whose copies were recreated
// and now fail on something that went away underneath is a dependency, proven by the
// Deployment's own record: NewReplicaSetAvailable, or its Available condition going False long
// after the rollout with every copy recreated since. A revision crash-looping from its start is
// not taken for one that served.
func TestGoneUnderAServingRevision(t *testing.T) {
	const minute, day = time.Minute, 24 * time.Hour
	tests := []struct {
		name  string
		build func(c *cluster)
		want  Cause
	}{
		{
			name: "Secret deleted, copies recreated: CreateContainerConfigError",
			build: func(c *cluster) {
				d := c.deployment("billing", 2, 1, "", 20*day)
				d.Spec.Template.Spec.Containers[0].Env = append(d.Spec.Template.Spec.Containers[0].Env, corev1.EnvVar{
					Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "billing-db"}, Key: "password",
					}},
				})
				rs := c.replicaSet(d, 1, 2, 20*day, nil)
				completed(d, rs, 20*day)
				c.pod(rs, "a", 4*minute, waiting("CreateContainerConfigError", `secret "billing-db" not found`))
				c.pod(rs, "b", 4*minute, waiting("CreateContainerConfigError", `secret "billing-db" not found`))
			},
			want: CauseDependency,
		},
		{
			name: "optional key removed, copies recreated and crash-looping: the Available condition shows it served",
			build: func(c *cluster) {
				d := c.deployment("flags", 2, 1, "", 20*day)
				rs := c.replicaSet(d, 1, 2, 20*day, nil)
				completed(d, rs, 20*day)
				d.Status.Conditions = append(d.Status.Conditions, appsv1.DeploymentCondition{
					Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable",
					LastTransitionTime: ago(6 * minute), LastUpdateTime: ago(6 * minute), Message: "Deployment does not have minimum availability.",
				})
				// The crash-looping rule ignores NewReplicaSetAvailable (a crash loop can pass for available).
				for _, s := range []string{"a", "b"} {
					pod := c.pod(rs, s, 6*minute, crashLooping("Error", 1, 5))
					c.s.Logs = append(c.s.Logs, snapshot.ContainerLog{
						Namespace: testNS, Pod: pod.Name, Container: "app", Previous: true,
						Lines: []string{"fatal: FEATURE_FLAGS is empty; refusing to start"},
					})
				}
			},
			want: CauseDependency,
		},
		{
			name: "a rollout that timed out: old copies kept it Available, the new revision never served",
			build: func(c *cluster) {
				d := c.deployment("flags", 2, 2, reasonTimedOut, 20*day)
				c.replicaSet(d, 1, 0, 20*day, nil)
				rs := c.replicaSet(d, 2, 2, 3*day, nil)
				d.Status.Conditions = append(d.Status.Conditions, appsv1.DeploymentCondition{
					Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable",
					LastTransitionTime: ago(6 * minute), LastUpdateTime: ago(6 * minute),
				})
				for _, s := range []string{"a", "b"} {
					c.pod(rs, s, 6*minute, crashLooping("Error", 1, 5))
				}
			},
			want: CauseUnknown,
		},
		{
			name: "crash-looping since the rollout: the condition flapped under its first copies",
			build: func(c *cluster) {
				d := c.deployment("flags", 2, 1, "", 20*minute)
				rs := c.replicaSet(d, 1, 2, 20*minute, nil)
				completed(d, rs, 19*minute)
				d.Status.Conditions = append(d.Status.Conditions, appsv1.DeploymentCondition{
					Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable",
					LastTransitionTime: ago(6 * minute), LastUpdateTime: ago(6 * minute),
				})
				for _, s := range []string{"a", "b"} {
					c.pod(rs, s, 20*minute, crashLooping("Error", 1, 7))
				}
			},
			want: CauseUnknown,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			tt.build(c)
			r := Diagnose(c.s)
			d := r.Workloads[0]
			if !d.Shape.Broken() {
				t.Fatalf("shape = %s (%s)", d.Shape, d.Headline)
			}
			if d.Cause != tt.want {
				t.Errorf("cause = %s, want %s (headline %q, fix %q)", d.Cause, tt.want, d.Headline, d.Fix)
			}
			if tt.want != CauseDependency {
				return
			}
			for _, bad := range []string{"undo", "set ", "change "} {
				if strings.Contains(d.Fix, bad) {
					t.Errorf("dependency fix says %q: %s", bad, d.Fix)
				}
			}
			if strings.Contains(d.Headline, "never") {
				t.Errorf("headline of a revision that served: %q", d.Headline)
			}
		})
	}
}

// TestServiceChangedUnderAServingDeployment: a Service meant for a Deployment whose spec (dated
// by managedFields) changed after the Deployment's unchanged revision served is a dependency,
// with the change on the timeline; a Service wrong since it was written is spec.
func TestServiceChangedUnderAServingDeployment(t *testing.T) {
	const minute, day = time.Minute, 24 * time.Hour
	entry := func(manager string, op metav1.ManagedFieldsOperationType, age time.Duration, fields string) metav1.ManagedFieldsEntry {
		at := ago(age)
		return metav1.ManagedFieldsEntry{
			Manager: manager, Operation: op, APIVersion: "v1", Time: &at, FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(fields),
		}
	}
	const selFields = `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{"f:selector":{}}}`
	const portFields = `{"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{"f:targetPort":{}}}}}`
	tests := []struct {
		name     string
		mutate   func(svc *corev1.Service)
		created  time.Duration
		want     Cause
		wantPath string
		dated    bool
	}{
		{
			name: "selector re-applied 25 minutes ago", created: 6 * day, want: CauseDependency, wantPath: "spec.selector", dated: true,
			mutate: func(svc *corev1.Service) {
				svc.Spec.Selector = map[string]string{"app": "web-gw"}
				svc.ManagedFields = []metav1.ManagedFieldsEntry{
					entry("kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate, 6*day, selFields),
					entry("kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate, 25*minute, selFields),
				}
			},
		},
		{
			name: "targetPort edited 12 minutes ago", created: 6 * day, want: CauseDependency, wantPath: "spec.ports[0].targetPort", dated: true,
			mutate: func(svc *corev1.Service) {
				svc.Spec.Ports[0].TargetPort = intstr.FromInt32(9000)
				svc.ManagedFields = []metav1.ManagedFieldsEntry{
					entry("helm", metav1.ManagedFieldsOperationUpdate, 6*day, selFields),
					entry("kubectl-edit", metav1.ManagedFieldsOperationUpdate, 12*minute, portFields),
				}
			},
		},
		{
			name: "selector wrong since the Service was created", created: 25 * minute, want: CauseSpec, wantPath: "spec.selector",
			mutate: func(svc *corev1.Service) {
				svc.Spec.Selector = map[string]string{"app": "web-gw"}
				svc.ManagedFields = []metav1.ManagedFieldsEntry{entry("kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate, 25*minute, selFields)}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			d := c.deployment("web", 2, 1, "", 6*day)
			rs := c.replicaSet(d, 1, 2, 6*day, nil)
			completed(d, rs, 6*day)
			a := c.pod(rs, "a", 6*day, running(true))
			b := c.pod(rs, "b", 6*day, running(true))
			svc := c.service("web", "web")
			svc.CreationTimestamp = ago(tt.created)
			tt.mutate(svc)
			ready := map[*corev1.Pod]bool{}
			if svc.Spec.Selector["app"] == "web" {
				ready = map[*corev1.Pod]bool{a: true, b: true}
			}
			c.endpointSlice(svc, 9000, ready)
			if svc.Spec.Selector["app"] != "web" {
				c.s.EndpointSlices[len(c.s.EndpointSlices)-1].Endpoints = nil
			}
			dg := c.diagnoseOne("web")
			if dg == nil || len(dg.Suspects) == 0 {
				t.Fatalf("no suspects: %+v", dg)
			}
			if top := dg.Suspects[0]; top.Object != "Service/web" || top.Path.String() != tt.wantPath {
				t.Fatalf("top suspect = %s %s, want Service/web %s", top.Object, top.Path, tt.wantPath)
			}
			if dg.Cause != tt.want {
				t.Errorf("cause = %s, want %s (fix %q)", dg.Cause, tt.want, dg.Fix)
			}
			dated := false
			for _, e := range dg.Timeline {
				dated = dated || e.Kind == TimelineDependency && e.Object == "Service/web"
			}
			if dated != tt.dated {
				t.Errorf("timeline has the Service's change: %v, want %v (%+v)", dated, tt.dated, dg.Timeline)
			}
		})
	}
}

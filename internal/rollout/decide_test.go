package rollout

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// fixture reads one of the fixture dumps a real v1.37 API server wrote.
func fixture(t *testing.T, id string) *snapshot.Snapshot {
	t.Helper()
	s, err := dump.Source{Path: filepath.Join("..", "..", "testdata", "fixtures", id, "dump")}.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// withDeployment returns a copy of s whose deployment name is changed by edit, as the next
// watch event would show it.
func withDeployment(s *snapshot.Snapshot, name string, edit func(*appsv1.Deployment)) *snapshot.Snapshot {
	// A new read: the copy builds its own indexes.
	out := &snapshot.Snapshot{
		ReferenceTime: s.ReferenceTime, Namespaces: s.Namespaces, Source: s.Source, Visibility: s.Visibility,
		StatefulSets: s.StatefulSets, DaemonSets: s.DaemonSets,
		ReplicaSets: s.ReplicaSets, ControllerRevisions: s.ControllerRevisions, Pods: s.Pods, Events: s.Events,
		Services: s.Services, PersistentVolumeClaims: s.PersistentVolumeClaims, Nodes: s.Nodes,
		ResourceQuotas: s.ResourceQuotas, EndpointSlices: s.EndpointSlices, Logs: s.Logs,
	}
	for _, d := range s.Deployments {
		if d.Name == name {
			d = d.DeepCopy()
			edit(d)
		}
		out.Deployments = append(out.Deployments, d)
	}
	return out
}

// applied is the moment after `kubectl apply` changed the spec: generation ahead of what the
// controller has observed.
func applied(d *appsv1.Deployment) { d.Generation++ }

func observe(t *testing.T, s *snapshot.Snapshot, tg Target, at time.Time) Observation {
	t.Helper()
	at2 := *s
	at2.ReferenceTime = at
	st, found, err := ReadStatus(&at2, tg)
	if err != nil || !found {
		t.Fatalf("read status of %s: found %v, %v", tg.Ref(), found, err)
	}
	return Observation{At: at, Status: st, Diagnosis: diagnose.Diagnose(&at2).Find(tg.Kind, tg.Namespace, tg.Name)}
}

func TestDecideFailsAtOnceOnAFailureShape(t *testing.T) {
	tests := []struct {
		fixture, name string
		shape         diagnose.Shape
	}{
		// Three old copies still serve: the controller's status alone says "1 of 4 updated"
		// and would wait for the deadline.
		{"invalid-image", "storefront", diagnose.ShapeNeverStarts},
		{"readiness-port", "inventory", diagnose.ShapeLiveButIdle},
		{"liveness", "session-cache", diagnose.ShapeStartsAndDies},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			s := fixture(t, tt.fixture)
			tg := Target{Kind: "Deployment", Namespace: "fixture-" + tt.fixture, Name: tt.name}
			d := &Decider{Settle: 5 * time.Second}
			got := d.Decide(observe(t, s, tg, s.ReferenceTime))
			if got.Phase != PhaseFailed || !strings.HasPrefix(got.Why, string(tt.shape)+": ") {
				t.Errorf("decision = %+v, want failed with %s", got, tt.shape)
			}
		})
	}
}

func TestDecideReadsTheProgressDeadlineAsFailed(t *testing.T) {
	s := fixture(t, "old-restarts")
	tg := Target{Kind: "Deployment", Namespace: "fixture-old-restarts", Name: "pricing"}
	// The controller gave up (it would write this with the copies still Ready under maxUnavailable 0).
	s = withDeployment(s, "pricing", func(d *appsv1.Deployment) {
		d.Status.UpdatedReplicas = 1
		for i := range d.Status.Conditions {
			if c := &d.Status.Conditions[i]; c.Type == appsv1.DeploymentProgressing {
				c.Status, c.Reason = corev1.ConditionFalse, "ProgressDeadlineExceeded"
				c.Message = `ReplicaSet "pricing-5d8f9c7b6d" has timed out progressing.`
			}
		}
	})
	got := (&Decider{}).Decide(observe(t, s, tg, s.ReferenceTime))
	if got.Phase != PhaseFailed || !strings.Contains(got.Why, "exceeded its progress deadline") {
		t.Errorf("decision = %+v, want failed on the deadline", got)
	}
}

func TestDecideSucceedsOnlyAfterTheSettlePeriodWithoutABreak(t *testing.T) {
	s := fixture(t, "old-restarts")
	tg := Target{Kind: "Deployment", Namespace: "fixture-old-restarts", Name: "pricing"}
	pending := withDeployment(s, "pricing", applied)
	t0 := s.ReferenceTime
	d := &Decider{Settle: 10 * time.Second}
	steps := []struct {
		snap  *snapshot.Snapshot
		after time.Duration
		want  Phase
	}{
		{pending, 0, PhaseProgressing},
		{s, 1 * time.Second, PhaseSettling},
		{s, 9 * time.Second, PhaseSettling},
		// A break restarts the settle clock: done must hold for the whole period.
		{pending, 10 * time.Second, PhaseProgressing},
		{s, 12 * time.Second, PhaseSettling},
		{s, 21 * time.Second, PhaseSettling},
		{s, 22 * time.Second, PhaseSucceeded},
	}
	for i, st := range steps {
		got := d.Decide(observe(t, st.snap, tg, t0.Add(st.after)))
		if got.Phase != st.want {
			t.Fatalf("step %d at +%s: %+v, want %s", i, st.after, got, st.want)
		}
	}
}

func TestDecideWaitsWhileDoneButNotServing(t *testing.T) {
	s := fixture(t, "service-port")
	tg := Target{Kind: "Deployment", Namespace: "fixture-service-port", Name: "search-api"}
	o := observe(t, s, tg, s.ReferenceTime)
	if !o.Status.Done {
		t.Fatalf("the controller's status is not done: %+v", o.Status)
	}
	// Every copy is available to the controller, yet the Service sends them nothing.
	got := (&Decider{}).Decide(o)
	if got.Phase != PhaseFailed || !strings.HasPrefix(got.Why, "live-but-idle") {
		t.Errorf("decision = %+v, want failed live-but-idle though the controller is done", got)
	}
}

func TestDecideWithAThroughputQuery(t *testing.T) {
	s := fixture(t, "old-restarts")
	tg := Target{Kind: "Deployment", Namespace: "fixture-old-restarts", Name: "pricing"}
	o := observe(t, s, tg, s.ReferenceTime)
	o.Output = &Output{Producing: false, Detail: "0 requests/s over 30s"}
	if got := (&Decider{}).Decide(o); got.Phase != PhaseProgressing || !strings.Contains(got.Why, "0 requests/s") {
		t.Errorf("not producing: %+v, want progressing naming the measurement", got)
	}
	o.Output = &Output{Producing: true, Detail: "41 requests/s over 30s"}
	if got := (&Decider{}).Decide(o); got.Phase != PhaseSucceeded {
		t.Errorf("producing, no settle: %+v, want succeeded", got)
	}
}

func TestDefaultSettle(t *testing.T) {
	probe := func(period int32) *corev1.Probe { return &corev1.Probe{PeriodSeconds: period} }
	tmpl := func(probes ...*corev1.Probe) *corev1.PodTemplateSpec {
		t := &corev1.PodTemplateSpec{}
		for _, p := range probes {
			t.Spec.Containers = append(t.Spec.Containers, corev1.Container{ReadinessProbe: p})
		}
		return t
	}
	tests := []struct {
		name     string
		minReady int32
		tmpl     *corev1.PodTemplateSpec
		want     time.Duration
	}{
		{"one probe", 0, tmpl(probe(5)), 5 * time.Second},
		{"minReadySeconds and the slowest probe", 10, tmpl(probe(3), nil, probe(7)), 17 * time.Second},
		{"no readiness probe: the kubelet's default period", 0, tmpl(nil), 10 * time.Second},
		{"a probe without a period: the default", 4, tmpl(probe(0)), 14 * time.Second},
		{"no template", 0, nil, 10 * time.Second},
	}
	for _, tt := range tests {
		if got := DefaultSettle(tt.minReady, tt.tmpl); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestReadStatusOfADeployment(t *testing.T) {
	s := fixture(t, "old-restarts")
	tg := Target{Kind: "Deployment", Namespace: "fixture-old-restarts", Name: "pricing"}
	tests := []struct {
		name string
		edit func(*appsv1.Deployment)
		done bool
		msg  string
	}{
		{"complete", func(*appsv1.Deployment) {}, true, "3 of 3 updated replicas available"},
		{"spec not observed", applied, false, "waiting for the deployment spec update to be observed"},
		{"new replicas missing", func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 1 }, false, "1 of 3 new replicas updated"},
		{"old replicas left", func(d *appsv1.Deployment) { d.Status.Replicas = 4 }, false, "1 old replicas pending termination"},
		{"not available yet", func(d *appsv1.Deployment) { d.Status.AvailableReplicas = 2 }, false, "2 of 3 updated replicas available"},
		{"scaled up", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](5) }, false, "3 of 5 new replicas updated"},
	}
	for _, tt := range tests {
		st, found, err := ReadStatus(withDeployment(s, "pricing", tt.edit), tg)
		if err != nil || !found {
			t.Fatalf("%s: found %v, %v", tt.name, found, err)
		}
		if st.Done != tt.done || st.Message != tt.msg {
			t.Errorf("%s: done %v %q, want %v %q", tt.name, st.Done, st.Message, tt.done, tt.msg)
		}
	}
	if _, found, err := ReadStatus(s, Target{Kind: "Deployment", Namespace: "fixture-old-restarts", Name: "nope"}); found || err != nil {
		t.Errorf("a missing deployment: found %v, %v", found, err)
	}
	if _, _, err := ReadStatus(s, Target{Kind: "ReplicaSet", Namespace: "fixture-old-restarts", Name: "pricing"}); err == nil {
		t.Error("a ReplicaSet has a rollout status")
	}
}

func TestReadStatusOfOtherKinds(t *testing.T) {
	ds := fixture(t, "daemonset")
	st, found, err := ReadStatus(ds, Target{Kind: "DaemonSet", Namespace: "fixture-daemonset", Name: "fluent-bit"})
	if err != nil || !found || !st.Done || st.Declared != 3 {
		t.Errorf("daemonset: %+v found %v, %v; want done with 3 declared", st, found, err)
	}
	sts := &snapshot.Snapshot{StatefulSets: []*appsv1.StatefulSet{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: "pg", Generation: 2},
		Spec: appsv1.StatefulSetSpec{
			Replicas:       ptr.To[int32](3),
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
		},
		Status: appsv1.StatefulSetStatus{
			ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, UpdatedReplicas: 1,
			CurrentRevision: "pg-7c9f8d6b5", UpdateRevision: "pg-6b8d7c5f4",
		},
	}}}
	tg := Target{Kind: "StatefulSet", Namespace: "db", Name: "pg"}
	if st, _, err := ReadStatus(sts, tg); err != nil || st.Done || st.Message != "1 of 3 new replicas updated" {
		t.Errorf("statefulset mid-update: %+v, %v", st, err)
	}
	sts.StatefulSets[0].Status.UpdatedReplicas, sts.StatefulSets[0].Status.CurrentRevision = 3, "pg-6b8d7c5f4"
	if st, _, err := ReadStatus(sts, tg); err != nil || !st.Done {
		t.Errorf("statefulset updated: %+v, %v", st, err)
	}
	sts.StatefulSets[0].Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType
	if _, _, err := ReadStatus(sts, tg); err == nil || !strings.Contains(err.Error(), "OnDelete") {
		t.Errorf("OnDelete: %v, want an error naming OnDelete", err)
	}
}

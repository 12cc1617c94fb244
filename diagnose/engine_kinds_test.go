package diagnose

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// controllerRevision stores a template the way the StatefulSet and DaemonSet controllers do:
// a strategic-merge patch that replaces the whole template.
func (c *cluster) controllerRevision(owner metav1.Object, kind string, number int64, hash string, tmpl corev1.PodTemplateSpec, age time.Duration) *appsv1.ControllerRevision {
	raw, err := json.Marshal(map[string]any{"spec": map[string]any{"template": tmpl}})
	if err != nil {
		panic(err)
	}
	raw = []byte(strings.Replace(string(raw), `"template":{`, `"template":{"$patch":"replace",`, 1))
	t := true
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name: owner.GetName() + "-" + hash, Namespace: testNS, UID: c.nextUID(), CreationTimestamp: ago(age),
			Labels:          map[string]string{"app": owner.GetName(), controllerRevisionKey: hash},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: owner.GetName(), UID: owner.GetUID(), Controller: &t}},
		},
		Data:     runtime.RawExtension{Raw: raw},
		Revision: number,
	}
	c.s.ControllerRevisions = append(c.s.ControllerRevisions, cr)
	return cr
}

// ownedPod adds a pod controlled directly by a StatefulSet or DaemonSet.
func (c *cluster) ownedPod(owner metav1.Object, kind, name, revLabel string, age time.Duration, state podState) *corev1.Pod {
	t := true
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: testNS, UID: c.nextUID(), CreationTimestamp: ago(age),
			Labels:          map[string]string{"app": owner.GetName(), controllerRevisionKey: revLabel},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: owner.GetName(), UID: owner.GetUID(), Controller: &t}},
		},
		Spec: basicTemplate(owner.GetName()).Spec,
	}
	p.Spec.NodeName = "node-a"
	p.Status.StartTime = agoPtr(age - time.Second)
	state(p)
	c.s.Pods = append(c.s.Pods, p)
	return p
}

// TestStatefulSetRevisions: a StatefulSet's revisions come from ControllerRevisions and the
// pods' full-name controller-revision-hash; a partitioned rollout whose updated copy never gets
// Ready past the deadline is live-but-idle, with the changed field found by the diff.
func TestStatefulSetRevisions(t *testing.T) {
	c := newCluster()
	st := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: testNS, UID: c.nextUID(), Generation: 2, CreationTimestamp: ago(10 * 24 * time.Hour)},
		Spec: appsv1.StatefulSetSpec{
			Replicas: int32p(3), Template: basicTemplate("db"),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
		},
	}
	st.Spec.Template.Spec.Containers[0].Env[0].Value = "upstream.internal:9443"
	old := basicTemplate("db")
	c.controllerRevision(st, "StatefulSet", 1, "5d99fd47cc", old, 10*24*time.Hour)
	c.controllerRevision(st, "StatefulSet", 2, "7c6b5f8d9", st.Spec.Template, 30*time.Minute)
	st.Status = appsv1.StatefulSetStatus{
		ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 1,
		CurrentRevision: "db-5d99fd47cc", UpdateRevision: "db-7c6b5f8d9",
	}
	c.s.StatefulSets = append(c.s.StatefulSets, st)
	c.ownedPod(st, "StatefulSet", "db-0", "db-5d99fd47cc", 10*24*time.Hour, running(true))
	c.ownedPod(st, "StatefulSet", "db-1", "db-5d99fd47cc", 10*24*time.Hour, running(true))
	c.ownedPod(st, "StatefulSet", "db-2", "db-7c6b5f8d9", 30*time.Minute, running(false))

	d := Diagnose(c.s).Find("StatefulSet", testNS, "db")
	if d == nil {
		t.Fatal("no diagnosis for StatefulSet db")
	}
	if d.Shape != ShapeLiveButIdle {
		t.Errorf("shape = %s, want live-but-idle (%s)", d.Shape, d.Headline)
	}
	if d.Counts != (Counts{Declared: 3, Existing: 3, Serving: 2}) {
		t.Errorf("counts = %+v", d.Counts)
	}
	want := Revisions{Current: "2", LastServing: "1", ChangedPaths: []string{"spec.template.spec.containers[0].env[0].value"}}
	if d.Revisions == nil || fmt.Sprint(*d.Revisions) != fmt.Sprint(want) {
		t.Errorf("revisions = %+v, want %+v", d.Revisions, want)
	}
	revs := map[string]string{}
	for _, cp := range d.Detail.Copies() {
		revs[cp.Name] = cp.Revision
	}
	if revs["db-0"] != "1" || revs["db-2"] != "2" {
		t.Errorf("copy revisions = %v, want db-0 at 1 and db-2 at 2", revs)
	}
}

// TestDaemonSetNeverStarts: a DaemonSet declares its desired number scheduled, its pods carry
// only the hash, and the same pull failure on every node is one never-starts diagnosis.
func TestDaemonSetNeverStarts(t *testing.T) {
	c := newCluster()
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: testNS, UID: c.nextUID(), Generation: 1, CreationTimestamp: ago(16 * time.Minute)},
		Spec: appsv1.DaemonSetSpec{
			Template: basicTemplate("agent"),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
		},
		Status: appsv1.DaemonSetStatus{
			ObservedGeneration: 1, DesiredNumberScheduled: 3, CurrentNumberScheduled: 3,
			UpdatedNumberScheduled: 3, NumberUnavailable: 3,
		},
	}
	c.s.DaemonSets = append(c.s.DaemonSets, ds)
	c.controllerRevision(ds, "DaemonSet", 1, "7f875bfc86", ds.Spec.Template, 16*time.Minute)
	for _, n := range []string{"agent-a", "agent-b", "agent-c"} {
		c.ownedPod(ds, "DaemonSet", n, "7f875bfc86", 16*time.Minute, waiting("ImagePullBackOff",
			`Back-off pulling image "registry.corp.example/agent:1.0.0": ErrImagePull: failed to pull and unpack image "registry.corp.example/agent:1.0.0": failed to resolve image: pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed`))
	}
	d := Diagnose(c.s).Find("DaemonSet", testNS, "agent")
	if d == nil {
		t.Fatal("no diagnosis for DaemonSet agent")
	}
	if d.Shape != ShapeNeverStarts {
		t.Errorf("shape = %s, want never-starts", d.Shape)
	}
	if d.Counts != (Counts{Declared: 3, Existing: 3}) {
		t.Errorf("counts = %+v", d.Counts)
	}
	if d.Revisions == nil || d.Revisions.Current != "1" || d.Revisions.LastServing != "" {
		t.Errorf("revisions = %+v, want current 1 and none served", d.Revisions)
	}
	for _, cp := range d.Detail.Copies() {
		if cp.Revision != "1" {
			t.Errorf("copy %s revision = %q, want 1", cp.Name, cp.Revision)
		}
	}
}

// TestOwnerlessReplicaSet: a ReplicaSet no Deployment controls is a workload of its own; one a
// Deployment controls is not.
func TestOwnerlessReplicaSet(t *testing.T) {
	c := newCluster()
	d := c.deployment("web", 1, 1, reasonNewRSAvailable, 24*time.Hour)
	owned := c.replicaSet(d, 1, 1, 24*time.Hour, nil)
	c.pod(owned, "a", 24*time.Hour, running(true))
	lone := c.replicaSet(d, 1, 2, 24*time.Hour, nil)
	lone.Name, lone.OwnerReferences = "batch", nil
	c.pod(lone, "x", 24*time.Hour, running(true))
	c.pod(lone, "y", 24*time.Hour, crashLooping("Error", 1, 3))

	r := Diagnose(c.s)
	if len(r.Workloads) != 2 {
		t.Fatalf("workloads = %d, want the Deployment and the ownerless ReplicaSet", len(r.Workloads))
	}
	got := r.Find("ReplicaSet", testNS, "batch")
	if got == nil {
		t.Fatal("no diagnosis for the ownerless ReplicaSet")
	}
	if got.Shape != ShapeStartsAndDies || got.Counts.Declared != 2 {
		t.Errorf("shape %s counts %+v, want starts-and-dies with 2 declared", got.Shape, got.Counts)
	}
	if r.Find("ReplicaSet", testNS, owned.Name) != nil {
		t.Error("a ReplicaSet controlled by a Deployment was diagnosed on its own")
	}
}

// TestReportOrderSummaryVisibility: workloads worst first then by namespace and name, a summary
// for every shape, and what the source could not read copied into the report and the evidence.
func TestReportOrderSummaryVisibility(t *testing.T) {
	c := newCluster()
	for _, n := range []string{"zeta", "alpha"} {
		d := c.deployment(n, 1, 1, reasonNewRSAvailable, 24*time.Hour)
		rs := c.replicaSet(d, 1, 1, 24*time.Hour, nil)
		c.pod(rs, "a", 24*time.Hour, running(true))
	}
	d := c.deployment("broken", 1, 1, reasonTimedOut, time.Hour)
	rs := c.replicaSet(d, 1, 1, time.Hour, nil)
	c.pod(rs, "a", time.Hour, waiting("CreateContainerConfigError", `secret "x" not found`))
	c.s.Visibility = []snapshot.Visibility{{Kind: "Event", Namespace: testNS, Reason: "forbidden"}}

	r := Diagnose(c.s)
	var order []string
	for _, w := range r.Workloads {
		order = append(order, w.Name)
	}
	if strings.Join(order, ",") != "broken,alpha,zeta" {
		t.Errorf("order = %v, want broken,alpha,zeta", order)
	}
	if len(r.Summary) != len(Shapes) || r.Summary[ShapeHealthy] != 2 || r.Summary[ShapeNeverStarts] != 1 {
		t.Errorf("summary = %v", r.Summary)
	}
	if len(r.Visibility) != 1 || r.Visibility[0].Kind != "Event" {
		t.Errorf("visibility = %v", r.Visibility)
	}
	if !hasEvidence(&r.Workloads[0], "NotVisible") {
		t.Errorf("the broken workload does not say events were not visible: %v", evidenceKinds(&r.Workloads[0]))
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"apiVersion":"kubediagnose.dev/v1alpha1"`, `"kind":"Report"`, `"summary":{`, `"suspects":[`, `"signalGaps":[`, `"youngestCopySeconds":`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("report JSON lacks %s", key)
		}
	}
}

// TestDeploymentWithoutReplicaSets: `kubectl get deploy,pods` output has no ReplicaSets; the
// copies are found by the Deployment's selector and the missing history is said.
func TestDeploymentWithoutReplicaSets(t *testing.T) {
	c := newCluster()
	d := c.deployment("web", 2, 3, reasonTimedOut, 24*time.Hour)
	rs := c.replicaSet(d, 3, 2, time.Hour, nil)
	c.pod(rs, "a", time.Hour, waiting("CreateContainerConfigError", `configmap "flags" not found`))
	c.pod(rs, "b", time.Hour, waiting("CreateContainerConfigError", `configmap "flags" not found`))
	c.s.ReplicaSets = nil

	got := c.diagnoseOne("web")
	if got.Shape != ShapeNeverStarts || got.Counts.Existing != 2 {
		t.Errorf("shape %s existing %d, want never-starts with 2 copies", got.Shape, got.Counts.Existing)
	}
	if !hasEvidence(got, "NoReplicaSets") {
		t.Errorf("no NoReplicaSets evidence in %v", evidenceKinds(got))
	}
	if got.Revisions != nil {
		t.Errorf("revisions = %+v, want none (unknown)", got.Revisions)
	}
}

// TestDiagnoseOddInput: objects as a partial or hand-written dump may hold them (no status, no
// times, a revision annotation that is not a number, a ControllerRevision with junk data, an
// event with no involved object) are diagnosed without a panic.
func TestDiagnoseOddInput(t *testing.T) {
	if r := Diagnose(&snapshot.Snapshot{}); len(r.Workloads) != 0 || r.Workloads == nil {
		t.Errorf("empty snapshot: workloads = %#v, want an empty list", r.Workloads)
	}
	c := newCluster()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{
		Name: "bare", Namespace: testNS, UID: c.nextUID(),
		Annotations: map[string]string{revisionAnnotation: "seven"},
	}}
	c.s.Deployments = append(c.s.Deployments, d)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{
		Name: "bare-1", Namespace: testNS, UID: c.nextUID(),
		Annotations:     map[string]string{revisionAnnotation: "x"},
		OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: "bare", UID: d.UID}},
	}}
	c.s.ReplicaSets = append(c.s.ReplicaSets, rs)
	c.s.Pods = append(c.s.Pods, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "bare-1-a", Namespace: testNS, UID: c.nextUID(),
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "bare-1", UID: rs.UID}},
		},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			Name:                 "x",
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}},
		}}},
	})
	st := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: testNS, UID: c.nextUID()}}
	c.s.StatefulSets = append(c.s.StatefulSets, st)
	c.s.ControllerRevisions = append(c.s.ControllerRevisions, &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: "bare-abc", Namespace: testNS, OwnerReferences: []metav1.OwnerReference{{Kind: "StatefulSet", Name: "bare", UID: st.UID}}},
		Data:       runtime.RawExtension{Raw: []byte(`{"spec":{"template":"not an object"}}`)}, Revision: 1,
	})
	c.s.DaemonSets = append(c.s.DaemonSets, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: testNS, UID: c.nextUID()}})
	c.s.Events = append(c.s.Events, &corev1.Event{Type: corev1.EventTypeWarning, Reason: "Odd"})
	c.s.Services = append(c.s.Services, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: testNS}})
	c.s.Logs = append(c.s.Logs, snapshot.ContainerLog{Namespace: testNS, Pod: "bare-1-a", Container: "x", Lines: []string{"{", `{"level":7}`, "", "error"}})

	r := Diagnose(c.s)
	if len(r.Workloads) != 3 {
		t.Fatalf("workloads = %d, want the Deployment, StatefulSet and DaemonSet", len(r.Workloads))
	}
	for _, w := range r.Workloads {
		if w.Headline == "" || w.Shape == "" {
			t.Errorf("%s/%s: empty headline or shape", w.Kind, w.Name)
		}
	}
}

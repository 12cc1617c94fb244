package facts

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestAppendPod: a copy's status becomes dated facts in one order (creation, deletion,
// conditions, then each container's last termination just before its state), exactly
// PodFactCount of them, every one pointing at the copy.
func TestAppendPod(t *testing.T) {
	p := copyPod(func(p *corev1.Pod) {
		p.DeletionTimestamp = copyAgoPtr(time.Second)
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: copyAgo(10 * time.Minute)},
			readyCondition(corev1.ConditionFalse, time.Minute, "containers with unready status: [app]"),
		}
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{{
			Name: "migrate", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", FinishedAt: copyAgo(9 * time.Minute)}},
		}}
		cs := runningApp(false, 30*time.Second, 2)
		cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", StartedAt: copyAgo(2 * time.Minute), FinishedAt: copyAgo(time.Minute)}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{cs, {Name: "proxy", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}
	})
	obj := &Ref{Kind: "Pod", Name: p.Name}
	prior := []Fact{{Kind: Event}}
	got := AppendPod(prior, p, obj)
	if len(got)-len(prior) != PodFactCount(p) {
		t.Fatalf("appended %d facts, PodFactCount says %d", len(got)-len(prior), PodFactCount(p))
	}
	if got[0].Object != nil {
		t.Error("AppendPod changed a fact it did not append")
	}
	type row struct {
		kind       Kind
		name       string
		last, init bool
		at, since  time.Time
	}
	want := []row{
		{kind: PodCreated, at: copyAgo(10 * time.Minute).Time},
		{kind: PodDeleted, at: copyAgo(time.Second).Time},
		{kind: ConditionChanged, name: "PodScheduled", at: copyAgo(10 * time.Minute).Time},
		{kind: ReadyChanged, name: "Ready", at: copyAgo(time.Minute).Time},
		{kind: ContainerTerminated, name: "migrate", init: true, at: copyAgo(9 * time.Minute).Time},
		{kind: ContainerTerminated, name: "app", last: true, at: copyAgo(time.Minute).Time, since: copyAgo(2 * time.Minute).Time},
		{kind: ContainerRunning, name: "app", since: copyAgo(30 * time.Second).Time},
		{kind: ContainerWaiting, name: "proxy"},
	}
	facts := got[len(prior):]
	if len(facts) != len(want) {
		t.Fatalf("%d facts, want %d", len(facts), len(want))
	}
	for i := range want {
		f := &facts[i]
		r := row{kind: f.Kind, name: f.Name, last: f.Last, init: f.Init, at: f.At, since: f.Since}
		if !r.at.Equal(want[i].at) || !r.since.Equal(want[i].since) {
			t.Errorf("fact %d times = %v, %v; want %v, %v", i, r.at, r.since, want[i].at, want[i].since)
		}
		r.at, r.since, want[i].at, want[i].since = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if r != want[i] {
			t.Errorf("fact %d = %+v, want %+v", i, r, want[i])
		}
		if f.Object != obj {
			t.Errorf("fact %d points at %v, want the copy", i, f.Object)
		}
	}
	if f := facts[0]; f.Status != "Running" {
		t.Errorf("creation carries phase %q, want Running", f.Status)
	}
	if f := facts[5]; f.ExitCode != 1 || f.Count != 2 || f.Reason != "Error" {
		t.Errorf("last termination = %+v", f)
	}
}

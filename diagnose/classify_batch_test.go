package diagnose

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kptr "k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// batchCase is a Job as the job controller and the kubelet leave it, built by hand for the
// shapes the fixtures do not show.
type batchCase struct {
	s   *snapshot.Snapshot
	job *batchv1.Job
}

func newBatchCase(name string, mutate func(*batchv1.Job)) *batchCase {
	start := ago(10 * time.Minute)
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "batch", UID: types.UID("job-" + name), CreationTimestamp: start},
		Spec: batchv1.JobSpec{
			BackoffLimit: kptr.To[int32](6),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: name, Image: "registry.example/batch/" + name + ":1.0.0", Command: []string{"/app/" + name}}},
			}},
		},
		Status: batchv1.JobStatus{StartTime: &start},
	}
	if mutate != nil {
		mutate(j)
	}
	return &batchCase{s: &snapshot.Snapshot{ReferenceTime: testRef, Jobs: []*batchv1.Job{j}}, job: j}
}

// pod adds a pod of the Job, created age ago, in the given phase and container state.
func (c *batchCase) pod(suffix string, age time.Duration, phase corev1.PodPhase, state corev1.ContainerState) {
	j := c.job
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: j.Name + "-" + suffix, Namespace: j.Namespace, UID: types.UID(j.Name + "-" + suffix), CreationTimestamp: ago(age),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: j.Name, UID: j.UID, Controller: kptr.To(true)}},
		},
		Spec: *j.Spec.Template.Spec.DeepCopy(),
		Status: corev1.PodStatus{
			Phase: phase, StartTime: agoPtr(age),
			ContainerStatuses: []corev1.ContainerStatus{{Name: j.Name, Image: j.Spec.Template.Spec.Containers[0].Image, State: state}},
		},
	}
	p.Spec.NodeName = "node-1"
	c.s.Pods = append(c.s.Pods, p)
}

func (c *batchCase) event(kind, name, typ, reason, message string) {
	c.s.Events = append(c.s.Events, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name + "." + reason, Namespace: "batch"},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: "batch", Name: name},
		Type:           typ, Reason: reason, Message: message, Count: 1,
		FirstTimestamp: ago(5 * time.Minute), LastTimestamp: ago(5 * time.Minute),
	})
}

func exited(code int32, reason string, age time.Duration) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: code, Reason: reason, StartedAt: ago(age), FinishedAt: ago(age - 2*time.Second),
	}}
}

func failed(reason, message string, age time.Duration) batchv1.JobCondition {
	return batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: ago(age)}
}

func TestJobShapes(t *testing.T) {
	tests := []struct {
		name  string
		c     *batchCase
		shape Shape
		rule  RuleID
	}{
		{
			name: "pods that die before backoffLimit is reached already start and die",
			c: func() *batchCase {
				c := newBatchCase("ledger-reconcile", func(j *batchv1.Job) { j.Status.Failed, j.Status.Active = 2, 1 })
				c.pod("a1b2c", 9*time.Minute, corev1.PodFailed, exited(1, "Error", 9*time.Minute))
				c.pod("d3f4g", 8*time.Minute, corev1.PodFailed, exited(1, "Error", 8*time.Minute))
				c.pod("h5j6k", time.Minute, corev1.PodRunning, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ago(time.Minute)}})
				return c
			}(),
			shape: ShapeStartsAndDies,
		},
		{
			name: "pods whose command is not in the image never start, though the Job failed on its backoffLimit",
			c: func() *batchCase {
				c := newBatchCase("report-export", func(j *batchv1.Job) {
					j.Spec.BackoffLimit = kptr.To[int32](0)
					j.Status.Failed = 1
					j.Status.Conditions = []batchv1.JobCondition{failed(batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit", 8*time.Minute)}
				})
				st := exited(128, "StartError", 9*time.Minute)
				st.Terminated.Message = `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "/app/report-export": stat /app/report-export: no such file or directory: unknown`
				c.pod("a1b2c", 9*time.Minute, corev1.PodFailed, st)
				return c
			}(),
			shape: ShapeNeverStarts,
		},
		{
			name: "pods removed at the deadline that never pulled their image never started",
			c: func() *batchCase {
				c := newBatchCase("index-compact", func(j *batchv1.Job) {
					j.Spec.ActiveDeadlineSeconds = kptr.To[int64](300)
					j.Status.Failed = 1
					j.Status.Conditions = []batchv1.JobCondition{failed(batchv1.JobReasonDeadlineExceeded, "Job was active longer than specified deadline", 5*time.Minute)}
				})
				c.event("Pod", "index-compact-x7k2p", corev1.EventTypeWarning, "Failed", `Failed to pull image "registry.example/batch/index-compact:1.0.0": rpc error: code = NotFound desc = failed to pull and unpack image "registry.example/batch/index-compact:1.0.0": failed to resolve reference "registry.example/batch/index-compact:1.0.0": registry.example/batch/index-compact:1.0.0: not found`)
				return c
			}(),
			shape: ShapeNeverStarts, rule: rules.RuleImageNotFound,
		},
		{
			name: "a Job the controller cannot create pods for never starts",
			c: func() *batchCase {
				c := newBatchCase("nightly-rollup", nil)
				c.event("Job", "nightly-rollup", corev1.EventTypeWarning, "FailedCreate",
					`Error creating: pods "nightly-rollup-x7k2p" is forbidden: exceeded quota: batch-quota, requested: requests.cpu=2, used: requests.cpu=7, limited: requests.cpu=8`)
				return c
			}(),
			shape: ShapeNeverStarts,
		},
		{
			name: "a running Job past activeDeadlineSeconds the controller has not failed yet is live but idle",
			c: func() *batchCase {
				c := newBatchCase("index-compact", func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = kptr.To[int64](60); j.Status.Active = 1 })
				c.pod("a1b2c", 9*time.Minute, corev1.PodRunning, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ago(9 * time.Minute)}})
				return c
			}(),
			shape: ShapeLiveButIdle,
		},
		{
			name:  "a suspended Job is not a failure: suspended, apart from healthy",
			c:     newBatchCase("backfill", func(j *batchv1.Job) { j.Spec.Suspend = kptr.To(true) }),
			shape: ShapeSuspended,
		},
		{
			name: "a running Job inside its deadline is progressing",
			c: func() *batchCase {
				c := newBatchCase("backfill", func(j *batchv1.Job) { j.Status.Active = 1 })
				c.pod("a1b2c", 9*time.Minute, corev1.PodRunning, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ago(9 * time.Minute)}})
				return c
			}(),
			shape: ShapeProgressing,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Diagnose(tt.c.s).Find("Job", "batch", tt.c.job.Name)
			if d == nil {
				t.Fatal("no diagnosis of the Job")
			}
			if d.Shape != tt.shape {
				t.Errorf("shape = %s, want %s (headline %q)", d.Shape, tt.shape, d.Headline)
			}
			if d.Revisions != nil {
				t.Errorf("a Job has no revisions to compare, got %+v", d.Revisions)
			}
			if tt.rule != "" && (len(d.Suspects) == 0 || d.Suspects[0].Rule != tt.rule) {
				t.Errorf("suspects = %+v, want %s first", d.Suspects, tt.rule)
			}
			if !tt.shape.Broken() && len(d.Suspects) > 0 {
				t.Errorf("a %s Job has suspects %+v", tt.shape, d.Suspects)
			}
		})
	}
}

package facts

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Messages as kube-controller-manager writes them (pkg/controller/deployment/sync.go and
// progress.go, pkg/controller/replicaset/replica_set_utils.go, pkg/controller/job).
const (
	availableMsg   = "Deployment has minimum availability."
	unavailableMsg = "Deployment does not have minimum availability."
	progressedMsg  = `ReplicaSet "web-5d8f7c6b9" has successfully progressed.`
	quotaMsg       = `pods "web-5d8f7c6b9-x2x9q" is forbidden: exceeded quota: compute, requested: cpu=2, used: cpu=4, limited: cpu=4`
	completedMsg   = "Reached expected number of succeeded pods"
	backoffMsg     = "Job has reached the specified backoff limit"
)

func deploymentCondition(typ appsv1.DeploymentConditionType, status corev1.ConditionStatus, reason, msg string, changed, updated time.Duration) appsv1.DeploymentCondition {
	return appsv1.DeploymentCondition{
		Type: typ, Status: status, Reason: reason, Message: msg,
		LastTransitionTime: copyAgo(changed), LastUpdateTime: copyAgo(updated),
	}
}

func jobCondition(typ batchv1.JobConditionType, status corev1.ConditionStatus, reason, msg string, changed time.Duration) batchv1.JobCondition {
	return batchv1.JobCondition{Type: typ, Status: status, Reason: reason, Message: msg, LastTransitionTime: copyAgo(changed), LastProbeTime: copyAgo(changed)}
}

func deployment(conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	d.Status.Conditions = conds
	return d
}

func job(started *metav1.Time, conds ...batchv1.JobCondition) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "migrate"}}
	j.Status.StartTime, j.Status.Conditions = started, conds
	return j
}

func at(d time.Duration) time.Time { return copyRef.Add(-d) }

// TestReadController holds the controller record to what the status says, condition by
// condition in its order with both of its times, and a Job's terminal condition to the one
// the Job controller's own order makes final.
func TestReadController(t *testing.T) {
	const minute = time.Minute
	tests := []struct {
		name string
		obj  any
		want []WorkloadCondition
		// started is a Job's start; finished the type of its terminal condition ("" while
		// it runs), succeeded whether that is a success.
		started   time.Time
		finished  string
		succeeded bool
	}{
		{
			name: "deployment available and progressed",
			obj: deployment(
				deploymentCondition(appsv1.DeploymentAvailable, corev1.ConditionTrue, "MinimumReplicasAvailable", availableMsg, 30*minute, 30*minute),
				deploymentCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, "NewReplicaSetAvailable", progressedMsg, 40*minute, 29*minute),
			),
			want: []WorkloadCondition{
				{Type: "Available", Status: "True", Reason: "MinimumReplicasAvailable", Message: availableMsg, Changed: at(30 * minute), Updated: at(30 * minute)},
				{Type: "Progressing", Status: "True", Reason: "NewReplicaSetAvailable", Message: progressedMsg, Changed: at(40 * minute), Updated: at(29 * minute)},
			},
		},
		{
			name: "deployment whose replica set cannot create copies",
			obj: deployment(
				deploymentCondition(appsv1.DeploymentAvailable, corev1.ConditionFalse, "MinimumReplicasUnavailable", unavailableMsg, 5*minute, 5*minute),
				deploymentCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, "ReplicaSetUpdated", `ReplicaSet "web-5d8f7c6b9" is progressing.`, 6*minute, 2*minute),
				deploymentCondition(appsv1.DeploymentReplicaFailure, corev1.ConditionTrue, "FailedCreate", quotaMsg, 4*minute, 4*minute),
			),
			want: []WorkloadCondition{
				{Type: "Available", Status: "False", Reason: "MinimumReplicasUnavailable", Message: unavailableMsg, Changed: at(5 * minute), Updated: at(5 * minute)},
				{Type: "Progressing", Status: "True", Reason: "ReplicaSetUpdated", Message: `ReplicaSet "web-5d8f7c6b9" is progressing.`, Changed: at(6 * minute), Updated: at(2 * minute)},
				{Type: "ReplicaFailure", Status: "True", Reason: "FailedCreate", Message: quotaMsg, Changed: at(4 * minute), Updated: at(4 * minute)},
			},
		},
		{
			// The controller's first write of Available is False when the copies are not yet
			// available: transition and update are that one moment.
			name: "deployment's first write is Available False",
			obj:  deployment(deploymentCondition(appsv1.DeploymentAvailable, corev1.ConditionFalse, "MinimumReplicasUnavailable", unavailableMsg, minute, minute)),
			want: []WorkloadCondition{{Type: "Available", Status: "False", Reason: "MinimumReplicasUnavailable", Message: unavailableMsg, Changed: at(minute), Updated: at(minute)}},
		},
		{
			name: "replica set that cannot create copies",
			obj: func() *appsv1.ReplicaSet {
				rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-5d8f7c6b9"}}
				rs.Status.Conditions = []appsv1.ReplicaSetCondition{{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: quotaMsg, LastTransitionTime: copyAgo(3 * minute)}}
				return rs
			}(),
			// A ReplicaSet's conditions carry no update time.
			want: []WorkloadCondition{{Type: "ReplicaFailure", Status: "True", Reason: "FailedCreate", Message: quotaMsg, Changed: at(3 * minute)}},
		},
		{
			name:      "job complete after success criteria met",
			started:   at(20 * minute),
			obj:       job(copyAgoPtr(20*minute), jobCondition(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, "CompletionsReached", completedMsg, 10*minute), jobCondition(batchv1.JobComplete, corev1.ConditionTrue, "CompletionsReached", completedMsg, 10*minute)),
			finished:  "Complete",
			succeeded: true,
			want: []WorkloadCondition{
				{Type: "SuccessCriteriaMet", Status: "True", Reason: "CompletionsReached", Message: completedMsg, Changed: at(10 * minute)},
				{Type: "Complete", Status: "True", Reason: "CompletionsReached", Message: completedMsg, Changed: at(10 * minute)},
			},
		},
		{
			// SuccessCriteriaMet comes first, while the last pods terminate: already a success.
			name:      "job whose success criteria are met, pods still terminating",
			started:   at(20 * minute),
			obj:       job(copyAgoPtr(20*minute), jobCondition(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, "CompletionsReached", completedMsg, 10*minute)),
			finished:  "SuccessCriteriaMet",
			succeeded: true,
			want:      []WorkloadCondition{{Type: "SuccessCriteriaMet", Status: "True", Reason: "CompletionsReached", Message: completedMsg, Changed: at(10 * minute)}},
		},
		{
			name:     "job failed after its failure target",
			started:  at(20 * minute),
			obj:      job(copyAgoPtr(20*minute), jobCondition(batchv1.JobFailureTarget, corev1.ConditionTrue, "BackoffLimitExceeded", backoffMsg, 3*minute), jobCondition(batchv1.JobFailed, corev1.ConditionTrue, "BackoffLimitExceeded", backoffMsg, 2*minute)),
			finished: "Failed",
			want: []WorkloadCondition{
				{Type: "FailureTarget", Status: "True", Reason: "BackoffLimitExceeded", Message: backoffMsg, Changed: at(3 * minute)},
				{Type: "Failed", Status: "True", Reason: "BackoffLimitExceeded", Message: backoffMsg, Changed: at(2 * minute)},
			},
		},
		{
			name:     "job with only its failure target",
			started:  at(20 * minute),
			obj:      job(copyAgoPtr(20*minute), jobCondition(batchv1.JobFailureTarget, corev1.ConditionTrue, "BackoffLimitExceeded", backoffMsg, 3*minute)),
			finished: "FailureTarget",
			want:     []WorkloadCondition{{Type: "FailureTarget", Status: "True", Reason: "BackoffLimitExceeded", Message: backoffMsg, Changed: at(3 * minute)}},
		},
		{
			// A suspended Job's Suspended condition, and a terminal type that is not True,
			// finish nothing.
			name:    "job suspended, a Failed condition not True",
			started: at(20 * minute),
			obj:     job(copyAgoPtr(20*minute), jobCondition(batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended", 5*minute), jobCondition(batchv1.JobFailed, corev1.ConditionFalse, "", "", 5*minute)),
			want: []WorkloadCondition{
				{Type: "Suspended", Status: "True", Reason: "JobSuspended", Message: "Job suspended", Changed: at(5 * minute)},
				{Type: "Failed", Status: "False", Changed: at(5 * minute)},
			},
		},
		{
			name: "job not yet started",
			obj:  job(nil),
		},
		{
			name: "deployment without conditions",
			obj:  deployment(),
		},
		{
			name: "stateful set without conditions",
			obj:  &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"}},
		},
		{
			name: "an object of no workload kind",
			obj:  &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1"}},
		},
		{
			// Written by hand: no times at all. They stay zero, never the reference time.
			name: "hand-written deployment conditions without times",
			obj: deployment(
				appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated"},
				appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse},
			),
			want: []WorkloadCondition{{Type: "Progressing", Status: "True", Reason: "ReplicaSetUpdated"}, {Type: "Available", Status: "False"}},
		},
		{
			name:     "hand-written job failed without times",
			obj:      job(nil, batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded"}),
			finished: "Failed",
			want:     []WorkloadCondition{{Type: "Failed", Status: "True", Reason: "DeadlineExceeded"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ReadController(tt.obj)
			if len(c.Conditions) != len(tt.want) {
				t.Fatalf("conditions = %+v, want %+v", c.Conditions, tt.want)
			}
			for i, w := range tt.want {
				got := c.Conditions[i]
				if got.Type != w.Type || got.Status != w.Status || got.Reason != w.Reason || got.Message != w.Message ||
					!got.Changed.Equal(w.Changed) || !got.Updated.Equal(w.Updated) {
					t.Errorf("condition %d = %+v, want %+v", i, got, w)
				}
			}
			if !c.Started.Equal(tt.started) {
				t.Errorf("Started = %v, want %v", c.Started, tt.started)
			}
			fin := ""
			if f := c.Finished(); f != nil {
				fin = f.Type
			}
			if fin != tt.finished {
				t.Errorf("Finished = %q, want %q", fin, tt.finished)
			}
			if got := c.Succeeded(); got != tt.succeeded {
				t.Errorf("Succeeded = %v, want %v", got, tt.succeeded)
			}
		})
	}
}

// TestAppendController holds the observation list's controller conditions to the record:
// one fact each, in its order, dated by its transition, Since its update.
func TestAppendController(t *testing.T) {
	c := ReadController(deployment(
		deploymentCondition(appsv1.DeploymentAvailable, corev1.ConditionFalse, "MinimumReplicasUnavailable", unavailableMsg, 5*time.Minute, 5*time.Minute),
		deploymentCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, "ProgressDeadlineExceeded", `ReplicaSet "web-5d8f7c6b9" has timed out progressing.`, time.Minute, 30*time.Second),
	))
	ref := &Ref{Kind: "Deployment", Name: "web"}
	list := AppendController([]Fact{{Kind: Event}}, &c, ref)
	if len(list) != 3 {
		t.Fatalf("len = %d, want the one fact before and one for each condition", len(list))
	}
	for i, f := range list[1:] {
		cd := c.Conditions[i]
		if f.Kind != ControllerCondition || f.Object != ref || f.Type() != cd.Type || f.Status != cd.Status ||
			f.Reason != cd.Reason || f.Text != cd.Message || !f.At.Equal(cd.Changed) || !f.Since.Equal(cd.Updated) {
			t.Errorf("fact %d = %+v, want condition %+v", i, f, cd)
		}
	}
	if got := AppendController(nil, &Controller{}, ref); len(got) != 0 {
		t.Errorf("no conditions: %d facts, want none", len(got))
	}
}

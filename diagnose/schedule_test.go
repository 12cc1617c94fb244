package diagnose

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kptr "k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// TestReadSchedule holds the schedule rules to the cronjob controller's reading of a schedule:
// the first time after lastScheduleTime (or creation) that passed, and what kept it from running.
func TestReadSchedule(t *testing.T) {
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	mt := func(s string) *metav1.Time { return &metav1.Time{Time: at(s)} }
	base := func(schedule string, mutate func(*batchv1.CronJob)) *batchv1.CronJob {
		cj := &batchv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Name: "nightly-billing", Namespace: "billing", CreationTimestamp: metav1.Time{Time: at("2026-11-20T10:00:00Z")}},
			Spec:       batchv1.CronJobSpec{Schedule: schedule, ConcurrencyPolicy: batchv1.AllowConcurrent, Suspend: kptr.To(false)},
		}
		if mutate != nil {
			mutate(cj)
		}
		return cj
	}
	alreadyActive := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "nightly-billing.1", Namespace: "billing"},
		InvolvedObject: corev1.ObjectReference{Kind: "CronJob", Namespace: "billing", Name: "nightly-billing"},
		Reason:         "JobAlreadyActive", Type: corev1.EventTypeNormal, Count: 2,
		Message: "Not starting job because prior execution is running and concurrency policy is Forbid",
	}
	tests := []struct {
		name   string
		cj     *batchv1.CronJob
		events []*corev1.Event
		ref    string
		rule   RuleID
		due    string
		missed int
		none   bool
	}{
		{
			name: "ran on time: nothing due since the last run",
			cj:   base("0 3 * * *", func(cj *batchv1.CronJob) { cj.Status.LastScheduleTime = mt("2026-11-24T03:00:00Z") }),
			ref:  "2026-11-24T14:00:00Z", none: true,
		},
		{
			name: "a run due seconds ago is the controller's to start yet",
			cj:   base("*/5 * * * *", func(cj *batchv1.CronJob) { cj.Status.LastScheduleTime = mt("2026-11-24T13:55:00Z") }),
			ref:  "2026-11-24T14:00:05Z", none: true,
		},
		{
			name: "suspended past three nightly runs",
			cj: base("0 3 * * *", func(cj *batchv1.CronJob) {
				cj.Spec.Suspend = kptr.To(true)
				cj.Status.LastScheduleTime = mt("2026-11-21T03:00:00Z")
			}),
			ref: "2026-11-24T14:00:00Z", rule: rules.RuleCronJobSuspended, due: "2026-11-22T03:00:00Z", missed: 3,
		},
		{
			name: "suspended since creation, never ran",
			cj:   base("*/15 * * * *", func(cj *batchv1.CronJob) { cj.Spec.Suspend = kptr.To(true) }),
			ref:  "2026-11-20T10:20:00Z", rule: rules.RuleCronJobSuspended, due: "2026-11-20T10:15:00Z", missed: 1,
		},
		{
			name: "Forbid behind a Job still active",
			cj: base("0 * * * *", func(cj *batchv1.CronJob) {
				cj.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent
				cj.Status.LastScheduleTime = mt("2026-11-24T11:00:00Z")
				cj.Status.Active = []corev1.ObjectReference{{Kind: "Job", Namespace: "billing", Name: "nightly-billing-29396100"}}
			}),
			events: []*corev1.Event{alreadyActive},
			ref:    "2026-11-24T13:30:00Z", rule: rules.RuleCronJobForbidActive, due: "2026-11-24T12:00:00Z", missed: 2,
		},
		{
			name: "Allow beside an active Job: a run that did not start is not Forbid's doing",
			cj: base("0 * * * *", func(cj *batchv1.CronJob) {
				cj.Status.LastScheduleTime = mt("2026-11-24T13:00:00Z")
				cj.Status.Active = []corev1.ObjectReference{{Kind: "Job", Namespace: "billing", Name: "nightly-billing-29396160"}}
			}),
			ref: "2026-11-24T14:30:00Z", rule: "", due: "2026-11-24T14:00:00Z", missed: 1,
		},
		{
			name: "missed beyond startingDeadlineSeconds",
			cj: base("30 2 * * *", func(cj *batchv1.CronJob) {
				cj.Spec.StartingDeadlineSeconds = kptr.To[int64](300)
				cj.Status.LastScheduleTime = mt("2026-11-23T02:30:00Z")
			}),
			ref: "2026-11-24T09:00:00Z", rule: rules.RuleCronJobStartingDeadline, due: "2026-11-24T02:30:00Z", missed: 1,
		},
		{
			name: "late but inside startingDeadlineSeconds and no word why",
			cj: base("30 2 * * *", func(cj *batchv1.CronJob) {
				cj.Spec.StartingDeadlineSeconds = kptr.To[int64](3600)
				cj.Status.LastScheduleTime = mt("2026-11-23T02:30:00Z")
			}),
			ref: "2026-11-24T03:00:00Z", rule: "", due: "2026-11-24T02:30:00Z", missed: 1,
		},
		{
			name: "timeZone: 03:00 in Europe/Berlin is 02:00 UTC in winter",
			cj: base("0 3 * * *", func(cj *batchv1.CronJob) {
				cj.Spec.TimeZone = kptr.To("Europe/Berlin")
				cj.Spec.Suspend = kptr.To(true)
				cj.Status.LastScheduleTime = mt("2026-11-23T02:00:00Z")
			}),
			ref: "2026-11-24T02:30:00Z", rule: rules.RuleCronJobSuspended, due: "2026-11-24T02:00:00Z", missed: 1,
		},
		{
			name: "an unparseable schedule is the controller's UnparseableSchedule, not a missed run",
			cj:   base("every night", nil),
			ref:  "2026-11-24T14:00:00Z", none: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The events as the engine reads them: observations of the CronJob's workload.
			w := &workload{Kind: "CronJob", Name: tt.cj.Name, Object: tt.cj, Events: tt.events}
			f := readSchedule(tt.cj, w.observe().eventList(), at(tt.ref))
			if tt.none {
				if f != nil {
					t.Fatalf("finding %+v, want none", f)
				}
				return
			}
			if f == nil {
				t.Fatal("no finding")
			}
			if f.rule != tt.rule || !f.due.Equal(at(tt.due)) || f.missed != tt.missed {
				t.Errorf("rule %q due %s missed %d, want %q %s %d (%s)", f.rule, f.due.UTC().Format(time.RFC3339), f.missed, tt.rule, tt.due, tt.missed, f.message)
			}
			if tt.rule != "" && f.path == nil {
				t.Errorf("rule %s without a path", f.rule)
			}
		})
	}
}

// TestScheduleFindingIsTheCronJobsShape: a CronJob whose last Job succeeded but whose next run
// did not start is never-starts, with the schedule rule's field on top and a spec cause.
func TestScheduleFindingIsTheCronJobsShape(t *testing.T) {
	ref, _ := time.Parse(time.RFC3339, "2026-11-24T13:30:00Z")
	start := metav1.NewTime(ref.Add(-150 * time.Minute))
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "hourly-export", Namespace: "exports", UID: "cj-1", CreationTimestamp: metav1.NewTime(ref.Add(-48 * time.Hour))},
		Spec: batchv1.CronJobSpec{
			Schedule: "0 * * * *", ConcurrencyPolicy: batchv1.ForbidConcurrent, Suspend: kptr.To(false),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "export", Image: "registry.example/export:1.2.0"}},
			}}}},
		},
		Status: batchv1.CronJobStatus{
			LastScheduleTime: &metav1.Time{Time: start.Time},
			Active:           []corev1.ObjectReference{{Kind: "Job", Namespace: "exports", Name: "hourly-export-29396100", UID: "job-1"}},
		},
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: "hourly-export-29396100", Namespace: "exports", UID: "job-1", CreationTimestamp: start,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: "hourly-export", UID: "cj-1", Controller: kptr.To(true)}},
		},
		Spec:   batchv1.JobSpec{Template: cj.Spec.JobTemplate.Spec.Template},
		Status: batchv1.JobStatus{Active: 1, StartTime: &start},
	}
	s := &snapshot.Snapshot{ReferenceTime: ref, CronJobs: []*batchv1.CronJob{cj}, Jobs: []*batchv1.Job{job}}
	d := Diagnose(s).Find("CronJob", "exports", "hourly-export")
	if d == nil {
		t.Fatal("no diagnosis of the CronJob")
	}
	if d.Shape != ShapeNeverStarts || d.Cause != CauseSpec || len(d.Suspects) == 0 || d.Suspects[0].Rule != rules.RuleCronJobForbidActive ||
		d.Suspects[0].Path.String() != "spec.concurrencyPolicy" || d.Suspects[0].Value != "Forbid" {
		t.Fatalf("shape %s cause %s suspects %+v; want never-starts, spec, cronjob-forbid-active on spec.concurrencyPolicy", d.Shape, d.Cause, d.Suspects)
	}
}

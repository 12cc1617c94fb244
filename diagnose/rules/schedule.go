package rules

// The schedule rules. IDs are stable: scripts and the documentation refer to them.
const (
	RuleCronJobSuspended        RuleID = "cronjob-suspended"
	RuleCronJobForbidActive     RuleID = "cronjob-forbid-active"
	RuleCronJobStartingDeadline RuleID = "cronjob-starting-deadline"
)

// scheduleFamily names the CronJob field that kept a due run from starting.
var _ = register(family{
	order:  50,
	name:   "schedule",
	detect: (*ranker).scheduleRules,
	rules: []RuleInfo{
		{
			RuleCronJobSuspended, "A suspended CronJob lets the runs its schedule names pass",
			"spec.suspend true and a scheduled time since the last run (or creation) that started no Job",
			"Set spec.suspend to false if the runs are wanted (kubectl patch cronjob NAME -p '{\"spec\":{\"suspend\":false}}').", false,
		},
		{
			RuleCronJobForbidActive, "concurrencyPolicy Forbid skips every run while an earlier Job is still active",
			"concurrencyPolicy Forbid, a Job in status.active past the next scheduled time, JobAlreadyActive events",
			"Find why the active Job does not finish (or set its activeDeadlineSeconds); delete it to let the next run start.", false,
		},
		{
			RuleCronJobStartingDeadline, "The controller could not start a run within startingDeadlineSeconds",
			"a scheduled time older than startingDeadlineSeconds that started no Job, MissSchedule events",
			"Check that kube-controller-manager runs the cronjob controller and keeps time; raise startingDeadlineSeconds if starts are often late.", true,
		},
	},
})

// scheduleRules records the field of the schedule finding.
func (r *ranker) scheduleRules() {
	sc := r.in.Schedule
	if sc == nil || sc.Rule == "" {
		return
	}
	r.suspectWorkload(sc.Rule, sc.Path, scoreCertain+scoreChanged, sc.Message)
}

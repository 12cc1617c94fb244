package diagnose

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

func isScheduleRule(id RuleID) bool {
	return id == rules.RuleCronJobSuspended || id == rules.RuleCronJobForbidActive || id == rules.RuleCronJobStartingDeadline
}

// scheduleFinding is a run a CronJob's schedule called for that started no Job.
type scheduleFinding struct {
	rule RuleID
	path *field.Path
	// due is the first scheduled time that started nothing, missed how many have passed since
	// (itself included).
	due     time.Time
	missed  int
	message string
}

// scheduleGrace is how long after a scheduled time the controller may take to create its Job;
// it requeues itself for the scheduled time and creates the Job within a second or two.
const scheduleGrace = 15 * time.Second

// maxMissedCounted bounds the missed times counted, as the controller bounds them (100).
const maxMissedCounted = 100

// readSchedule finds the first scheduled time since the CronJob's last run (or its creation)
// that passed without a Job, with the schedule parsed as the cronjob controller parses it
// (robfig/cron's standard parser, with CRON_TZ for spec.timeZone), and says what kept it back.
func readSchedule(cj *batchv1.CronJob, events []Observation, ref time.Time) *scheduleFinding {
	spec := cj.Spec.Schedule
	if tz := cj.Spec.TimeZone; tz != nil && *tz != "" && !strings.Contains(spec, "TZ") {
		spec = "CRON_TZ=" + *tz + " " + spec
	}
	sched, err := parseSchedule(spec)
	if err != nil || ref.IsZero() {
		return nil
	}
	earliest := cj.CreationTimestamp.Time
	if t := cj.Status.LastScheduleTime; t != nil {
		earliest = t.Time
	}
	due := sched.Next(earliest)
	if due.IsZero() || due.After(ref.Add(-scheduleGrace)) {
		return nil
	}
	missed, latest := 0, due
	for t := due; !t.IsZero() && !t.After(ref) && missed < maxMissedCounted; t = sched.Next(t) {
		missed++
		latest = t
	}
	when := fmt.Sprintf("the run due at %s", due.UTC().Format(time.RFC3339))
	if missed > 1 {
		when = fmt.Sprintf("%d runs due since %s", missed, due.UTC().Format(time.RFC3339))
		if missed == maxMissedCounted {
			when = fmt.Sprintf("%d or more runs due since %s", missed, due.UTC().Format(time.RFC3339))
		}
	}
	f := &scheduleFinding{due: due, missed: missed}
	spath := field.NewPath("spec")
	switch {
	case cj.Spec.Suspend != nil && *cj.Spec.Suspend:
		f.rule, f.path = rules.RuleCronJobSuspended, spath.Child("suspend")
		f.message = fmt.Sprintf("suspended: %s started no Job", when)
	case cj.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent && len(cj.Status.Active) > 0:
		f.rule, f.path = rules.RuleCronJobForbidActive, spath.Child("concurrencyPolicy")
		f.message = fmt.Sprintf("concurrencyPolicy Forbid and Job %s is still active: %s started no Job", cj.Status.Active[0].Name, when)
		if n := eventsOf(events, "JobAlreadyActive"); n > 0 {
			f.message += fmt.Sprintf(" (JobAlreadyActive %d times)", n)
		}
	case cj.Spec.StartingDeadlineSeconds != nil && latest.Add(time.Duration(*cj.Spec.StartingDeadlineSeconds)*time.Second).Before(ref):
		f.rule, f.path = rules.RuleCronJobStartingDeadline, spath.Child("startingDeadlineSeconds")
		f.message = fmt.Sprintf("%s started no Job within startingDeadlineSeconds %d", when, *cj.Spec.StartingDeadlineSeconds)
		if n := eventsOf(events, "MissSchedule"); n > 0 {
			f.message += fmt.Sprintf(" (MissSchedule %d times)", n)
		}
	default:
		f.message = fmt.Sprintf("%s started no Job and the CronJob says nothing of why: is the cronjob controller running?", when)
	}
	return f
}

// parseSchedule parses as the controller's parsers.ParseCronScheduleWithPanicRecovery does:
// the standard parser panics on some inputs.
func parseSchedule(spec string) (s cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("invalid schedule format: %v", r)
		}
	}()
	return cron.ParseStandard(spec)
}

// eventsOf counts the CronJob's events of a reason.
func eventsOf(events []Observation, reason string) int32 {
	var n int32
	for i := range events {
		if e := &events[i]; e.Object.Kind == "CronJob" && e.Reason == reason {
			n += e.Count
		}
	}
	return n
}

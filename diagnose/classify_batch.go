package diagnose

import (
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// batchFacts is what the classifier read of a Job, or of a CronJob and its newest Job.
type batchFacts struct {
	// run is the Job whose copies decide the shape: the Job itself, or a CronJob's newest.
	run *revision
	// finished is the run's terminal condition (Complete, Failed, or the FailureTarget and
	// SuccessCriteriaMet the controller writes first); nil while it runs.
	finished *facts.WorkloadCondition
	// failedRuns are the CronJob's Jobs that failed since the last that succeeded, oldest first.
	failedRuns []*revision
	// schedule is the CronJob's run that should have started and did not; nil when none.
	schedule *scheduleFinding
}

// servedJob is why a Job's revision counts as one that served: it succeeded.
func servedJob(rev *revision) string {
	j := rev.Job
	if !rev.Run.Succeeded() {
		return ""
	}
	if t := j.Status.CompletionTime; t != nil {
		return fmt.Sprintf("Job %s completed at %s", j.Name, t.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("Job %s completed", j.Name)
}

// batchCounts recounts a batch workload: declared is the completions its (newest) Job needs,
// existing its pods still running, serving the pods that succeeded, and restarts adds the pods
// that failed, each of which the controller replaced.
func batchCounts(w *workload) {
	clear(w.serving)
	w.Counts.Serving = 0
	cur := w.cls.Current
	if cur == nil {
		w.Counts.Declared = 0
		return
	}
	var succeeded int32
	for i, r := range w.cls.revAt {
		if r == cur && w.life(i).Phase == corev1.PodSucceeded {
			w.serving[i] = true
			succeeded++
		}
	}
	j := cur.Job
	w.Counts.Serving = max(succeeded, j.Status.Succeeded)
	w.Counts.Restarts += j.Status.Failed
	if w.cls.sight.byController() {
		w.Counts.Existing = j.Status.Active
	}
}

// classifyBatch decides the shape of a Job or CronJob from its run's copies and conditions. A
// CronJob whose run did not start when its schedule said is never-starts whatever its last
// Job did.
func classifyBatch(w *workload, ref time.Time) Shape {
	st := &w.cls
	b := &batchFacts{run: st.Current}
	st.batch = b
	if cj, ok := w.Object.(*batchv1.CronJob); ok {
		b.schedule = readSchedule(cj, w.observe().eventList(), ref)
		for _, rev := range st.Revisions {
			if rev.Run.Succeeded() {
				b.failedRuns = nil
			} else if c := rev.Run.Finished(); c != nil {
				b.failedRuns = append(b.failedRuns, rev)
			}
		}
	}
	var shape Shape
	if b.run == nil {
		shape, st.why = ShapeHealthy, "no Job has run yet"
	} else {
		b.finished = b.run.Run.Finished()
		shape, st.why = classifyRun(w, b, ref)
	}
	if cj, ok := w.Object.(*batchv1.CronJob); ok && cj.Spec.Suspend != nil && *cj.Spec.Suspend &&
		!shape.Broken() && shape != ShapeProgressing {
		// The spec holds the runs back: the runs it lets pass are not failures. A Job still
		// running, or one that failed, says more than that.
		switch {
		case b.schedule != nil:
			st.why = b.schedule.message
		case b.run == nil:
			st.why = "suspended; no run was due yet"
		default:
			st.why = "suspended; " + st.why
		}
		return ShapeSuspended
	}
	if sc := b.schedule; sc != nil && !shape.Broken() && sc.rule != rules.RuleCronJobSuspended {
		st.why = sc.message
		return ShapeNeverStarts
	}
	return shape
}

// classifyRun classifies one Job by its copies: a Job that never starts its pods, whose pods
// start and die until backoffLimit, or that runs past activeDeadlineSeconds doing nothing.
func classifyRun(w *workload, b *batchFacts, ref time.Time) (Shape, string) {
	rev, j, fin := b.run, b.run.Job, b.finished
	var never, dies, running []*copyFacts
	for _, f := range w.cls.copies {
		if f.Rev != rev {
			continue
		}
		switch {
		case f.NeverStarts != "":
			never = append(never, f)
		case f.Dies != "":
			dies = append(dies, f)
		case f.Active && f.Running:
			running = append(running, f)
		}
	}
	all := len(rev.Pods)
	name := ""
	if w.Kind == "CronJob" {
		name = "Job " + j.Name + ": "
	}
	condition := ""
	if fin != nil {
		condition = fmt.Sprintf("%s: %s", fin.Reason, fin.Message)
	}
	switch {
	case fin != nil && (fin.Type == string(batchv1.JobComplete) || fin.Type == string(batchv1.JobSuccessCriteriaMet)):
		why := name + "completed"
		if t := j.Status.CompletionTime; t != nil {
			why += fmt.Sprintf(" %s ago", humanDuration(ref.Sub(t.Time)))
		}
		return ShapeHealthy, why
	case len(never) > 0:
		why := fmt.Sprintf("%s%s on %s", name, never[0].NeverStarts, copiesPhrase(len(never), all))
		if fin != nil {
			why += "; " + condition
		}
		return ShapeNeverStarts, why
	case fin != nil && fin.Reason == batchv1.JobReasonDeadlineExceeded:
		if ev := neverStartedEvent(w, rev); ev != "" {
			return ShapeNeverStarts, fmt.Sprintf("%sits pods never started (%s) until %s", name, ev, condition)
		}
		if len(dies) > 0 {
			return ShapeStartsAndDies, fmt.Sprintf("%s%s on %s until %s", name, dies[0].Dies, copiesPhrase(len(dies), all), condition)
		}
		return ShapeLiveButIdle, fmt.Sprintf("%sits pods ran past activeDeadlineSeconds %s without completing: %s", name, deadlineText(j), condition)
	case fin != nil:
		if len(dies) > 0 {
			return ShapeStartsAndDies, fmt.Sprintf("%s%s on %s, %d failed in all: %s", name, dies[0].Dies, copiesPhrase(len(dies), all), j.Status.Failed, condition)
		}
		if ev := neverStartedEvent(w, rev); ev != "" {
			return ShapeNeverStarts, fmt.Sprintf("%sits pods never started (%s): %s", name, ev, condition)
		}
		return ShapeStartsAndDies, fmt.Sprintf("%s%d pods failed: %s", name, j.Status.Failed, condition)
	case j.Spec.Suspend != nil && *j.Spec.Suspend:
		return ShapeSuspended, name + "suspended"
	}
	if msg := jobFailedCreate(w, j); msg != "" {
		return ShapeNeverStarts, name + "the Job controller cannot create pods: " + msg
	}
	if len(dies) > 0 && j.Status.Succeeded == 0 {
		limit := int32(6)
		if j.Spec.BackoffLimit != nil {
			limit = *j.Spec.BackoffLimit
		}
		return ShapeStartsAndDies, fmt.Sprintf("%s%s on %s; %d failed of the %d the backoffLimit allows", name, dies[0].Dies, copiesPhrase(len(dies), all), j.Status.Failed, limit+1)
	}
	if d, started := j.Spec.ActiveDeadlineSeconds, rev.Run.Started; d != nil && !started.IsZero() &&
		ref.Sub(started) > time.Duration(*d)*time.Second && len(running) > 0 {
		return ShapeLiveButIdle, fmt.Sprintf("%sits pods run past activeDeadlineSeconds %s without completing", name, deadlineText(j))
	}
	return ShapeProgressing, fmt.Sprintf("%srunning: %d active, %d succeeded of %d", name, j.Status.Active, j.Status.Succeeded, jobCompletions(j))
}

func deadlineText(j *batchv1.Job) string {
	if d := j.Spec.ActiveDeadlineSeconds; d != nil {
		return fmt.Sprintf("(%ds)", *d)
	}
	return ""
}

// neverStartedEvent finds, for a run whose pods are gone (the controller deletes them at the
// deadline), the kubelet's or scheduler's word that they never started: a failure event and no
// Started event on any of them.
func neverStartedEvent(w *workload, rev *revision) string {
	prefix := rev.Job.Name + "-"
	found := ""
	for _, e := range w.observe().eventList() {
		if e.Object.Kind != "Pod" || !strings.HasPrefix(e.Object.Name, prefix) {
			continue
		}
		switch {
		case e.Reason == "Started":
			return ""
		case found == "" && e.Status == corev1.EventTypeWarning && (e.Reason == "Failed" || e.Reason == "FailedScheduling" || e.Reason == "FailedMount"):
			found = e.Reason + ": " + e.Text
		}
	}
	return rules.Clip(found, 200)
}

// jobFailedCreate is the Job controller's FailedCreate on the Job, the newest.
func jobFailedCreate(w *workload, j *batchv1.Job) string {
	evs := w.observe().eventList()
	for i := len(evs) - 1; i >= 0; i-- {
		e := &evs[i]
		if e.Reason == "FailedCreate" && e.Object.Kind == "Job" && e.Object.Name == j.Name {
			return e.Text
		}
	}
	return ""
}

// batchEvidence lists the run's terminal condition, the CronJob's failed runs since its last
// success by reason, and the run that should have started.
func batchEvidence(b *evidenceBuilder, w *workload) {
	bf := w.cls.batch
	if bf == nil {
		return
	}
	obj := w.object()
	if c := bf.finished; c != nil && c.Type != string(batchv1.JobComplete) && c.Type != string(batchv1.JobSuccessCriteriaMet) {
		at := c.Changed
		b.add(SourceControllerStatus, c.Reason, "", c.Message, "Job/"+bf.run.Name, 1, &at)
	}
	for _, rev := range bf.failedRuns {
		if rev == bf.run {
			continue
		}
		c := rev.Run.Finished()
		at := c.Changed
		b.add(SourceControllerStatus, c.Reason, "", c.Message, "Job/"+rev.Name, 1, &at)
	}
	if sc := bf.schedule; sc != nil {
		due := sc.due
		b.add(SourceControllerStatus, "NotScheduled", "", sc.message, obj, int32(max(sc.missed, 1)), &due)
	}
}

// batchHeadline states a Job's or CronJob's problem: how many completions its run has, and why.
func batchHeadline(w *workload, shape Shape) string {
	bf := w.cls.batch
	why := w.cls.why
	if bf == nil || bf.run == nil {
		return fmt.Sprintf("no Job · %s", why)
	}
	j := bf.run.Job
	head := fmt.Sprintf("%d of %d completions · %d active · %d failed", w.Counts.Serving, w.Counts.Declared, j.Status.Active, j.Status.Failed)
	if w.Kind == "CronJob" {
		head = "Job " + j.Name + " · " + head
		why = strings.TrimPrefix(why, "Job "+j.Name+": ")
		if n := len(bf.failedRuns); shape.Broken() && n > 1 {
			since := "no Job succeeded before them"
			if ls := w.cls.LastServing; ls != nil {
				since = "the last to succeed was " + ls.Name
			}
			why += fmt.Sprintf("; the last %d Jobs failed (%s)", n, since)
		}
	}
	return head + " — " + why
}

// batchRevisions names a CronJob's Jobs as its revisions: the newest, and the last that
// succeeded, whose template the current job template is compared with. A Job alone has nothing
// to compare.
func batchRevisions(w *workload) *Revisions {
	h := &w.cls.history
	if w.Kind != "CronJob" || h.Current == nil {
		return nil
	}
	r := &Revisions{Current: h.Current.Name, ChangedPaths: changedPaths(w.Changes)}
	if h.LastServing != nil {
		r.LastServing = h.LastServing.Name
	}
	return r
}

// batchCause attributes a finding of the schedule rules: the spec's own setting (suspend,
// Forbid) is spec; a start the controller missed is outside it.
func batchCause(top *Suspect, cause Cause) Cause {
	if top == nil || !isScheduleRule(top.Rule) {
		return cause
	}
	if ruleInfo(top.Rule).Outside {
		return CauseDependency
	}
	return CauseSpec
}

// jobMoment is a Job's timeline entry: when it was made, and how it ended.
func jobMoment(rev *revision) string {
	msg := "Job " + rev.Name + " created"
	if c := rev.Run.Finished(); c != nil {
		if rev.Run.Succeeded() {
			msg += "; succeeded"
		} else {
			msg += "; failed (" + c.Reason + ")"
		}
	}
	return msg
}

// settleBatch gives a batch workload its own headline and revisions; its spec has no probes or
// rollout strategy for the signal-gap checks to read.
func settleBatch(w *workload, d *Diagnosis) {
	d.Headline = withControllerWord(w, batchHeadline(w, w.Shape))
	d.Revisions = batchRevisions(w)
	d.SignalGaps = []SignalGap{}
}

// terminatedAt is when the copy's last container to terminate finished, from its status
// observations; zero while all run.
func terminatedAt(obs []Observation) time.Time {
	var t time.Time
	for i := range obs {
		if o := &obs[i]; o.Kind == ObsContainerTerminated && !o.Last && !o.Init && o.At.After(t) {
			t = o.At
		}
	}
	return t
}

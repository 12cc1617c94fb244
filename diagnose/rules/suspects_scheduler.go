package rules

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// RuleNoScheduler is the absent-scheduler rule's ID; IDs are stable: scripts and the
// documentation refer to them.
const RuleNoScheduler RuleID = "scheduler-not-answering"

// schedulerFamily names the scheduler a template asks for when none answers: copies Pending
// with no node, no PodScheduled condition and no scheduling event. Every scheduler writes
// PodScheduled=False (Unschedulable, SchedulingGated) and a FailedScheduling event for a pod it
// cannot place, and binds the others within seconds; a pod it has never seen has neither.
var _ = register(family{
	order:  62,
	name:   "scheduler",
	detect: (*ranker).schedulerSilent,
	rules: []RuleInfo{
		{
			RuleNoScheduler, "No scheduler answers for the copies: the one the template names is not running",
			"current copies Pending past a minute with no nodeName, no PodScheduled condition and no FailedScheduling event",
			"Start the scheduler (kube-scheduler for default-scheduler; check the control plane), or name one that runs in schedulerName.", true,
		},
	},
})

// schedulerGrace is how long a scheduler that runs may take to say something of a new pod: it
// binds or rejects within seconds, even under load.
const schedulerGrace = time.Minute

func (r *ranker) schedulerSilent() {
	for _, s := range r.in.Signals {
		if s.Reason == "FailedScheduling" {
			return
		}
	}
	waiting, silent := 0, 0
	var oldest time.Duration
	for _, f := range r.in.Copies {
		if !f.Current || !f.Active || f.Node != "" {
			continue
		}
		waiting++
		if f.SchedulerAnswered || f.Age < schedulerGrace {
			continue
		}
		silent++
		oldest = max(oldest, f.Age)
	}
	if silent == 0 {
		return
	}
	score := scoreCertain
	if silent < waiting {
		score = scoreLikely
	}
	name := SchedulerOf(r.in.Template)
	r.suspectTemplate(RuleNoScheduler, r.specPath.Child("schedulerName"), score,
		fmt.Sprintf("%d of %d waiting copies have had no node for up to %s and no word from scheduler %s (no PodScheduled condition, no scheduling event): it is not running",
			silent, waiting, oldest.Round(time.Second), name))
}

// SchedulerOf is the scheduler a template names, the API's default when unset.
func SchedulerOf(t *corev1.PodTemplateSpec) string {
	if t.Spec.SchedulerName == "" {
		return corev1.DefaultSchedulerName
	}
	return t.Spec.SchedulerName
}

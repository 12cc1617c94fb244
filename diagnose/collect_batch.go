package diagnose

import (
	"regexp"
	"sort"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Labels the Job controller writes into a Job's pod template (pkg/apis/batch: JobNameLabel,
// ControllerUIDLabel and their legacy names). They name the Job, not the spec, so they are left
// out when a Job's template is compared with its CronJob's.
var jobTemplateLabels = []string{
	batchv1.JobNameLabel, batchv1.ControllerUidLabel, "job-name", "controller-uid",
}

// isBatch reports whether the kind is a Job or a CronJob: kinds whose copies are meant to finish.
func isBatch(kind string) bool {
	k := kinds.Named(kind)
	return k != nil && k.Batch
}

// collectBatch gathers the CronJobs and the Jobs no CronJob of the snapshot controls: a Job a
// CronJob made is one of its revisions, not a workload of its own.
func collectBatch(s *snapshot.Snapshot) []*workload {
	var out []*workload
	gone := &gonePodEvents{s: s}
	cronJobs := map[types.UID]bool{}
	for _, cj := range s.CronJobs {
		cronJobs[cj.UID] = true
		out = append(out, collectCronJob(s, cj, gone))
	}
	for _, j := range s.Jobs {
		if c := metav1.GetControllerOfNoCopy(j); c != nil && c.Kind == "CronJob" && cronJobs[c.UID] {
			continue
		}
		out = append(out, collectJob(s, j, gone))
	}
	return out
}

// jobRevision is one Job as a revision: its template and its pods.
func jobRevision(s *snapshot.Snapshot, j *batchv1.Job, n int64, gone *gonePodEvents) *revision {
	rev := &revision{Number: n, Name: j.Name, Created: j.CreationTimestamp.Time, Template: &j.Spec.Template, Job: j, Run: facts.ReadController(j)}
	rev.Pods = controlledPods(s, j.UID)
	if rev.Run.Finished() != nil && int(j.Status.Succeeded+j.Status.Failed) > len(rev.Pods) {
		rev.GonePodEvents = gone.of(j, rev.Pods)
	}
	return rev
}

// gonePodEvents finds the events of a Job's pods that are gone: the Job controller deletes the
// pods still running at the deadline, and the kubelet's events about them outlive them. It
// files the namespaces' pod events by name once, when a finished Job lacks pods.
type gonePodEvents struct {
	s      *snapshot.Snapshot
	byName map[[2]string][]*corev1.Event
}

func (g *gonePodEvents) of(j *batchv1.Job, pods []*corev1.Pod) []*corev1.Event {
	if g.byName == nil {
		g.byName = map[[2]string][]*corev1.Event{}
		for _, e := range g.s.Events {
			if e.InvolvedObject.Kind == "Pod" {
				k := [2]string{e.Namespace, e.InvolvedObject.Name}
				g.byName[k] = append(g.byName[k], e)
			}
		}
	}
	present := map[string]bool{}
	for _, p := range pods {
		present[p.Name] = true
	}
	var out []*corev1.Event
	for k, evs := range g.byName {
		if k[0] == j.Namespace && !present[k[1]] && jobPodName.MatchString(strings.TrimPrefix(k[1], j.Name+"-")) && strings.HasPrefix(k[1], j.Name+"-") {
			out = append(out, evs...)
		}
	}
	return out
}

// jobPodName is what the Job controller puts after "<job>-" in a pod's name: the completion
// index of an Indexed Job, then generateName's five characters.
var jobPodName = regexp.MustCompile(`^([0-9]+-)?[bcdfghjklmnpqrstvwxz2456789]{5}$`)

func collectJob(s *snapshot.Snapshot, j *batchv1.Job, gone *gonePodEvents) *workload {
	w := &workload{
		Kind: "Job", Namespace: j.Namespace, Name: j.Name, UID: j.UID, Object: j,
		Declared: jobCompletions(j),
		Template: &j.Spec.Template, TemplatePath: kinds.Job.TemplatePath,
		Created: j.CreationTimestamp.Time,
	}
	rev := jobRevision(s, j, 1, gone)
	w.cls.Revisions = []*revision{rev}
	w.cls.Current = rev
	return w
}

// collectCronJob takes the CronJob's Jobs, oldest first, as its revisions: each ran the job
// template as it was when the Job was made, which the Job keeps. The newest is current.
func collectCronJob(s *snapshot.Snapshot, cj *batchv1.CronJob, gone *gonePodEvents) *workload {
	w := &workload{
		Kind: "CronJob", Namespace: cj.Namespace, Name: cj.Name, UID: cj.UID, Object: cj,
		Declared:     1,
		Template:     &cj.Spec.JobTemplate.Spec.Template,
		TemplatePath: kinds.CronJob.TemplatePath,
		Created:      cj.CreationTimestamp.Time,
	}
	var jobs []*batchv1.Job
	for _, j := range s.JobsOwnedBy(cj.UID) {
		if c := metav1.GetControllerOfNoCopy(j); c == nil || c.UID == cj.UID {
			jobs = append(jobs, j)
		}
	}
	sort.SliceStable(jobs, func(a, b int) bool {
		ta, tb := jobs[a].CreationTimestamp.Time, jobs[b].CreationTimestamp.Time
		if !ta.Equal(tb) {
			return ta.Before(tb)
		}
		return jobs[a].Name < jobs[b].Name
	})
	for i, j := range jobs {
		w.cls.Revisions = append(w.cls.Revisions, jobRevision(s, j, int64(i+1), gone))
	}
	if n := len(w.cls.Revisions); n > 0 {
		w.cls.Current = w.cls.Revisions[n-1]
		w.Declared = jobCompletions(w.cls.Current.Job)
	}
	return w
}

// jobCompletions is how many pods must succeed: spec.completions, else 1 (a work queue
// finishes with its first success).
func jobCompletions(j *batchv1.Job) int32 {
	if j.Spec.Completions != nil {
		return *j.Spec.Completions
	}
	return 1
}

// withoutJobLabels returns a copy of a pod template without the labels the Job controller adds.
func withoutJobLabels(t *corev1.PodTemplateSpec) *corev1.PodTemplateSpec {
	c := templateWithout(t, jobTemplateLabels...)
	if len(c.Labels) == 0 {
		c.Labels = nil
	}
	return c
}

// withoutNotes drops the Warning events that say nothing of a failure: the cronjob controller's
// UnexpectedJob is its note that a Job was made by hand (kubectl create job --from), which
// every Job made that way earns, failing or not.
func withoutNotes(events []*corev1.Event) []*corev1.Event {
	out := events[:0]
	for _, e := range events {
		if e.Reason == "UnexpectedJob" && e.InvolvedObject.Kind == "CronJob" {
			continue
		}
		out = append(out, e)
	}
	return out
}

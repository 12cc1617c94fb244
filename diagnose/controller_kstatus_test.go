package diagnose

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"

	"github.com/robfig/cron/v3"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// kstatusRef is the reference time of every controller-only verdict in these tests.
var kstatusRef = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// kstatusRule is one row of the table that maps kstatus's status of a workload, computed from
// its controller's status alone, to the shapes the engine may give it when no pod is seen.
// The rows are tried in order; the first whose applies holds decides. A row with a why is a
// place where the engine deliberately says more than kstatus: it names what kstatus says
// there and why the engine differs.
type kstatusRule struct {
	name    string
	applies func(obj runtime.Object, ks status.Status) bool
	// kstatus lists what kstatus may say where the row applies; shapes what the engine may.
	kstatus []status.Status
	shapes  []Shape
	why     string
}

var (
	broken         = []Shape{ShapeNeverStarts, ShapeStartsAndDies, ShapeLiveButIdle}
	anyKstatus     = []status.Status{status.CurrentStatus, status.InProgressStatus, status.FailedStatus}
	kstatusCurrent = []status.Status{status.CurrentStatus}
	kstatusInProg  = []status.Status{status.InProgressStatus}
)

// kstatusMapping is the mapping table. Parity rows first in spirit (Current → healthy,
// InProgress → progressing, Failed → a failure shape), but the deliberate differences come
// before them in order, since they carve out cases the parity rows would otherwise cover.
var kstatusMapping = []kstatusRule{
	{
		name:    "daemonset-runs-nowhere",
		applies: func(o runtime.Object, _ status.Status) bool { return dsRunsNowhere(o) },
		kstatus: []status.Status{status.CurrentStatus, status.InProgressStatus},
		shapes:  []Shape{ShapeNeverStarts},
		why: "a DaemonSet whose controller has written status for the current generation with desiredNumberScheduled 0 may run on no node; " +
			"kstatus compares its counts with 0 and calls it Current (InProgress when the field is left out, which the typed status reads as 0)",
	},
	{
		name: "replicafailure-with-copies-missing",
		applies: func(o runtime.Object, ks status.Status) bool {
			return ks == status.InProgressStatus && replicaFailureProves(o)
		},
		kstatus: kstatusInProg,
		shapes:  []Shape{ShapeNeverStarts},
		// Parity: "InProgress → the failure shape the conditions prove".
	},
	{
		name:    "deployment-deadline-by-the-reference-time",
		applies: func(o runtime.Object, _ status.Status) bool { return deploymentTimedOutByClock(o) },
		kstatus: kstatusInProg,
		shapes:  broken,
		why: "a Progressing condition that still says the rollout moves, last written longer than progressDeadlineSeconds before the reference time: " +
			"the controller that would have written ProgressDeadlineExceeded stopped writing; kstatus waits for it",
	},
	{
		name: "no-copy-ready-past-the-deadline",
		applies: func(o runtime.Object, ks status.Status) bool {
			return ks == status.InProgressStatus && noCopyReadyPastDeadline(o)
		},
		kstatus: kstatusInProg,
		shapes:  []Shape{ShapeUnknown},
		why: "no copy Ready for longer than a rollout's deadline (a Deployment's Available=False after its rollout completed; a StatefulSet, " +
			"DaemonSet or ReplicaSet still at generation 1 and older than the 600 s default) where no controller deadline or condition will ever speak: " +
			"kstatus stays InProgress for good; the engine says unknown and that the counts cannot tell a copy that never started from one that runs unready",
	},
	{
		name:    "statefulset-ondelete",
		applies: func(o runtime.Object, _ status.Status) bool { return stsOnDeleteShort(o) },
		kstatus: kstatusCurrent,
		shapes:  []Shape{ShapeProgressing, ShapeUnknown},
		why: "kstatus calls every OnDelete StatefulSet Current; the engine still counts its copies (fewer existing or Ready than declared, or extra ones " +
			"awaiting termination, is converging, or unknown as in no-copy-ready-past-the-deadline) and skips only the revision checks, " +
			"since under OnDelete old copies wait for someone to delete them",
	},
	{
		name:    "job-running",
		applies: func(o runtime.Object, _ status.Status) bool { return jobRunning(o) },
		kstatus: kstatusCurrent,
		shapes:  []Shape{ShapeProgressing},
		why:     "kstatus calls a started Job Current (reconciled); the engine says progressing until it completes or fails",
	},
	{
		name:    "job-suspended",
		applies: func(o runtime.Object, _ status.Status) bool { return jobSuspended(o) },
		kstatus: anyKstatus,
		shapes:  []Shape{ShapeSuspended},
		why:     "a suspended Job is as declared, not a failure, and shown apart from healthy; kstatus reads its startTime and conditions as for any Job",
	},
	{
		name:    "job-failure-target",
		applies: func(o runtime.Object, _ status.Status) bool { return jobFailureTarget(o) },
		kstatus: []status.Status{status.CurrentStatus, status.InProgressStatus},
		shapes:  broken,
		why:     "FailureTarget=True is the Job controller's verdict written before Failed (once the pods terminate); kstatus reads Failed only",
	},
	{
		name:    "job-success-criteria-met",
		applies: func(o runtime.Object, _ status.Status) bool { return jobSuccessCriteriaMet(o) },
		kstatus: []status.Status{status.CurrentStatus, status.InProgressStatus},
		shapes:  []Shape{ShapeHealthy},
		why:     "SuccessCriteriaMet=True is the Job controller's verdict written before Complete; kstatus reads Complete only",
	},
	{
		name:    "cronjob-suspended",
		applies: func(o runtime.Object, _ status.Status) bool { return cronJobSuspended(o) },
		kstatus: kstatusCurrent,
		shapes:  []Shape{ShapeSuspended},
		why: "kstatus calls every CronJob Current; a suspended one (no Job of it running or failed) runs nothing by its spec's word: " +
			"suspended, whether or not a run was due, shown apart from healthy and from the failures",
	},
	{
		name:    "cronjob-run-missed",
		applies: func(o runtime.Object, _ status.Status) bool { return cronJobMissedRun(o) },
		kstatus: kstatusCurrent,
		shapes:  []Shape{ShapeNeverStarts},
		why: "kstatus calls every CronJob Current; a run its schedule called for more than 15 s ago (since its last run, or its creation) " +
			"that started no Job is a run that never started",
	},
	{name: "current", applies: is(status.CurrentStatus), kstatus: kstatusCurrent, shapes: []Shape{ShapeHealthy}},
	{name: "in-progress", applies: is(status.InProgressStatus), kstatus: kstatusInProg, shapes: []Shape{ShapeProgressing}},
	{name: "failed", applies: is(status.FailedStatus), kstatus: []status.Status{status.FailedStatus}, shapes: broken},
}

func is(want status.Status) func(runtime.Object, status.Status) bool {
	return func(_ runtime.Object, ks status.Status) bool { return ks == want }
}

// dsRunsNowhere: status written for the current generation, desiredNumberScheduled 0.
func dsRunsNowhere(o runtime.Object) bool {
	ds, ok := o.(*appsv1.DaemonSet)
	return ok && ds.Generation > 0 && ds.Status.ObservedGeneration >= ds.Generation && ds.Status.DesiredNumberScheduled == 0
}

// replicaFailureProves: the controller says it cannot create copies, and copies are missing.
func replicaFailureProves(o runtime.Object) bool {
	if !generationObserved(o) {
		return false
	}
	switch x := o.(type) {
	case *appsv1.Deployment:
		for _, c := range x.Status.Conditions {
			if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
				return x.Status.Replicas < replicasOrOne(x.Spec.Replicas)
			}
		}
	case *appsv1.ReplicaSet:
		for _, c := range x.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
				return x.Status.Replicas < replicasOrOne(x.Spec.Replicas)
			}
		}
	}
	return false
}

// generationObserved is kstatus's generation check: both set and different is not observed.
func generationObserved(o runtime.Object) bool {
	m, ok := o.(metav1.Object)
	if !ok {
		return true
	}
	var observed int64
	switch x := o.(type) {
	case *appsv1.Deployment:
		observed = x.Status.ObservedGeneration
	case *appsv1.StatefulSet:
		observed = x.Status.ObservedGeneration
	case *appsv1.DaemonSet:
		observed = x.Status.ObservedGeneration
	case *appsv1.ReplicaSet:
		observed = x.Status.ObservedGeneration
	}
	return m.GetGeneration() == 0 || observed == 0 || observed == m.GetGeneration()
}

func deploymentTimedOutByClock(o runtime.Object) bool {
	d, ok := o.(*appsv1.Deployment)
	if !ok || !generationObserved(o) || d.Spec.ProgressDeadlineSeconds == nil {
		return false
	}
	for _, c := range d.Status.Conditions {
		if c.Type != appsv1.DeploymentProgressing || c.LastUpdateTime.IsZero() {
			continue
		}
		switch c.Reason {
		case "ReplicaSetUpdated", "NewReplicaSetCreated", "FoundNewReplicaSet", "DeploymentResumed":
			return kstatusRef.Sub(c.LastUpdateTime.Time) > time.Duration(*d.Spec.ProgressDeadlineSeconds)*time.Second
		}
	}
	return false
}

func noCopyReadyPastDeadline(o runtime.Object) bool {
	if !generationObserved(o) {
		return false
	}
	old := func(m metav1.Object) bool {
		created := m.GetCreationTimestamp().Time
		return m.GetGeneration() == 1 && !created.IsZero() && kstatusRef.Sub(created) > 600*time.Second
	}
	switch x := o.(type) {
	case *appsv1.Deployment:
		if replicasOrOne(x.Spec.Replicas) == 0 || x.Status.ReadyReplicas > 0 {
			return false
		}
		deadline := 600 * time.Second
		if p := x.Spec.ProgressDeadlineSeconds; p != nil {
			deadline = time.Duration(*p) * time.Second
		}
		var unavailableSince time.Time
		for _, c := range x.Status.Conditions {
			switch {
			case c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionTrue && c.Reason != "NewReplicaSetAvailable":
				// A rollout under way: its own deadline speaks.
				return false
			case c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionFalse:
				unavailableSince = c.LastTransitionTime.Time
			}
		}
		return !unavailableSince.IsZero() && kstatusRef.Sub(unavailableSince) > deadline
	case *appsv1.StatefulSet:
		return replicasOrOne(x.Spec.Replicas) > 0 && x.Status.ReadyReplicas == 0 && old(x)
	case *appsv1.DaemonSet:
		return x.Status.DesiredNumberScheduled > 0 && x.Status.NumberReady == 0 && x.Status.ObservedGeneration > 0 && old(x)
	case *appsv1.ReplicaSet:
		return replicasOrOne(x.Spec.Replicas) > 0 && x.Status.ReadyReplicas == 0 && old(x)
	}
	return false
}

func stsOnDeleteShort(o runtime.Object) bool {
	s, ok := o.(*appsv1.StatefulSet)
	if !ok || s.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType || !generationObserved(o) {
		return false
	}
	spec := replicasOrOne(s.Spec.Replicas)
	return s.Status.Replicas != spec || s.Status.ReadyReplicas < spec
}

// cronJobMissedRun: the schedule's next time after the last run (or the creation) is more
// than the controller's 15 s before the reference time.
func cronJobSuspended(o runtime.Object) bool {
	cj, ok := o.(*batchv1.CronJob)
	return ok && cj.Spec.Suspend != nil && *cj.Spec.Suspend
}

func cronJobMissedRun(o runtime.Object) bool {
	cj, ok := o.(*batchv1.CronJob)
	if !ok {
		return false
	}
	sched, err := cron.ParseStandard(cj.Spec.Schedule)
	if err != nil {
		return false
	}
	since := cj.CreationTimestamp.Time
	if t := cj.Status.LastScheduleTime; t != nil {
		since = t.Time
	}
	return sched.Next(since).Before(kstatusRef.Add(-15 * time.Second))
}

func jobCondition(o runtime.Object, t batchv1.JobConditionType) bool {
	j, ok := o.(*batchv1.Job)
	if !ok {
		return false
	}
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func jobFinishedAny(o runtime.Object) bool {
	return jobCondition(o, batchv1.JobComplete) || jobCondition(o, batchv1.JobFailed) ||
		jobCondition(o, batchv1.JobFailureTarget) || jobCondition(o, batchv1.JobSuccessCriteriaMet)
}

func jobSuspended(o runtime.Object) bool {
	j, ok := o.(*batchv1.Job)
	return ok && !jobFinishedAny(o) && j.Spec.Suspend != nil && *j.Spec.Suspend
}

func jobRunning(o runtime.Object) bool {
	j, ok := o.(*batchv1.Job)
	return ok && !jobFinishedAny(o) && !jobSuspended(o) && j.Status.StartTime != nil
}

func jobFailureTarget(o runtime.Object) bool {
	return jobCondition(o, batchv1.JobFailureTarget) && !jobCondition(o, batchv1.JobFailed) &&
		!jobCondition(o, batchv1.JobComplete) && !jobCondition(o, batchv1.JobSuccessCriteriaMet)
}

func jobSuccessCriteriaMet(o runtime.Object) bool {
	return jobCondition(o, batchv1.JobSuccessCriteriaMet) && !jobCondition(o, batchv1.JobComplete) && !jobCondition(o, batchv1.JobFailed)
}

// kstatusOf computes kstatus's status of an object as the API server would serialize it.
func kstatusOf(t testing.TB, u *unstructured.Unstructured) status.Status {
	t.Helper()
	res, err := status.Compute(u)
	if err != nil {
		t.Fatalf("kstatus: %v", err)
	}
	return res.Status
}

// toUnstructured is obj as the API server serializes it: the converter leaves out the
// omitempty fields that hold their zero value, as encoding/json does.
func toUnstructured(t testing.TB, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// byControllerOnly diagnoses obj alone, with the pods reported unreadable, as a
// `kubectl get deploy -o yaml` or a forbidden pod list gives it.
func byControllerOnly(t testing.TB, obj runtime.Object) (Diagnosis, *workload) {
	t.Helper()
	s := &snapshot.Snapshot{ReferenceTime: kstatusRef, Visibility: []snapshot.Visibility{{Kind: "Pod", Reason: "not in the dump"}}}
	kind := ""
	switch x := obj.(type) {
	case *appsv1.Deployment:
		s.Deployments, kind = []*appsv1.Deployment{x}, "Deployment"
	case *appsv1.StatefulSet:
		s.StatefulSets, kind = []*appsv1.StatefulSet{x}, "StatefulSet"
	case *appsv1.DaemonSet:
		s.DaemonSets, kind = []*appsv1.DaemonSet{x}, "DaemonSet"
	case *appsv1.ReplicaSet:
		s.ReplicaSets, kind = []*appsv1.ReplicaSet{x}, "ReplicaSet"
	case *batchv1.Job:
		s.Jobs, kind = []*batchv1.Job{x}, "Job"
	case *batchv1.CronJob:
		s.CronJobs, kind = []*batchv1.CronJob{x}, "CronJob"
	default:
		t.Fatalf("unexpected %T", obj)
	}
	s.Index()
	for _, w := range collectWorkloads(s) {
		if w.Kind == kind {
			return diagnoseWorkload(s, w), w
		}
	}
	t.Fatalf("no %s workload collected", kind)
	return Diagnosis{}, nil
}

// checkAgainstKstatus finds the table's row for obj and asserts the engine's verdict fits it.
func checkAgainstKstatus(t *testing.T, name string, obj runtime.Object, ks status.Status, rows map[string]int) {
	t.Helper()
	d, w := byControllerOnly(t, obj)
	for _, r := range kstatusMapping {
		if !r.applies(obj, ks) {
			continue
		}
		if rows != nil {
			rows[r.name]++
		}
		if !slices.Contains(r.kstatus, ks) {
			t.Errorf("%s: row %s says kstatus gives %v here, kstatus says %s", name, r.name, r.kstatus, ks)
		}
		if d.Shape == ShapeNeverStarts && containsFold(d.Headline, "ever starts") && controllerCopiesExist(w) {
			t.Errorf("%s: the headline says copies never start where the controller counts copies of the current revision: %s", name, d.Headline)
		}
		if d.Shape != ShapeHealthy && w.cls.ctrl.Replicas > w.cls.ctrl.Ready && w.cls.nowhere == "" && !hasEvidenceKind(&d, SourceControllerStatus, "CountsCannotTell") {
			t.Errorf("%s: %s with %d copies counted, %d Ready, and no CountsCannotTell evidence", name, d.Shape, w.cls.ctrl.Replicas, w.cls.ctrl.Ready)
		}
		if !slices.Contains(r.shapes, d.Shape) {
			t.Errorf("%s: kstatus %s, row %s allows %v, engine says %s (%s)\n%s", name, ks, r.name, r.shapes, d.Shape, w.cls.why, objectText(obj))
		}
		return
	}
	t.Errorf("%s: no row of the mapping table for kstatus %s", name, ks)
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

func objectText(obj runtime.Object) string {
	b, _ := yaml.Marshal(obj)
	return string(b)
}

// TestKstatusOwnCases runs kstatus's own test objects of the workload kinds (ported as data in
// testdata/kstatus/status_compute_cases.yaml from its status_compute_test.go) through both,
// and checks the port too: kstatus must still say what its test expects.
func TestKstatusOwnCases(t *testing.T) {
	b, err := os.ReadFile("testdata/kstatus/status_compute_cases.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []struct {
			Name    string        `json:"name"`
			Kstatus status.Status `json:"kstatus"`
			Object  string        `json:"object"`
		} `json:"cases"`
	}
	if err := yaml.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) < 25 {
		t.Fatalf("%d cases, want the 29 of the workload kinds", len(file.Cases))
	}
	for _, c := range file.Cases {
		t.Run(c.Name, func(t *testing.T) {
			j, err := yaml.YAMLToJSON([]byte(c.Object))
			if err != nil {
				t.Fatal(err)
			}
			u, _, err := unstructured.UnstructuredJSONScheme.Decode(j, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			ks := kstatusOf(t, u.(*unstructured.Unstructured))
			if ks != c.Kstatus {
				t.Fatalf("kstatus says %s, its test says %s: the port is stale", ks, c.Kstatus)
			}
			var obj runtime.Object
			switch u.GetObjectKind().GroupVersionKind().Kind {
			case "Deployment":
				obj = &appsv1.Deployment{}
			case "StatefulSet":
				obj = &appsv1.StatefulSet{}
			case "DaemonSet":
				obj = &appsv1.DaemonSet{}
			case "ReplicaSet":
				obj = &appsv1.ReplicaSet{}
			case "Job":
				obj = &batchv1.Job{}
			case "CronJob":
				obj = &batchv1.CronJob{}
			}
			if err := json.Unmarshal(j, obj); err != nil {
				t.Fatal(err)
			}
			checkAgainstKstatus(t, c.Name, obj, ks, nil)
		})
	}
}

// TestControllerVerdictsAgreeWithKstatus generates status combinations per kind (counts,
// observedGeneration against generation, conditions absent, True and False with their
// reasons, ages) and holds the engine's controller-only verdict to kstatus's through the
// mapping table. Every row of the table must be reached, so none is dead.
func TestControllerVerdictsAgreeWithKstatus(t *testing.T) {
	rows := map[string]int{}
	n := 0
	for _, g := range []struct {
		kind string
		gen  func(yield func(runtime.Object) bool)
	}{
		{"Deployment", genDeployments},
		{"StatefulSet", genStatefulSets},
		{"DaemonSet", genDaemonSets},
		{"ReplicaSet", genReplicaSets},
		{"Job", genJobs},
		{"CronJob", genCronJobs},
	} {
		t.Run(g.kind, func(t *testing.T) {
			i := 0
			for obj := range g.gen {
				i++
				if i%kstatusStride != 0 {
					continue
				}
				ks := kstatusOf(t, toUnstructured(t, obj))
				checkAgainstKstatus(t, fmt.Sprintf("%s #%d", g.kind, i), obj, ks, rows)
				if t.Failed() && i > 0 {
					// One disagreement prints the object; a hundred print noise.
					return
				}
			}
			n += i / kstatusStride
		})
	}
	t.Logf("%d combinations; rows reached: %v", n, rows)
	for _, r := range kstatusMapping {
		if rows[r.name] == 0 {
			t.Errorf("no generated combination reaches row %s", r.name)
		}
	}
}

func i32(v int32) *int32 { return &v }

// genCond is a generated condition: type, status, reason, and how long before the reference
// time it was written (noTime: written without a time).
type genCond struct {
	Type, Status, Reason string
	Ago                  time.Duration
}

const noTime = -1

func (c genCond) at() metav1.Time {
	if c.Ago == noTime {
		return metav1.Time{}
	}
	return metav1.NewTime(kstatusRef.Add(-c.Ago))
}

var counts3 = []int32{0, 2, 3}

func genDeployments(yield func(runtime.Object) bool) {
	progressing := []*genCond{
		nil,
		{"Progressing", "True", reasonNewRSAvailable, time.Minute},
		{"Progressing", "True", reasonReplicaSetUpdated, time.Minute},
		{"Progressing", "True", reasonReplicaSetUpdated, 20 * time.Minute},
		{"Progressing", "True", reasonReplicaSetUpdated, noTime},
		{"Progressing", "False", reasonTimedOut, time.Minute},
	}
	available := []*genCond{
		nil,
		{"Available", "True", "MinimumReplicasAvailable", time.Minute},
		// Written a minute ago reads as left out, for kstatus and for the engine alike.
		{"Available", "False", "MinimumReplicasUnavailable", 30 * time.Minute},
	}
	failure := []*genCond{nil, {"ReplicaFailure", "True", "FailedCreate", time.Minute}}
	// spec.replicas left out (1) is in kstatus's own cases; 0 and 3 here.
	for _, spec := range []*int32{i32(0), i32(3)} {
		for _, deadline := range []*int32{nil, i32(600)} {
			for _, observed := range []int64{0, 1, 2} {
				for _, replicas := range []int32{0, 2, 3, 4} {
					for _, updated := range counts3 {
						for _, ready := range counts3 {
							for _, avail := range counts3 {
								if updated > replicas || ready > replicas || avail > ready {
									continue
								}
								for _, p := range progressing {
									for _, a := range available {
										for _, f := range failure {
											d := &appsv1.Deployment{
												TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
												ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Generation: 2, CreationTimestamp: metav1.NewTime(kstatusRef.Add(-time.Hour))},
												Spec:       appsv1.DeploymentSpec{Replicas: spec, ProgressDeadlineSeconds: deadline},
												Status: appsv1.DeploymentStatus{
													ObservedGeneration: observed, Replicas: replicas, UpdatedReplicas: updated,
													ReadyReplicas: ready, AvailableReplicas: avail,
												},
											}
											for _, c := range []*genCond{p, a, f} {
												if c == nil {
													continue
												}
												d.Status.Conditions = append(d.Status.Conditions, appsv1.DeploymentCondition{
													Type: appsv1.DeploymentConditionType(c.Type), Status: corev1.ConditionStatus(c.Status), Reason: c.Reason,
													LastUpdateTime: c.at(), LastTransitionTime: c.at(),
												})
											}
											if !yield(d) {
												return
											}
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// objectMeta is a workload of the given generation, created long before the reference time or
// shortly before it.
func objectMeta(generation int64, old bool) metav1.ObjectMeta {
	age := 2 * time.Minute
	if old {
		age = 30 * time.Minute
	}
	return metav1.ObjectMeta{Name: "db", Namespace: "shop", Generation: generation, CreationTimestamp: metav1.NewTime(kstatusRef.Add(-age))}
}

func genStatefulSets(yield func(runtime.Object) bool) {
	strategies := []appsv1.StatefulSetUpdateStrategy{
		{Type: appsv1.RollingUpdateStatefulSetStrategyType},
		{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: i32(0)}},
		{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: i32(2)}},
		{Type: appsv1.OnDeleteStatefulSetStrategyType},
	}
	for _, spec := range []*int32{nil, i32(3)} {
		for _, strategy := range strategies {
			for _, generation := range []int64{1, 2} {
				for _, observed := range []int64{0, 1, 2} {
					for _, old := range []bool{false, true} {
						for _, replicas := range []int32{0, 2, 3, 4} {
							for _, ready := range counts3 {
								for _, current := range counts3 {
									for _, updated := range counts3 {
										if ready > replicas || current > replicas || updated > replicas {
											continue
										}
										// kstatus reads no availableReplicas of a StatefulSet; the engine did.
										for _, avail := range []int32{0, ready} {
											for _, updateRevision := range []string{"db-1", "db-2"} {
												s := &appsv1.StatefulSet{
													TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
													ObjectMeta: objectMeta(generation, old),
													Spec:       appsv1.StatefulSetSpec{Replicas: spec, UpdateStrategy: strategy},
													Status: appsv1.StatefulSetStatus{
														ObservedGeneration: observed, Replicas: replicas, ReadyReplicas: ready, CurrentReplicas: current,
														UpdatedReplicas: updated, AvailableReplicas: avail, CurrentRevision: "db-1", UpdateRevision: updateRevision,
													},
												}
												if !yield(s) {
													return
												}
											}
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

func genDaemonSets(yield func(runtime.Object) bool) {
	for _, strategy := range []appsv1.DaemonSetUpdateStrategyType{appsv1.RollingUpdateDaemonSetStrategyType, appsv1.OnDeleteDaemonSetStrategyType} {
		for _, generation := range []int64{0, 1, 2} {
			for _, observed := range []int64{0, 1, 2} {
				for _, old := range []bool{false, true} {
					for _, desired := range []int32{0, 3} {
						for _, current := range counts3 {
							for _, misscheduled := range []int32{0, 1} {
								for _, updated := range counts3 {
									for _, avail := range counts3 {
										for _, ready := range counts3 {
											if ready > current || avail > ready || updated > current {
												continue
											}
											ds := &appsv1.DaemonSet{
												TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
												ObjectMeta: objectMeta(generation, old),
												Spec:       appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: strategy}},
												Status: appsv1.DaemonSetStatus{
													ObservedGeneration: observed, DesiredNumberScheduled: desired, CurrentNumberScheduled: current,
													NumberMisscheduled: misscheduled, UpdatedNumberScheduled: updated, NumberAvailable: avail, NumberReady: ready,
												},
											}
											if !yield(ds) {
												return
											}
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

func genReplicaSets(yield func(runtime.Object) bool) {
	failures := []*appsv1.ReplicaSetCondition{
		nil,
		{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: `pods "db-" is forbidden: exceeded quota: compute`},
		{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue},
		{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionFalse},
	}
	for _, spec := range []*int32{nil, i32(0), i32(3)} {
		for _, generation := range []int64{1, 2} {
			for _, observed := range []int64{0, 1, 2} {
				for _, old := range []bool{false, true} {
					for _, replicas := range []int32{0, 2, 3, 4} {
						for _, labeled := range counts3 {
							for _, ready := range counts3 {
								for _, avail := range counts3 {
									if labeled > replicas || ready > replicas || avail > ready {
										continue
									}
									for _, f := range failures {
										rs := &appsv1.ReplicaSet{
											TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
											ObjectMeta: objectMeta(generation, old),
											Spec:       appsv1.ReplicaSetSpec{Replicas: spec},
											Status: appsv1.ReplicaSetStatus{
												ObservedGeneration: observed, Replicas: replicas, FullyLabeledReplicas: labeled,
												ReadyReplicas: ready, AvailableReplicas: avail,
											},
										}
										if f != nil {
											rs.Status.Conditions = []appsv1.ReplicaSetCondition{*f}
										}
										if !yield(rs) {
											return
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

func genJobs(yield func(runtime.Object) bool) {
	conds := [][]batchv1.JobCondition{
		nil,
		{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonCompletionsReached}},
		{{Type: batchv1.JobComplete, Status: corev1.ConditionFalse}, {Type: batchv1.JobFailed, Status: corev1.ConditionFalse}},
		{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonBackoffLimitExceeded, Message: "Job has reached the specified backoff limit"}},
		{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonDeadlineExceeded, Message: "Job was active longer than specified deadline"}},
		{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonBackoffLimitExceeded}},
		{{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonCompletionsReached}},
		{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue, Reason: "JobSuspended"}},
	}
	started := metav1.NewTime(kstatusRef.Add(-5 * time.Minute))
	for _, completions := range []*int32{nil, i32(3)} {
		for _, suspend := range []*bool{nil, new(true)} {
			for _, start := range []*metav1.Time{nil, &started} {
				for _, c := range conds {
					for _, active := range []int32{0, 2} {
						for _, succeeded := range []int32{0, 1, 3} {
							for _, failed := range []int32{0, 2} {
								j := &batchv1.Job{
									TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
									ObjectMeta: metav1.ObjectMeta{Name: "export", Namespace: "shop", Generation: 1, CreationTimestamp: metav1.NewTime(kstatusRef.Add(-10 * time.Minute))},
									Spec:       batchv1.JobSpec{Completions: completions, Suspend: suspend},
									Status: batchv1.JobStatus{
										StartTime: start, Active: active, Succeeded: succeeded, Failed: failed, Conditions: c,
									},
								}
								if !yield(j) {
									return
								}
							}
						}
					}
				}
			}
		}
	}
}

// genCronJobs: kstatus reads nothing of a CronJob; the engine reads its schedule against its
// last run. No Job of it is in the snapshot (gone with the history limits).
func genCronJobs(yield func(runtime.Object) bool) {
	for _, schedule := range []string{"*/5 * * * *", "0 3 * * *", "not a schedule"} {
		for _, suspend := range []*bool{nil, new(false), new(true)} {
			for _, created := range []time.Duration{2 * time.Minute, 48 * time.Hour} {
				for _, last := range []time.Duration{-1, 3 * time.Minute, 2 * time.Hour} {
					cj := &batchv1.CronJob{
						TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
						ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "shop", Generation: 1, CreationTimestamp: metav1.NewTime(kstatusRef.Add(-created))},
						Spec:       batchv1.CronJobSpec{Schedule: schedule, Suspend: suspend},
					}
					if last >= 0 {
						cj.Status.LastScheduleTime = &metav1.Time{Time: kstatusRef.Add(-last)}
					}
					if !yield(cj) {
						return
					}
				}
			}
		}
	}
}

// TestControllerOnlyCasesOfIssue37 pins the cases issue 37 found wrong, each by its own
// status, with what the verdict must now say.
func TestControllerOnlyCasesOfIssue37(t *testing.T) {
	young := metav1.NewTime(kstatusRef.Add(-2 * time.Minute))
	tests := []struct {
		name      string
		obj       runtime.Object
		wantShape Shape
		// wantBlind: the verdict says the counts cannot tell not-Ready from never-started.
		wantBlind bool
		notWhy    string
	}{
		{
			name: "StatefulSet Ready and current with no availableReplicas is healthy",
			obj: &appsv1.StatefulSet{
				ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "shop", Generation: 1},
				Spec:       appsv1.StatefulSetSpec{Replicas: i32(4)},
				Status:     appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 4, ReadyReplicas: 4, CurrentReplicas: 4},
			},
			wantShape: ShapeHealthy,
		},
		{
			name: "ReplicaSet with fewer Ready than declared and no failure condition is progressing",
			obj: &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "shop", Generation: 1, CreationTimestamp: young},
				Spec:       appsv1.ReplicaSetSpec{Replicas: i32(4)},
				Status:     appsv1.ReplicaSetStatus{ObservedGeneration: 1, Replicas: 4, FullyLabeledReplicas: 4, ReadyReplicas: 2, AvailableReplicas: 2},
			},
			wantShape: ShapeProgressing, wantBlind: true,
		},
		{
			name: "an old ReplicaSet with some copies Ready is progressing: a copy may have been replaced a moment ago",
			obj: &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "shop", Generation: 1, CreationTimestamp: metav1.NewTime(kstatusRef.Add(-72 * time.Hour))},
				Spec:       appsv1.ReplicaSetSpec{Replicas: i32(4)},
				Status:     appsv1.ReplicaSetStatus{ObservedGeneration: 1, Replicas: 4, FullyLabeledReplicas: 4, ReadyReplicas: 3, AvailableReplicas: 3},
			},
			wantShape: ShapeProgressing, wantBlind: true,
		},
		{
			name: "DaemonSet with fewer Ready than desired and no failure condition is progressing",
			obj: &appsv1.DaemonSet{
				ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "shop", Generation: 3, CreationTimestamp: metav1.NewTime(kstatusRef.Add(-72 * time.Hour))},
				Status: appsv1.DaemonSetStatus{
					ObservedGeneration: 3, DesiredNumberScheduled: 5, CurrentNumberScheduled: 5, UpdatedNumberScheduled: 5, NumberReady: 4, NumberAvailable: 4,
				},
			},
			wantShape: ShapeProgressing, wantBlind: true,
		},
		{
			name: "DaemonSet with no status yet is progressing, not run-nowhere",
			obj: &appsv1.DaemonSet{
				ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "shop"},
			},
			wantShape: ShapeProgressing, notWhy: "desiredNumberScheduled",
		},
		{
			name: "DaemonSet at generation 1 whose controller has not written status is progressing",
			obj: &appsv1.DaemonSet{
				ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "shop", Generation: 1, CreationTimestamp: young},
			},
			wantShape: ShapeProgressing, notWhy: "desiredNumberScheduled",
		},
		{
			name: "ReplicaSet with ReplicaFailure and every copy present is not healthy",
			obj: &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "shop", Generation: 1},
				Spec:       appsv1.ReplicaSetSpec{Replicas: i32(4)},
				Status: appsv1.ReplicaSetStatus{
					ObservedGeneration: 1, Replicas: 4, FullyLabeledReplicas: 4, ReadyReplicas: 4, AvailableReplicas: 4,
					Conditions: []appsv1.ReplicaSetCondition{{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue}},
				},
			},
			wantShape: ShapeProgressing,
		},
		{
			name: "ReplicaSet with ReplicaFailure and copies missing never starts",
			obj: &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "shop", Generation: 1},
				Spec:       appsv1.ReplicaSetSpec{Replicas: i32(4)},
				Status: appsv1.ReplicaSetStatus{
					ObservedGeneration: 1, Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
					Conditions: []appsv1.ReplicaSetCondition{{
						Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
						Message: `pods "rs-" is forbidden: exceeded quota: compute, requested: requests.memory=3Gi, used: requests.memory=1Gi, limited: requests.memory=2Gi`,
					}},
				},
			},
			// One copy runs and is Ready: the others were never created, not "no copy".
			wantShape: ShapeNeverStarts, notWhy: "ever starts",
		},
		{
			name: "Deployment alone past its deadline whose copies exist and are not Ready says the counts cannot tell",
			obj: &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "mailer", Namespace: "shop", Generation: 1},
				Spec:       appsv1.DeploymentSpec{Replicas: i32(2), ProgressDeadlineSeconds: i32(30)},
				Status: appsv1.DeploymentStatus{
					ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, UnavailableReplicas: 2,
					Conditions: []appsv1.DeploymentCondition{
						{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable"},
						{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: reasonTimedOut, Message: `ReplicaSet "mailer-8465586d8b" has timed out progressing.`},
					},
				},
			},
			wantShape: ShapeNeverStarts, wantBlind: true, notWhy: "no copy ever starts",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, w := byControllerOnly(t, tt.obj)
			if d.Shape != tt.wantShape {
				t.Errorf("shape = %s, want %s (%s)", d.Shape, tt.wantShape, d.Headline)
			}
			if tt.notWhy != "" && containsFold(d.Headline, tt.notWhy) {
				t.Errorf("headline says %q: %s", tt.notWhy, d.Headline)
			}
			told := hasEvidenceKind(&d, SourceControllerStatus, "CountsCannotTell") && containsFold(d.Headline, "cannot tell")
			if told != tt.wantBlind {
				t.Errorf("says the counts cannot tell = %v, want %v (why %q)\nheadline %s\nevidence %+v", told, tt.wantBlind, w.cls.why, d.Headline, d.Evidence)
			}
		})
	}
}

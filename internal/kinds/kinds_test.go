package kinds_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// The words kubectl takes for each kind: the kind and the resource, each bare and with the
// group, and the short names the API server's storage declares
// (k8s.io/kubernetes pkg/registry/{apps,batch}/*/storage, ShortNames).
func TestLookupTakesWhatKubectlTakes(t *testing.T) {
	want := map[string]string{
		"deployment": "Deployment", "deployments": "Deployment", "deploy": "Deployment",
		"deployment.apps": "Deployment", "deployments.apps": "Deployment",
		"statefulset": "StatefulSet", "statefulsets": "StatefulSet", "sts": "StatefulSet",
		"statefulset.apps": "StatefulSet", "statefulsets.apps": "StatefulSet",
		"daemonset": "DaemonSet", "daemonsets": "DaemonSet", "ds": "DaemonSet",
		"daemonset.apps": "DaemonSet", "daemonsets.apps": "DaemonSet",
		"replicaset": "ReplicaSet", "replicasets": "ReplicaSet", "rs": "ReplicaSet",
		"replicaset.apps": "ReplicaSet", "replicasets.apps": "ReplicaSet",
		"job": "Job", "jobs": "Job", "job.batch": "Job", "jobs.batch": "Job",
		"cronjob": "CronJob", "cronjobs": "CronJob", "cj": "CronJob",
		"cronjob.batch": "CronJob", "cronjobs.batch": "CronJob",
		"Deploy": "Deployment", "STS": "StatefulSet", "CronJobs.Batch": "CronJob",
	}
	for word, kind := range want {
		k, ok := kinds.Lookup(word)
		if !ok || k.Kind != kind {
			t.Errorf("Lookup(%q) = %v, %v; want %s", word, k, ok, kind)
		}
	}
	n := 0
	for _, k := range kinds.Workloads {
		n += len(k.Aliases())
	}
	if lower := len(want) - 3; n != lower {
		t.Errorf("the kinds have %d aliases, want the %d above", n, lower)
	}
	for _, word := range []string{"", "pod", "po", "svc", "job.apps", "deployment.batch", "deploy.apps", "Deployments.extensions"} {
		if k, ok := kinds.Lookup(word); ok {
			t.Errorf("Lookup(%q) = %s, want none", word, k.Kind)
		}
	}
}

// Every workload kind of the snapshot has its adapter, and Of finds it from an object of the
// kind's type.
func TestEveryWorkloadKindHasItsAdapter(t *testing.T) {
	seen := map[string]bool{}
	for i := range snapshot.Kinds {
		sk := &snapshot.Kinds[i]
		k := kinds.Named(sk.Kind)
		if !sk.Workload {
			if k != nil {
				t.Errorf("%s has an adapter but the snapshot does not take it for a workload", sk.Kind)
			}
			continue
		}
		if k == nil {
			t.Errorf("the workload kind %s has no adapter", sk.Kind)
			continue
		}
		seen[k.Kind] = true
		if got := kinds.Of(sk.New()); got != k {
			t.Errorf("Of(%T) = %v, want the %s adapter", sk.New(), got, k.Kind)
		}
		if k.GVK.Kind != k.Kind || sk.GVK != k.GVK || sk.Resource != k.Resource || sk.Follows != k.ControlledBy {
			t.Errorf("%s: the snapshot's entry %v/%s/%s and the adapter's %v/%s/%s differ",
				k.Kind, sk.GVK, sk.Resource, sk.Follows, k.GVK, k.Resource, k.ControlledBy)
		}
	}
	for _, k := range kinds.Workloads {
		if !seen[k.Kind] {
			t.Errorf("the adapter of %s has no kind in the snapshot", k.Kind)
		}
	}
	if kinds.Of(&corev1.Pod{}) != nil || kinds.Of(nil) != nil {
		t.Error("Of takes a pod or nil for a workload")
	}
}

// The template an adapter returns is the object's own, at the path it names.
func TestTemplateIsAtItsPath(t *testing.T) {
	for i := range snapshot.Kinds {
		sk := &snapshot.Kinds[i]
		if !sk.Workload {
			continue
		}
		obj := sk.New()
		k := kinds.Of(obj)
		k.Template(obj).Spec.Containers = []corev1.Container{{Name: "app", Image: "registry.example/app:" + k.Kind}}
		got, ok := fieldpath.ValueAt(nil, obj, k.TemplatePath.Child("spec", "containers").Index(0).Child("image"))
		if !ok || got != "registry.example/app:"+k.Kind {
			t.Errorf("%s: %s.spec.containers[0].image reads %q, %v; want the image set through Template", k.Kind, k.TemplatePath, got, ok)
		}
	}
}

func TestDeclared(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  any
		n    int32
		set  bool
	}{
		{"a Deployment's replicas", &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3)}}, 3, true},
		{"a Deployment without replicas runs one", &appsv1.Deployment{}, 1, false},
		{"a StatefulSet scaled to zero", &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](0)}}, 0, true},
		{"a DaemonSet's nodes", &appsv1.DaemonSet{Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 5}}, 5, true},
		{"a ReplicaSet's replicas", &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](2)}}, 2, true},
		{"a Job's completions", &batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr.To[int32](4)}}, 4, true},
		{"a Job without completions", &batchv1.Job{}, 1, false},
		{"a CronJob leaves it to its Jobs", &batchv1.CronJob{}, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n, set := kinds.Of(tc.obj).Declared(tc.obj); n != tc.n || set != tc.set {
				t.Errorf("Declared = %d, %v; want %d, %v", n, set, tc.n, tc.set)
			}
		})
	}
}

func TestControllerEvidence(t *testing.T) {
	at := metav1.Unix(1700000000, 0)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Generation: 4},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: 3, Replicas: 3, ReadyReplicas: 2, AvailableReplicas: 1, UpdatedReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable", LastTransitionTime: at},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated", LastUpdateTime: at},
			},
		},
	}
	k := kinds.Of(d)
	if g, o, ok := k.Generation(d); g != 4 || o != 3 || !ok {
		t.Errorf("Generation = %d, %d, %v", g, o, ok)
	}
	if c, ok := k.Counts(d); !ok || c != (kinds.Counts{Replicas: 3, Ready: 2, Available: 1, Updated: 2}) {
		t.Errorf("Counts = %+v, %v", c, ok)
	}
	var got []kinds.Condition
	for i := range k.ConditionCount(d) {
		got = append(got, k.Condition(d, i))
	}
	if len(got) != 2 || got[0].Type != "Available" || got[0].Status != "False" || !got[0].LastTransition.Equal(at.Time) ||
		got[1].Reason != "ReplicaSetUpdated" || !got[1].LastUpdate.Equal(at.Time) {
		t.Errorf("Conditions = %+v", got)
	}
	sts := &appsv1.StatefulSet{Status: appsv1.StatefulSetStatus{Conditions: []appsv1.StatefulSetCondition{{Type: "Custom", Status: corev1.ConditionTrue, Reason: "R"}}}}
	if k := kinds.Of(sts); k.ConditionCount(sts) != 1 || k.Condition(sts, 0) != (kinds.Condition{Type: "Custom", Status: "True", Reason: "R"}) {
		t.Errorf("a StatefulSet's conditions read %d", k.ConditionCount(sts))
	}

	ds := &appsv1.DaemonSet{Status: appsv1.DaemonSetStatus{CurrentNumberScheduled: 4, NumberMisscheduled: 1, NumberReady: 3, NumberAvailable: 2, UpdatedNumberScheduled: 1}}
	if c, _ := kinds.Of(ds).Counts(ds); c != (kinds.Counts{Replicas: 5, Ready: 3, Available: 2, Updated: 1}) {
		t.Errorf("a DaemonSet's copies count those on nodes where they should not run too: %+v", c)
	}
	rs := &appsv1.ReplicaSet{Status: appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 1}}
	if c, _ := kinds.Of(rs).Counts(rs); c.Updated != 3 {
		t.Errorf("every copy of a ReplicaSet is of its one template: %+v", c)
	}
	for _, o := range []any{&batchv1.Job{}, &batchv1.CronJob{}} {
		if _, _, ok := kinds.Of(o).Generation(o); ok {
			t.Errorf("%T has no observedGeneration", o)
		}
		if _, ok := kinds.Of(o).Counts(o); ok {
			t.Errorf("%T counts no copies of one template", o)
		}
	}
}

func TestStrategy(t *testing.T) {
	pct := intstr.FromString("50%")
	for _, tc := range []struct {
		name     string
		obj      any
		recreate bool
		mu       string
		roundUp  bool
	}{
		{"a Deployment's default", &appsv1.Deployment{}, false, "25%", false},
		{"a Deployment's Recreate", &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}}}, true, "", false},
		{"a DaemonSet's default", &appsv1.DaemonSet{}, false, "1", true},
		{"a DaemonSet under OnDelete", &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}}}, false, "", false},
		{"a StatefulSet without a bound", &appsv1.StatefulSet{}, false, "", true},
		{"a StatefulSet's bound", &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
			RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{MaxUnavailable: &pct},
		}}}, false, "50%", true},
		{"a ReplicaSet replaces nothing", &appsv1.ReplicaSet{}, false, "", false},
		{"a Job replaces nothing", &batchv1.Job{}, false, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := kinds.Of(tc.obj).Strategy(tc.obj)
			mu := ""
			if s.MaxUnavailable != nil {
				mu = s.MaxUnavailable.String()
				if s.Path == nil || s.Path.String() == "" {
					t.Error("a bound without its path")
				}
			}
			if s.Recreate != tc.recreate || mu != tc.mu || s.RoundUp != tc.roundUp && mu != "" {
				t.Errorf("Strategy = %+v (maxUnavailable %q); want recreate %v, maxUnavailable %q, round up %v", s, mu, tc.recreate, tc.mu, tc.roundUp)
			}
		})
	}
}

func TestRolloutAndShortNames(t *testing.T) {
	var rollout, short []string
	for _, k := range kinds.Workloads {
		if k.Rollout {
			rollout = append(rollout, k.Kind)
		}
		short = append(short, k.Short())
	}
	if got := strings.Join(rollout, " "); got != "Deployment StatefulSet DaemonSet" {
		t.Errorf("kubectl rollout applies to %s", got)
	}
	if got := strings.Join(short, " "); got != "deploy sts ds rs cj job" {
		t.Errorf("short names %s", got)
	}
}

// The kinds whose template is spec.template share one path, which the engine knows by its
// pointer.
func TestSpecTemplateIsOnePath(t *testing.T) {
	for _, k := range kinds.Workloads {
		if k.TemplatePath.String() == "spec.template" && k.TemplatePath != kinds.Deployment.TemplatePath {
			t.Errorf("%s has a spec.template path of its own", k.Kind)
		}
	}
	if got := kinds.CronJob.TemplatePath.String(); got != "spec.jobTemplate.spec.template" {
		t.Errorf("a CronJob's template is at %s", got)
	}
}

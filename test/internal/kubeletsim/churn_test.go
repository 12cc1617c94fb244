package kubeletsim_test

import (
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
)

// churnPod is a pod of two containers, as Settle leaves it: "api" with a readiness probe its
// program passes, "proxy" without one; with env, api needs DATABASE_URL and exits 1 without it.
func churnPod(t *testing.T, env []corev1.EnvVar) (*corev1.Pod, time.Time) {
	t.Helper()
	prog := kubeletsim.Program{Ports: []int32{8080}, HealthPaths: []string{"/healthz"}, RequiredEnv: []string{"DATABASE_URL"}}
	world := kubeletsim.NewWorld().
		SetImage("registry.churn.example/api:1.0", kubeletsim.Image{Program: prog}).
		SetImage("registry.churn.example/proxy:2.1", kubeletsim.Image{Program: kubeletsim.Program{Ports: []int32{15001}}})
	created := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "api-7d9f8b6c5-x2k4p", Namespace: "churn", UID: "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d", CreationTimestamp: metav1.NewTime(created)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{
				Name: "api", Image: "registry.churn.example/api:1.0", Env: env,
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
					PeriodSeconds: 10,
				},
			},
			{Name: "proxy", Image: "registry.churn.example/proxy:2.1"},
		}},
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(created)}}
	settled := created.Add(time.Hour)
	st := kubeletsim.Settle(world, pod, "churn-node-1", "10.244.1.7", created.Add(time.Second), settled)
	pod.Status = st.Status
	return pod, settled
}

func healthyChurnPod(t *testing.T) (*corev1.Pod, time.Time) {
	return churnPod(t, []corev1.EnvVar{{Name: "DATABASE_URL", Value: "postgres://api@db.churn.example:5432/api"}})
}

func containerStatus(t *testing.T, st corev1.PodStatus, name string) corev1.ContainerStatus {
	t.Helper()
	for _, cs := range st.ContainerStatuses {
		if cs.Name == name {
			return cs
		}
	}
	t.Fatalf("no status of container %s", name)
	return corev1.ContainerStatus{}
}

func podCondition(t *testing.T, st corev1.PodStatus, typ corev1.PodConditionType) corev1.PodCondition {
	t.Helper()
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c
		}
	}
	t.Fatalf("no %s condition", typ)
	return corev1.PodCondition{}
}

var containerdID = regexp.MustCompile(`^containerd://[0-9a-f]{64}$`)

// TestARestartIsWrittenAsTheKubeletWritesIt: the exited instance becomes lastState.terminated
// with its own start and container ID, the new one runs under a new ID with the restart count
// one higher, and the Ready conditions flip to the generator's ContainersNotReady while the
// readiness probe has not passed; then ReadyAgain flips them back. The container without a
// probe is ready at once and the pod's conditions stay as they were.
func TestARestartIsWrittenAsTheKubeletWritesIt(t *testing.T) {
	pod, settled := healthyChurnPod(t)
	before := containerStatus(t, pod.Status, "api")
	if before.State.Running == nil || !before.Ready || before.RestartCount != 0 {
		t.Fatalf("the settled pod's api is not running and ready: %+v", before)
	}
	at := settled.Add(90 * time.Second)
	st, err := kubeletsim.Restarted(pod, "api", 137, "OOMKilled", at)
	if err != nil {
		t.Fatal(err)
	}
	api := containerStatus(t, st, "api")
	want := corev1.ContainerStateTerminated{
		ExitCode: 137, Reason: "OOMKilled", StartedAt: before.State.Running.StartedAt,
		FinishedAt: metav1.NewTime(at), ContainerID: before.ContainerID,
	}
	if got := api.LastTerminationState.Terminated; got == nil || !reflect.DeepEqual(*got, want) {
		t.Errorf("lastState.terminated = %+v, want %+v", got, want)
	}
	if api.RestartCount != 1 || api.Ready || api.Started == nil || !*api.Started {
		t.Errorf("restartCount %d, ready %v, started %v; want 1, false, true", api.RestartCount, api.Ready, api.Started)
	}
	if api.State.Running == nil || !api.State.Running.StartedAt.Equal(&metav1.Time{Time: at}) || api.State.Waiting != nil {
		t.Errorf("state = %+v, want running since %s", api.State, at)
	}
	if api.ContainerID == before.ContainerID || !containerdID.MatchString(api.ContainerID) {
		t.Errorf("container ID %q: want a new containerd ID", api.ContainerID)
	}
	if api.Image != before.Image || api.ImageID != before.ImageID || !reflect.DeepEqual(api.Resources, before.Resources) {
		t.Errorf("the image or resources changed with the restart")
	}
	if got := containerStatus(t, st, "proxy"); !reflect.DeepEqual(got, containerStatus(t, pod.Status, "proxy")) {
		t.Errorf("proxy changed: %+v", got)
	}
	for _, typ := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
		c := podCondition(t, st, typ)
		if c.Status != corev1.ConditionFalse || c.Reason != "ContainersNotReady" || c.Message != "containers with unready status: [api]" {
			t.Errorf("%s = %s %q %q, want False ContainersNotReady \"containers with unready status: [api]\"", typ, c.Status, c.Reason, c.Message)
		}
		if !c.LastTransitionTime.Equal(&metav1.Time{Time: at}) {
			t.Errorf("%s flipped at %s, want %s", typ, c.LastTransitionTime, at)
		}
	}
	for _, typ := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodScheduled} {
		if got, was := podCondition(t, st, typ), podCondition(t, pod.Status, typ); !reflect.DeepEqual(got, was) {
			t.Errorf("%s changed: %+v, was %+v", typ, got, was)
		}
	}
	if st.Phase != corev1.PodRunning || st.PodIP != pod.Status.PodIP || !st.StartTime.Equal(pod.Status.StartTime) {
		t.Errorf("phase %s, pod IP %s, start %s changed", st.Phase, st.PodIP, st.StartTime)
	}
	if pod.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Fatal("Restarted changed the pod it was given")
	}

	restarted := pod.DeepCopy()
	restarted.Status = st
	ready := at.Add(10 * time.Second)
	st = kubeletsim.ReadyAgain(restarted, ready)
	if api := containerStatus(t, st, "api"); !api.Ready || api.RestartCount != 1 || api.LastTerminationState.Terminated == nil {
		t.Errorf("ready again: %+v", api)
	}
	for _, typ := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
		c := podCondition(t, st, typ)
		if c.Status != corev1.ConditionTrue || c.Reason != "" || c.Message != "" || !c.LastTransitionTime.Equal(&metav1.Time{Time: ready}) {
			t.Errorf("%s = %+v, want True since %s with no reason", typ, c, ready)
		}
	}

	// Restarting the proxy, which has no readiness probe, flips nothing.
	restarted.Status = st
	st, err = kubeletsim.Restarted(restarted, "proxy", 1, "Error", ready.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if proxy := containerStatus(t, st, "proxy"); !proxy.Ready || proxy.RestartCount != 1 || proxy.LastTerminationState.Terminated.Reason != "Error" {
		t.Errorf("proxy restart: %+v", proxy)
	}
	if c := podCondition(t, st, corev1.PodReady); c.Status != corev1.ConditionTrue || !c.LastTransitionTime.Equal(&metav1.Time{Time: ready}) {
		t.Errorf("Ready = %+v, want True since %s still", c, ready)
	}
	if _, err := kubeletsim.Restarted(restarted, "sidecar", 1, "Error", ready); err == nil {
		t.Error("a restart of a container the pod does not have was written")
	}
}

// TestACrashLoopIsWrittenAsSettleWritesOne: a healthy pod restarted once and then crash-looping
// has the same fields set as a pod Settle leaves crash-looping (DATABASE_URL missing), and the
// back-off message in doBackOff's format for the first back-off.
func TestACrashLoopIsWrittenAsSettleWritesOne(t *testing.T) {
	pod, settled := healthyChurnPod(t)
	if _, err := kubeletsim.CrashLooping(pod, 1, settled); err == nil {
		t.Error("a container that never restarted went straight into a crash loop")
	}
	st, err := kubeletsim.Restarted(pod, "", 1, "Error", settled.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	pod.Status = st
	at := settled.Add(2 * time.Minute)
	st, err = kubeletsim.CrashLooping(pod, 1, at)
	if err != nil {
		t.Fatal(err)
	}
	api := containerStatus(t, st, "api")
	wantMsg := "back-off 10s restarting failed container=api pod=api-7d9f8b6c5-x2k4p_churn(0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d)"
	if w := api.State.Waiting; w == nil || w.Reason != "CrashLoopBackOff" || w.Message != wantMsg {
		t.Errorf("waiting = %+v, want CrashLoopBackOff %q", w, wantMsg)
	}
	if lt := api.LastTerminationState.Terminated; lt == nil || lt.ExitCode != 1 || lt.Reason != "Error" || lt.ContainerID != api.ContainerID {
		t.Errorf("lastState.terminated = %+v, want exit 1 Error of container %s", lt, api.ContainerID)
	}
	if api.RestartCount != 1 || api.Ready || *api.Started {
		t.Errorf("restartCount %d, ready %v, started %v; want 1, false, false", api.RestartCount, api.Ready, *api.Started)
	}
	// Every container crash-loops, in the order of the spec.
	if c := podCondition(t, st, corev1.PodReady); c.Status != corev1.ConditionFalse || c.Message != "containers with unready status: [api proxy]" {
		t.Errorf("Ready = %+v", c)
	}

	crashing, _ := churnPod(t, nil)
	ref := containerStatus(t, crashing.Status, "api")
	if ref.State.Waiting == nil || ref.State.Waiting.Reason != "CrashLoopBackOff" {
		t.Fatalf("Settle's pod without DATABASE_URL is not crash-looping: %+v", ref.State)
	}
	if got, want := setFields(t, api), setFields(t, ref); !slices.Equal(got, want) {
		t.Errorf("fields set:\n churn  %v\n Settle %v", got, want)
	}
	if got, want := strings.Join(strings.Fields(regexp.MustCompile(`back-off \S+`).ReplaceAllString(api.State.Waiting.Message, "")), " "),
		strings.Join(strings.Fields(regexp.MustCompile(`back-off \S+`).ReplaceAllString(ref.State.Waiting.Message, "")), " "); got != want {
		t.Errorf("back-off message %q, Settle's %q (the back-off's length aside)", got, want)
	}
	if got, want := setFields(t, podCondition(t, st, corev1.PodReady)), setFields(t, podCondition(t, crashing.Status, corev1.PodReady)); !slices.Equal(got, want) {
		t.Errorf("Ready condition fields: churn %v, Settle %v", got, want)
	}
}

// setFields lists the JSON paths that v sets, sorted.
func setFields(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(prefix+"."+k, x)
			}
		case []any:
			for _, x := range v {
				walk(prefix+"[]", x)
			}
		default:
			out = append(out, prefix)
		}
	}
	walk("", m)
	sort.Strings(out)
	return slices.Compact(out)
}

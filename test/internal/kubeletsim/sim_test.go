package kubeletsim_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
)

func TestDeploymentBecomesReadyAndLogsComeThroughTheAPIServer(t *testing.T) {
	e := start(t, world(), nil)
	e.apply(t, deployment("api", appImage, 3, nil))
	eventually(t, 60*time.Second, func() string {
		d, err := e.cs.AppsV1().Deployments(e.ns).Get(context.Background(), "api", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if d.Status.AvailableReplicas != 3 {
			return fmt.Sprintf("deployment available %d/3", d.Status.AvailableReplicas)
		}
		return ""
	})
	pods := e.pods(t, "api")
	nodes := map[string]bool{}
	for _, p := range pods {
		nodes[p.Spec.NodeName] = true
		if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != 1 {
			t.Fatalf("pod %s phase %s statuses %d", p.Name, p.Status.Phase, len(p.Status.ContainerStatuses))
		}
		cs := p.Status.ContainerStatuses[0]
		if !cs.Ready || cs.State.Running == nil || !strings.HasPrefix(cs.ContainerID, "containerd://") ||
			cs.Image != appImage || !strings.HasPrefix(cs.ImageID, "registry.sim.example/shop/api@sha256:") {
			t.Fatalf("container status %+v", cs)
		}
		order := []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled}
		for i, c := range p.Status.Conditions {
			if i >= len(order) || c.Type != order[i] || c.Status != corev1.ConditionTrue {
				t.Fatalf("conditions %+v, want %v all True", p.Status.Conditions, order)
			}
		}
	}
	if len(nodes) != 3 {
		t.Fatalf("3 replicas on %d nodes, want spread over 3", len(nodes))
	}
	p := pods[0]
	eventually(t, 10*time.Second, func() string {
		evs := e.events(t, p.Name)
		for _, want := range [][2]string{
			{"Pulled", "Successfully pulled image \"" + appImage + "\""},
			{"Created", "Container created"},
			{"Started", "Container started"},
		} {
			found := false
			for _, ev := range evs {
				if ev.Reason == want[0] && strings.HasPrefix(ev.Message, want[1]) &&
					ev.Source.Component == "kubelet" && ev.Source.Host == p.Spec.NodeName &&
					ev.InvolvedObject.FieldPath == "spec.containers{api}" {
					found = true
				}
			}
			if !found {
				return fmt.Sprintf("no kubelet event %v among %d events of %s", want, len(evs), p.Name)
			}
		}
		return ""
	})
	sched, err := e.cs.EventsV1().Events(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scheduled := false
	for _, ev := range sched.Items {
		if ev.Reason == "Scheduled" && ev.Regarding.Name == p.Name && ev.ReportingController == "default-scheduler" &&
			ev.Note == fmt.Sprintf("Successfully assigned %s/%s to %s", e.ns, p.Name, p.Spec.NodeName) {
			scheduled = true
		}
	}
	if !scheduled {
		t.Fatalf("no Scheduled event for %s", p.Name)
	}

	body, err := e.cs.CoreV1().Pods(e.ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: "api", TailLines: ptr.To[int64](5)}).DoRaw(context.Background())
	if err != nil {
		t.Fatalf("pods/log through the API server: %v", err)
	}
	want := fmt.Sprintf(`level=info msg="listening" addr=%s:8080 intake=https://%s/v1`, p.Status.PodIP, upstream)
	if strings.TrimSpace(string(body)) != want {
		t.Fatalf("logs %q, want %q", body, want)
	}
	_, err = e.cs.CoreV1().Pods(e.ns).GetLogs(p.Name, &corev1.PodLogOptions{Previous: true}).Stream(context.Background())
	if err == nil || !strings.Contains(err.Error(), `previous terminated container "api" in pod "`+p.Name+`" not found`) {
		t.Fatalf("previous logs of a container that never restarted: %v", err)
	}
}

func TestUpstreamOutageFailsReadinessUnderAnUnchangedSpec(t *testing.T) {
	e := start(t, world(), nil)
	e.apply(t, deployment("api", appImage, 1, nil))
	ready := func(want bool) func() string {
		return func() string {
			pods := e.pods(t, "api")
			if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 || pods[0].Status.ContainerStatuses[0].Ready != want {
				return fmt.Sprintf("pod not ready=%v", want)
			}
			return ""
		}
	}
	eventually(t, 60*time.Second, ready(true))
	e.sim.World().SetReachable(upstream, false)
	eventually(t, 30*time.Second, ready(false))
	p := e.pods(t, "api")[0]
	c := condition(p, corev1.PodReady)
	if c.Status != corev1.ConditionFalse || c.Reason != "ContainersNotReady" || c.Message != "containers with unready status: [api]" {
		t.Fatalf("Ready condition %+v", c)
	}
	eventually(t, 10*time.Second, func() string {
		if !hasEvent(e.events(t, p.Name), "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503") {
			return "no Unhealthy 503 event"
		}
		return ""
	})
	body, err := e.cs.CoreV1().Pods(e.ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `err="dial tcp `+upstream+`: connect: connection refused"`) {
		t.Fatalf("logs do not show the upstream failure:\n%s", body)
	}
	if p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Fatalf("restartCount %d, want 0", p.Status.ContainerStatuses[0].RestartCount)
	}
}

func TestMemoryAboveLimitIsOOMKilledIntoCrashLoopBackOff(t *testing.T) {
	e := start(t, world(), nil)
	e.apply(t, deployment("thumbs", oomImage, 1, func(s *corev1.PodSpec) { s.Containers[0].ReadinessProbe = nil }))
	var p corev1.Pod
	eventually(t, 60*time.Second, func() string {
		pods := e.pods(t, "thumbs")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no container status yet"
		}
		p = pods[0]
		cs := p.Status.ContainerStatuses[0]
		last := cs.LastTerminationState.Terminated
		if cs.RestartCount < 2 || last == nil || cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" {
			return fmt.Sprintf("restarts %d state %+v last %+v", cs.RestartCount, cs.State, last)
		}
		if last.Reason != "OOMKilled" || last.ExitCode != 137 {
			t.Fatalf("last state %+v, want OOMKilled 137", last)
		}
		// Restarts after 0, 10, 20, 40 ... s: the n-th restart waits 10s·2^(n-1), capped at 5m0s.
		backoff := min(10*time.Second<<(cs.RestartCount-1), 5*time.Minute)
		want := fmt.Sprintf("back-off %s restarting failed container=thumbs pod=%s_%s(%s)",
			backoff, p.Name, p.Namespace, p.UID)
		if cs.State.Waiting.Message != want {
			return fmt.Sprintf("waiting message %q, want %q", cs.State.Waiting.Message, want)
		}
		return ""
	})
	if p.Status.Phase != corev1.PodRunning {
		t.Fatalf("phase %s, want Running (restartPolicy Always)", p.Status.Phase)
	}
	eventually(t, 10*time.Second, func() string {
		want := fmt.Sprintf("Back-off restarting failed container thumbs in pod %s_%s(%s)", p.Name, p.Namespace, p.UID)
		if !hasEvent(e.events(t, p.Name), "BackOff", want) {
			return "no BackOff event " + want
		}
		return ""
	})
	body, err := e.cs.CoreV1().Pods(e.ns).GetLogs(p.Name, &corev1.PodLogOptions{Previous: true}).DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != "thumbnailer ready\nconverting upload 1.heic\n" {
		t.Fatalf("previous logs %q", body)
	}
	limited, err := e.cs.CoreV1().Pods(e.ns).GetLogs(p.Name, &corev1.PodLogOptions{Previous: true, LimitBytes: ptr.To[int64](10)}).Stream(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(limited)
	if cerr := limited.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "thumbnaile" {
		t.Fatalf("limitBytes=10 gave %q", b)
	}
}

func TestFailingLivenessProbeRestartsTheContainer(t *testing.T) {
	e := start(t, world(), nil)
	e.apply(t, deployment("web", appImage, 1, func(s *corev1.PodSpec) {
		s.Containers[0].LivenessProbe = &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthy", Port: intstr.FromInt32(8080)}},
			PeriodSeconds:    2,
			FailureThreshold: 2,
		}
	}))
	var p corev1.Pod
	eventually(t, 60*time.Second, func() string {
		pods := e.pods(t, "web")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no container status yet"
		}
		p = pods[0]
		if cs := p.Status.ContainerStatuses[0]; cs.RestartCount < 1 || cs.LastTerminationState.Terminated == nil {
			return fmt.Sprintf("restartCount %d", cs.RestartCount)
		}
		return ""
	})
	eventually(t, 10*time.Second, func() string {
		evs := e.events(t, p.Name)
		if !hasEvent(evs, "Unhealthy", "Liveness probe failed: HTTP probe failed with statuscode: 404") {
			return "no Unhealthy 404 event"
		}
		if !hasEvent(evs, "Killing", "Container web failed liveness probe, will be restarted") {
			return "no Killing event"
		}
		return ""
	})
}

func TestInitContainerRunsToCompletionBeforeTheApp(t *testing.T) {
	w := world()
	migrate := "registry.sim.example/shop/migrate:1.4.2"
	w.SetImage(migrate, kubeletsim.Image{Program: kubeletsim.Program{ExitAfter: 3 * time.Second, Logs: []string{"applied 3 migrations"}}})
	e := start(t, w, nil)
	e.apply(t, deployment("api", appImage, 1, func(s *corev1.PodSpec) {
		s.InitContainers = []corev1.Container{{Name: "migrate", Image: migrate}}
	}))
	eventually(t, 60*time.Second, func() string {
		pods := e.pods(t, "api")
		if len(pods) != 1 || len(pods[0].Status.InitContainerStatuses) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no statuses yet"
		}
		p := pods[0]
		init := p.Status.InitContainerStatuses[0].State.Terminated
		if init == nil || init.ExitCode != 0 || init.Reason != "Completed" {
			return fmt.Sprintf("init state %+v", p.Status.InitContainerStatuses[0].State)
		}
		if !p.Status.ContainerStatuses[0].Ready || condition(p, corev1.PodInitialized).Status != corev1.ConditionTrue {
			return "app not ready"
		}
		body, err := e.cs.CoreV1().Pods(e.ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: "migrate"}).DoRaw(context.Background())
		if err != nil || string(body) != "applied 3 migrations\n" {
			return fmt.Sprintf("init logs %q %v", body, err)
		}
		return ""
	})
}

func TestStartupProbeGatesReadinessAndKillsASlowStarter(t *testing.T) {
	w := world()
	slow := "registry.sim.example/shop/slow:1.0.0"
	w.SetImage(slow, kubeletsim.Image{Program: kubeletsim.Program{Ports: []int32{8080}, StartupDelay: time.Minute}})
	e := start(t, w, nil)
	startup := &corev1.Probe{
		ProbeHandler:     corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}},
		PeriodSeconds:    2,
		FailureThreshold: 3,
	}
	e.apply(t, deployment("slow", slow, 1, func(s *corev1.PodSpec) {
		s.Containers[0].ReadinessProbe = nil
		s.Containers[0].StartupProbe = startup
	}))
	var p corev1.Pod
	eventually(t, 60*time.Second, func() string {
		pods := e.pods(t, "slow")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no container status yet"
		}
		p = pods[0]
		cs := p.Status.ContainerStatuses[0]
		if cs.Ready || ptr.Deref(cs.Started, false) {
			t.Fatalf("container ready=%v started=%v before its startup probe passed", cs.Ready, ptr.Deref(cs.Started, false))
		}
		if cs.RestartCount < 1 {
			return "no restart yet"
		}
		return ""
	})
	eventually(t, 10*time.Second, func() string {
		evs := e.events(t, p.Name)
		if !hasEvent(evs, "Killing", "Container slow failed startup probe, will be restarted") {
			return "no Killing event"
		}
		if !hasEvent(evs, "Unhealthy", fmt.Sprintf("Startup probe failed: dial tcp %s:8080: connect: connection refused", p.Status.PodIP)) {
			return "no Unhealthy startup event"
		}
		return ""
	})
}

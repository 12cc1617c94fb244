package kubeletsim_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
)

func TestUnknownImageTagGivesErrImagePullThenBackOff(t *testing.T) {
	e := start(t, world(), nil)
	bad := "registry.sim.example/shop/api:1.4.x"
	e.apply(t, deployment("api", bad, 1, nil))
	pullErr := fmt.Sprintf(`rpc error: code = NotFound desc = failed to pull and unpack image %q: failed to resolve image: %s: not found`, bad, bad)
	seen := map[string]bool{}
	var name string
	eventually(t, 30*time.Second, func() string {
		pods := e.pods(t, "api")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no container status yet"
		}
		name = pods[0].Name
		w := pods[0].Status.ContainerStatuses[0].State.Waiting
		if w == nil {
			return "container not waiting"
		}
		switch w.Reason {
		case "ErrImagePull":
			if w.Message != pullErr {
				t.Fatalf("ErrImagePull message %q, want %q", w.Message, pullErr)
			}
		case "ImagePullBackOff":
			want := fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %s", bad, pullErr)
			if w.Message != want {
				t.Fatalf("ImagePullBackOff message %q, want %q", w.Message, want)
			}
		}
		seen[w.Reason] = true
		if !seen["ImagePullBackOff"] {
			return fmt.Sprintf("waiting reasons seen %v, want ImagePullBackOff", seen)
		}
		return ""
	})
	evs := e.events(t, name)
	for _, want := range [][2]string{
		{"Pulling", fmt.Sprintf("Pulling image %q", bad)},
		{"Failed", fmt.Sprintf("Failed to pull image %q: %s", bad, pullErr)},
		{"Failed", "Error: ErrImagePull"},
		{"BackOff", fmt.Sprintf("Back-off pulling image %q", bad)},
		{"Failed", "Error: ImagePullBackOff"},
	} {
		if !hasEvent(evs, want[0], want[1]) {
			t.Errorf("no event %s %q", want[0], want[1])
		}
	}
	_, err := e.cs.CoreV1().Pods(e.ns).GetLogs(name, &corev1.PodLogOptions{}).Stream(context.Background())
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`container "api" in pod %q is waiting to start`, name)) {
		t.Fatalf("logs of a container that never started: %v", err)
	}
}

func TestPrivateImageWithoutPullSecretIsDenied(t *testing.T) {
	w := world()
	private := "registry.corp.sim.example/obs/shipper:1.8.0"
	w.SetImage(private, kubeletsim.Image{Private: true})
	e := start(t, w, nil)
	e.apply(t, deployment("shipper", private, 1, nil))
	want := fmt.Sprintf(`failed to pull and unpack image %q: failed to resolve image: pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed`, private)
	eventually(t, 30*time.Second, func() string {
		pods := e.pods(t, "shipper")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no container status yet"
		}
		// The pod spends most of its time in back-off; either state carries the error.
		wt := pods[0].Status.ContainerStatuses[0].State.Waiting
		backOff := fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %s", private, want)
		pulling := wt != nil && wt.Reason == "ErrImagePull" && wt.Message == want
		backingOff := wt != nil && wt.Reason == "ImagePullBackOff" && wt.Message == backOff
		if !pulling && !backingOff {
			return fmt.Sprintf("waiting %+v, want ErrImagePull %q", wt, want)
		}
		return ""
	})
}

func TestRegistryDownIsADNSFailure(t *testing.T) {
	w := world()
	e := start(t, w, nil)
	w.SetRegistryDown("registry.sim.example", true)
	e.apply(t, deployment("api", appImage, 1, nil))
	want := fmt.Sprintf(`failed to pull and unpack image %q: failed to resolve image: failed to do request: Head "https://registry.sim.example/v2/shop/api/manifests/1.4.2": dial tcp: lookup registry.sim.example on 127.0.0.53:53: no such host`, appImage)
	eventually(t, 30*time.Second, func() string {
		pods := e.pods(t, "api")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no container status yet"
		}
		wt := pods[0].Status.ContainerStatuses[0].State.Waiting
		if wt == nil || !strings.HasSuffix(wt.Message, want) {
			return fmt.Sprintf("waiting %+v, want message ending %q", wt, want)
		}
		return ""
	})
	// The registry comes back: the next pull after the back-off succeeds.
	w.SetRegistryDown("registry.sim.example", false)
	eventually(t, 60*time.Second, func() string {
		pods := e.pods(t, "api")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 || !pods[0].Status.ContainerStatuses[0].Ready {
			return "pod not ready after the registry came back"
		}
		return ""
	})
}

func TestMissingSecretKeyGivesCreateContainerConfigError(t *testing.T) {
	e := start(t, world(), nil)
	_, err := e.cs.CoreV1().Secrets(e.ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "db-credentials"},
		Data:       map[string][]byte{"password": []byte("s3cret")},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.apply(t, deployment("worker", appImage, 1, func(s *corev1.PodSpec) {
		s.Containers[0].Env = append(s.Containers[0].Env, corev1.EnvVar{Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db-credentials"}, Key: "passwd"},
		}})
	}))
	want := fmt.Sprintf("couldn't find key passwd in Secret %s/db-credentials", e.ns)
	var name string
	eventually(t, 30*time.Second, func() string {
		pods := e.pods(t, "worker")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no container status yet"
		}
		name = pods[0].Name
		if pods[0].Status.Phase != corev1.PodPending {
			return "phase " + string(pods[0].Status.Phase)
		}
		wt := pods[0].Status.ContainerStatuses[0].State.Waiting
		if wt == nil || wt.Reason != "CreateContainerConfigError" || wt.Message != want {
			return fmt.Sprintf("waiting %+v, want CreateContainerConfigError %q", wt, want)
		}
		return ""
	})
	eventually(t, 10*time.Second, func() string {
		if !hasEvent(e.events(t, name), "Failed", "Error: "+want) {
			return "no Failed event with the config error"
		}
		return ""
	})
}

func TestMissingConfigMapInEnvFrom(t *testing.T) {
	e := start(t, world(), nil)
	e.apply(t, deployment("orders", appImage, 1, func(s *corev1.PodSpec) {
		s.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "orders-flags"},
		}}}
	}))
	eventually(t, 30*time.Second, func() string {
		pods := e.pods(t, "orders")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no container status yet"
		}
		wt := pods[0].Status.ContainerStatuses[0].State.Waiting
		if wt == nil || wt.Reason != "CreateContainerConfigError" || wt.Message != `configmap "orders-flags" not found` {
			return fmt.Sprintf("waiting %+v", wt)
		}
		return ""
	})
	// Creating the ConfigMap unblocks the pod at its next sync.
	_, err := e.cs.CoreV1().ConfigMaps(e.ns).Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "orders-flags"}, Data: map[string]string{"FAST_PATH": "on"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() string {
		pods := e.pods(t, "orders")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 || !pods[0].Status.ContainerStatuses[0].Ready {
			return "pod not ready after the ConfigMap appeared"
		}
		return ""
	})
}

func TestMissingSecretVolumeIsFailedMount(t *testing.T) {
	e := start(t, world(), nil)
	e.apply(t, deployment("api", appImage, 1, func(s *corev1.PodSpec) {
		s.Volumes = []corev1.Volume{{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "app-creds"}}}}
		s.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "creds", MountPath: "/etc/creds", ReadOnly: true}}
	}))
	want := `MountVolume.SetUp failed for volume "creds" : secret "app-creds" not found`
	eventually(t, 30*time.Second, func() string {
		pods := e.pods(t, "api")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no container status yet"
		}
		p := pods[0]
		wt := p.Status.ContainerStatuses[0].State.Waiting
		if p.Status.Phase != corev1.PodPending || wt == nil || wt.Reason != "ContainerCreating" {
			return fmt.Sprintf("phase %s waiting %+v, want Pending ContainerCreating", p.Status.Phase, wt)
		}
		if c := condition(p, corev1.PodReadyToStartContainers); c == nil || c.Status != corev1.ConditionFalse {
			return fmt.Sprintf("PodReadyToStartContainers %+v, want False", c)
		}
		if !hasEvent(e.events(t, p.Name), "FailedMount", want) {
			return "no FailedMount event " + want
		}
		return ""
	})
}

func TestSlowPullWaitsInContainerCreatingThenRuns(t *testing.T) {
	const slow = "registry.sim.example/ml/ranker:2.0.0"
	w := world().SetImage(slow, kubeletsim.Image{Size: 4 << 30, PullTime: 100 * time.Second, Program: kubeletsim.Program{Ports: []int32{8080}}})
	e := start(t, w, nil)
	e.apply(t, deployment("ranker", slow, 1, nil))
	var pulling, running time.Time
	var name string
	eventually(t, 60*time.Second, func() string {
		pods := e.pods(t, "ranker")
		if len(pods) != 1 || len(pods[0].Status.ContainerStatuses) != 1 {
			return "no container status yet"
		}
		name = pods[0].Name
		st := pods[0].Status.ContainerStatuses[0].State
		switch {
		case st.Waiting != nil && st.Waiting.Reason == "ContainerCreating":
			if pulling.IsZero() {
				pulling = time.Now()
			}
			return "still pulling"
		case st.Waiting != nil:
			t.Fatalf("waiting %s (%s) during a slow pull, want ContainerCreating", st.Waiting.Reason, st.Waiting.Message)
		case st.Running != nil:
			running = time.Now()
			return ""
		}
		return "container neither waiting nor running"
	})
	// 100 simulated seconds are 5 real ones at timeScale 20; polls are 250 ms apart.
	if pulling.IsZero() || running.Sub(pulling) < 3*time.Second {
		t.Errorf("ContainerCreating seen at %v, running at %v: want about 5 s in between", pulling, running)
	}
	evs := e.events(t, name)
	if !hasEvent(evs, "Pulling", fmt.Sprintf("Pulling image %q", slow)) ||
		!hasEvent(evs, "Pulled", fmt.Sprintf("Successfully pulled image %q in 1m40s (1m40.003s including waiting). Image size: %d bytes.", slow, int64(4<<30))) {
		t.Errorf("events %v lack Pulling and a Pulled that took 1m40s", evs)
	}
	for _, ev := range evs {
		if ev.Reason == "Pulling" && ev.Count > 1 {
			t.Errorf("Pulling reported %d times for one pull", ev.Count)
		}
	}
}

package kubeletsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

var never = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// podWorker plays the kubelet for one pod: one goroutine, woken by pod updates and by its own
// timers (probes, back-offs, exits). mu guards the state the log server reads.
type podWorker struct {
	s       *Sim
	node    *node
	updates chan *corev1.Pod
	cancel  context.CancelFunc

	mu         sync.Mutex
	pod        *corev1.Pod
	ip         string
	startTime  time.Time
	sandboxAt  time.Time
	init, ctrs []*ctr
	conds      map[corev1.PodConditionType]condState
	written    []byte // last status patch sent
	killing    bool
	mountFails int
}

type condState struct {
	status corev1.ConditionStatus
	since  time.Time
}

func newPodWorker(s *Sim, n *node, pod *corev1.Pod) *podWorker {
	w := &podWorker{s: s, node: n, pod: pod, updates: make(chan *corev1.Pod, 1), conds: map[corev1.PodConditionType]condState{}}
	for _, c := range pod.Spec.InitContainers {
		w.init = append(w.init, &ctr{spec: c, isInit: true})
	}
	for _, c := range pod.Spec.Containers {
		w.ctrs = append(w.ctrs, &ctr{spec: c})
	}
	return w
}

// update hands the worker the newest pod object, replacing one it has not read yet.
func (w *podWorker) update(p *corev1.Pod) {
	for {
		select {
		case w.updates <- p:
			return
		default:
		}
		select {
		case <-w.updates:
		default:
		}
	}
}

func (w *podWorker) run(ctx context.Context) {
	s := w.s
	// The kubelet picks the pod up, admits it and creates its sandbox (network: a pod IP).
	if !sleepCtx(ctx, s.scaled(time.Duration(800+rand.IntN(1200))*time.Millisecond)) {
		return
	}
	w.mu.Lock()
	w.startTime = s.now()
	w.sandboxAt = w.startTime
	w.ip = w.node.allocIP()
	if w.pod.Spec.HostNetwork {
		w.ip = nodeIP
	}
	w.mu.Unlock()
	for {
		w.mu.Lock()
		next := w.sync(ctx)
		w.mu.Unlock()
		if next.IsZero() {
			return // pod gone
		}
		wait := time.Until(next)
		timer := time.NewTimer(max(wait, 20*time.Millisecond))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case p := <-w.updates:
			timer.Stop()
			w.mu.Lock()
			w.pod = p
			w.mu.Unlock()
		case <-timer.C:
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// sync is one pass of the kubelet's syncPod; it returns the next wake time, or zero when the
// worker is done.
func (w *podWorker) sync(ctx context.Context) time.Time {
	now := w.s.now()
	if w.pod.DeletionTimestamp != nil {
		w.kill(ctx, now)
		return time.Time{}
	}
	next := never
	if msg := w.missingVolume(ctx); msg != "" {
		w.mountFails++
		w.s.kubeletEvents(w.node).event(podRef(w.pod, "", false), corev1.EventTypeWarning, "FailedMount", msg, now)
		backoff := min(time.Duration(1<<min(w.mountFails, 8))*500*time.Millisecond, 2*time.Minute+2*time.Second)
		next = now.Add(w.s.scaled(backoff))
	} else {
		w.mountFails = 0
		initialized := true
		for _, c := range w.init {
			if c.term != nil && c.term.ExitCode == 0 && !c.running {
				continue
			}
			initialized = false
			next = earliest(next, w.step(ctx, c, now))
			if c.term != nil && c.term.ExitCode == 0 && !c.running {
				next = now // next init container at once
			}
			break
		}
		if initialized {
			for _, c := range w.ctrs {
				next = earliest(next, w.step(ctx, c, now))
			}
		}
	}
	w.writeStatus(ctx, now)
	return next
}

// kill plays graceful deletion: Killing for running containers, then the final delete the
// kubelet's status manager issues once they stopped.
func (w *podWorker) kill(ctx context.Context, now time.Time) {
	if !w.killing {
		w.killing = true
		for _, c := range append(append([]*ctr{}, w.init...), w.ctrs...) {
			if c.running {
				w.event(c, corev1.EventTypeNormal, "Killing", fmt.Sprintf("Stopping container %s", c.spec.Name), now)
				w.terminate(c, now, 0, "Completed")
			}
		}
	}
	uid := w.pod.UID
	err := w.s.cs.CoreV1().Pods(w.pod.Namespace).Delete(ctx, w.pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      &metav1.Preconditions{UID: &uid},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
		w.s.logf("kubeletsim: delete pod %s/%s: %v", w.pod.Namespace, w.pod.Name, err)
	}
}

func (w *podWorker) event(c *ctr, etype, reason, message string, now time.Time) {
	w.s.kubeletEvents(w.node).event(podRef(w.pod, c.spec.Name, c.isInit), etype, reason, message, now)
}

// pull resolves ref against the World; a non-empty string is the CRI error.
func (w *podWorker) pull(ctx context.Context, ref imageRef) (Image, string) {
	if w.s.world.isRegistryDown(ref.domain) {
		return Image{}, pullNoSuchHost(ref)
	}
	img, ok := w.s.world.image(w.specImageFor(ref))
	if !ok {
		return Image{}, pullNotFound(ref)
	}
	if img.Private && !w.hasPullSecret(ctx) {
		return Image{}, pullAccessDenied(ref)
	}
	return img, ""
}

// specImageFor maps a normalized reference back to the spelling the World was given.
func (w *podWorker) specImageFor(ref imageRef) string {
	for _, c := range append(append([]*ctr{}, w.init...), w.ctrs...) {
		if parseImageRef(c.spec.Image) == ref {
			if _, ok := w.s.world.image(c.spec.Image); ok {
				return c.spec.Image
			}
		}
	}
	return ref.String()
}

// hasPullSecret reports whether one of the pod's imagePullSecrets exists; the simulated
// registries accept any credentials.
func (w *podWorker) hasPullSecret(ctx context.Context) bool {
	for _, ref := range w.pod.Spec.ImagePullSecrets {
		if _, err := w.s.cs.CoreV1().Secrets(w.pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{}); err == nil {
			return true
		}
	}
	return false
}

// missingVolume returns the FailedMount message for the first secret or configMap volume whose
// object is missing (volume plugins' SetUp).
func (w *podWorker) missingVolume(ctx context.Context) string {
	for _, v := range w.pod.Spec.Volumes {
		switch {
		case v.Secret != nil && !ptr.Deref(v.Secret.Optional, false):
			_, err := w.s.cs.CoreV1().Secrets(w.pod.Namespace).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return fmt.Sprintf("MountVolume.SetUp failed for volume %q : secret %q not found", v.Name, v.Secret.SecretName)
			}
		case v.ConfigMap != nil && !ptr.Deref(v.ConfigMap.Optional, false):
			_, err := w.s.cs.CoreV1().ConfigMaps(w.pod.Namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return fmt.Sprintf("MountVolume.SetUp failed for volume %q : configmap %q not found", v.Name, v.ConfigMap.Name)
			}
		}
	}
	return ""
}

// resolveEnv builds the container's environment like kubelet_pods.go makeEnvironmentVariables:
// envFrom first, then env; missing objects and keys are errors unless optional.
func (w *podWorker) resolveEnv(ctx context.Context, c *ctr) (map[string]string, error) {
	ns := w.pod.Namespace
	env := map[string]string{}
	secrets := map[string]*corev1.Secret{}
	configMaps := map[string]*corev1.ConfigMap{}
	getSecret := func(name string) (*corev1.Secret, error) {
		if s, ok := secrets[name]; ok {
			return s, nil
		}
		s, err := w.s.cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, notFound{fmt.Sprintf("secret %q not found", name)}
		}
		if err != nil {
			return nil, err
		}
		secrets[name] = s
		return s, nil
	}
	getConfigMap := func(name string) (*corev1.ConfigMap, error) {
		if cm, ok := configMaps[name]; ok {
			return cm, nil
		}
		cm, err := w.s.cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, notFound{fmt.Sprintf("configmap %q not found", name)}
		}
		if err != nil {
			return nil, err
		}
		configMaps[name] = cm
		return cm, nil
	}
	for _, ef := range c.spec.EnvFrom {
		switch {
		case ef.ConfigMapRef != nil:
			cm, err := getConfigMap(ef.ConfigMapRef.Name)
			if err != nil {
				if isNotFound(err) && ptr.Deref(ef.ConfigMapRef.Optional, false) {
					continue
				}
				return nil, err
			}
			for k, v := range cm.Data {
				env[ef.Prefix+k] = v
			}
		case ef.SecretRef != nil:
			s, err := getSecret(ef.SecretRef.Name)
			if err != nil {
				if isNotFound(err) && ptr.Deref(ef.SecretRef.Optional, false) {
					continue
				}
				return nil, err
			}
			for k, v := range s.Data {
				env[ef.Prefix+k] = string(v)
			}
		}
	}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	for _, e := range c.spec.Env {
		if e.ValueFrom == nil {
			env[e.Name] = expandVars(e.Value, lookup)
			continue
		}
		vf := e.ValueFrom
		switch {
		case vf.SecretKeyRef != nil:
			ref := vf.SecretKeyRef
			optional := ptr.Deref(ref.Optional, false)
			s, err := getSecret(ref.Name)
			if err != nil {
				if isNotFound(err) && optional {
					continue
				}
				return nil, err
			}
			v, ok := s.Data[ref.Key]
			if !ok {
				if optional {
					continue
				}
				return nil, fmt.Errorf("couldn't find key %v in Secret %v/%v", ref.Key, ns, ref.Name)
			}
			env[e.Name] = string(v)
		case vf.ConfigMapKeyRef != nil:
			ref := vf.ConfigMapKeyRef
			optional := ptr.Deref(ref.Optional, false)
			cm, err := getConfigMap(ref.Name)
			if err != nil {
				if isNotFound(err) && optional {
					continue
				}
				return nil, err
			}
			v, ok := cm.Data[ref.Key]
			if !ok {
				if optional {
					continue
				}
				return nil, fmt.Errorf("couldn't find key %v in ConfigMap %v/%v", ref.Key, ns, ref.Name)
			}
			env[e.Name] = v
		case vf.FieldRef != nil:
			env[e.Name] = w.fieldValue(vf.FieldRef.FieldPath)
		}
	}
	return env, nil
}

type notFound struct{ msg string }

func (e notFound) Error() string { return e.msg }

func isNotFound(err error) bool {
	var nf notFound
	return errors.As(err, &nf)
}

func (w *podWorker) fieldValue(path string) string {
	p := w.pod
	switch path {
	case "metadata.name":
		return p.Name
	case "metadata.namespace":
		return p.Namespace
	case "metadata.uid":
		return string(p.UID)
	case "spec.nodeName":
		return p.Spec.NodeName
	case "spec.serviceAccountName":
		return p.Spec.ServiceAccountName
	case "status.podIP":
		return w.ip
	case "status.hostIP":
		return nodeIP
	}
	if k, ok := strings.CutPrefix(path, "metadata.labels['"); ok {
		return p.Labels[strings.TrimSuffix(k, "']")]
	}
	if k, ok := strings.CutPrefix(path, "metadata.annotations['"); ok {
		return p.Annotations[strings.TrimSuffix(k, "']")]
	}
	return ""
}

// writeStatus patches the pod status when it changed (status manager).
func (w *podWorker) writeStatus(ctx context.Context, now time.Time) {
	st := w.status(now)
	patch, err := json.Marshal(map[string]any{"status": st})
	if err != nil {
		return
	}
	if bytes.Equal(patch, w.written) {
		return
	}
	_, err = w.s.cs.CoreV1().Pods(w.pod.Namespace).Patch(ctx, w.pod.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: "kubelet"}, "status")
	if err != nil {
		if ctx.Err() == nil && !apierrors.IsNotFound(err) {
			w.s.logf("kubeletsim: status of %s/%s: %v", w.pod.Namespace, w.pod.Name, err)
		}
		return
	}
	w.written = patch
}

// podFullName is format.Pod: name_namespace(uid).
func podFullName(p *corev1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", p.Name, p.Namespace, p.UID)
}

package diagnose

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Small in-Go clusters for the rule tables. They carry what the controllers and the kubelet
// write (owner references, revision annotations, conditions, reasons), nothing more.

var testRef = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

const testNS = "shop"

type cluster struct {
	s   *snapshot.Snapshot
	uid int
}

func newCluster() *cluster {
	return &cluster{s: &snapshot.Snapshot{ReferenceTime: testRef, Source: snapshot.SourceInfo{Type: snapshot.SourceDump}}}
}

func (c *cluster) nextUID() types.UID {
	c.uid++
	return types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", c.uid))
}

func ago(d time.Duration) metav1.Time { return metav1.NewTime(testRef.Add(-d)) }

func agoPtr(d time.Duration) *metav1.Time { t := ago(d); return &t }

func basicTemplate(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:  "app",
			Image: "registry.example/" + app + ":1.0.0",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Env:   []corev1.EnvVar{{Name: "UPSTREAM", Value: "upstream.internal:8443"}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				corev1.ResourceMemory: resource.MustParse("64Mi"),
			}},
		}}},
	}
}

func int32p(i int32) *int32 { return &i }

// deployment adds a Deployment at the given revision with a Progressing condition reason.
func (c *cluster) deployment(name string, replicas int32, revision int, progressing string, age time.Duration) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: testNS, UID: c.nextUID(), Generation: int64(revision),
			CreationTimestamp: ago(age), Annotations: map[string]string{revisionAnnotation: strconv.Itoa(revision)},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: int32p(replicas), ProgressDeadlineSeconds: int32p(600),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}, Template: basicTemplate(name),
		},
		Status: appsv1.DeploymentStatus{ObservedGeneration: int64(revision)},
	}
	if progressing != "" {
		status := corev1.ConditionTrue
		if progressing == reasonTimedOut {
			status = corev1.ConditionFalse
		}
		d.Status.Conditions = append(d.Status.Conditions, appsv1.DeploymentCondition{
			Type: appsv1.DeploymentProgressing, Status: status, Reason: progressing,
			LastUpdateTime: ago(time.Minute), LastTransitionTime: ago(time.Minute),
			Message: fmt.Sprintf("ReplicaSet %q is progressing.", name),
		})
	}
	c.s.Deployments = append(c.s.Deployments, d)
	return d
}

// replicaSet adds the ReplicaSet of a Deployment's revision; its template is the Deployment's
// current one with mutate applied.
func (c *cluster) replicaSet(d *appsv1.Deployment, revision int, replicas int32, age time.Duration, mutate func(*corev1.PodTemplateSpec)) *appsv1.ReplicaSet {
	tmpl := *d.Spec.Template.DeepCopy()
	if mutate != nil {
		mutate(&tmpl)
	}
	hash := fmt.Sprintf("%x", 0xabc000+revision)
	tmpl.Labels[podTemplateHashLabel] = hash
	t := true
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: d.Name + "-" + hash, Namespace: testNS, UID: c.nextUID(), CreationTimestamp: ago(age),
			Annotations:     map[string]string{revisionAnnotation: strconv.Itoa(revision)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: &t}},
		},
		Spec:   appsv1.ReplicaSetSpec{Replicas: int32p(replicas), Selector: d.Spec.Selector, Template: tmpl},
		Status: appsv1.ReplicaSetStatus{Replicas: replicas},
	}
	c.s.ReplicaSets = append(c.s.ReplicaSets, rs)
	return rs
}

type podState func(p *corev1.Pod)

// pod adds a copy of rs created age ago in the given state.
func (c *cluster) pod(rs *appsv1.ReplicaSet, suffix string, age time.Duration, state podState) *corev1.Pod {
	t := true
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: rs.Name + "-" + suffix, Namespace: testNS, UID: c.nextUID(), CreationTimestamp: ago(age),
			Labels:          map[string]string{},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &t}},
		},
		Spec: *rs.Spec.Template.Spec.DeepCopy(),
	}
	for k, v := range rs.Spec.Template.Labels {
		p.Labels[k] = v
	}
	p.Spec.NodeName = "node-a"
	p.Status.StartTime = agoPtr(age - time.Second)
	p.Status.PodIP = fmt.Sprintf("10.244.0.%d", c.uid)
	state(p)
	c.s.Pods = append(c.s.Pods, p)
	return p
}

func setReady(p *corev1.Pod, ready bool, since metav1.Time) {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: st, LastTransitionTime: since})
}

func running(ready bool) podState {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		start := metav1.NewTime(p.Status.StartTime.Add(time.Second))
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: "app", Ready: ready, Started: &ready,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}},
		}}
		setReady(p, ready, metav1.NewTime(start.Add(5*time.Second)))
	}
}

// restartedOnce is a Ready copy whose container was OOMKilled once, `when` ago.
func restartedOnce(reason string, when time.Duration) podState {
	return func(p *corev1.Pod) {
		running(true)(p)
		cs := &p.Status.ContainerStatuses[0]
		cs.RestartCount = 1
		cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: reason, ExitCode: 137, FinishedAt: ago(when)}
		cs.State.Running.StartedAt = ago(when - time.Second)
	}
}

func waiting(reason, message string) podState {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodPending
		f := false
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: "app", Started: &f,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}},
		}}
		setReady(p, false, *p.Status.StartTime)
	}
}

func crashLooping(lastReason string, exit int32, restarts int32) podState {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		f := false
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: "app", Started: &f, RestartCount: restarts,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
				Reason:  "CrashLoopBackOff",
				Message: "back-off 5m0s restarting failed container=app pod=" + p.Name + "_" + p.Namespace + "(" + string(p.UID) + ")",
			}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				Reason: lastReason, ExitCode: exit, StartedAt: ago(3 * time.Minute), FinishedAt: ago(2 * time.Minute),
			}},
		}}
		setReady(p, false, ago(2*time.Minute))
	}
}

func unschedulable(message string) podState {
	return func(p *corev1.Pod) {
		p.Spec.NodeName = ""
		p.Status.Phase = corev1.PodPending
		p.Status.StartTime = nil
		p.Status.Conditions = []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: message,
		}}
	}
}

// service adds a Service selecting app=selector on targetPort "http".
func (c *cluster) service(name, selector string) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS, UID: c.nextUID()},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": selector},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}},
		},
	}
	c.s.Services = append(c.s.Services, svc)
	return svc
}

// endpointSlice adds the Service's slice with the given pods as endpoints on port.
func (c *cluster) endpointSlice(svc *corev1.Service, port int32, pods map[*corev1.Pod]bool) {
	es := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: svc.Name + "-abcde", Namespace: testNS,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: strp("http"), Port: int32p(port)}},
	}
	for p, ready := range pods {
		r := ready
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{p.Status.PodIP},
			Conditions: discoveryv1.EndpointConditions{Ready: &r},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: testNS, Name: p.Name, UID: p.UID},
		})
	}
	c.s.EndpointSlices = append(c.s.EndpointSlices, es)
}

func strp(s string) *string { return &s }

// event adds a core/v1 event about obj.
func (c *cluster) event(kind, name string, uid types.UID, typ, reason, message string, count int32, last time.Duration) {
	c.s.Events = append(c.s.Events, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", name, c.uid), Namespace: testNS, UID: c.nextUID()},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: testNS, Name: name, UID: uid},
		Type:           typ, Reason: reason, Message: message, Count: count,
		FirstTimestamp: ago(last + time.Minute), LastTimestamp: ago(last),
	})
}

// diagnoseOne runs the engine and returns the one Deployment's diagnosis.
func (c *cluster) diagnoseOne(name string) *Diagnosis {
	r := Diagnose(c.s)
	return r.Find("Deployment", testNS, name)
}

// p parses a path in field.Path notation (names, [i] indexes, [key] keys) for the tests.
func p(s string) *field.Path {
	var out *field.Path
	add := func(name string) {
		if out == nil {
			out = field.NewPath(name)
		} else {
			out = out.Child(name)
		}
	}
	for s != "" {
		switch s[0] {
		case '.':
			s = s[1:]
		case '[':
			end := strings.IndexByte(s, ']')
			in := s[1:end]
			if i, err := strconv.Atoi(in); err == nil {
				out = out.Index(i)
			} else {
				out = out.Key(in)
			}
			s = s[end+1:]
		default:
			end := strings.IndexAny(s, ".[")
			if end < 0 {
				end = len(s)
			}
			add(s[:end])
			s = s[end:]
		}
	}
	return out
}

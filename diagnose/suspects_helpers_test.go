package diagnose

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// The suspect-rule unit tests build workloads by hand, as the classifier would fill them.
// Every message in them is a real format; the test names the source it comes from.

const stNS = "shop"

// nameLabel is the recommended label that ties a Service to its application.
const nameLabel = "app.kubernetes.io/name"

// stTemplate is a pod template with one container "api" on port 8080 named http.
func stTemplate() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "api", nameLabel: "api"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "api",
				Image: "registry.internal/shop/api:1.4.0",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
				},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")}}},
				LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/live", Port: intstr.FromString("http")}}},
			}},
			ServiceAccountName: "api",
		},
	}
}

// stWorkload is Deployment shop/api with three replicas and one pod of the current revision.
func stWorkload(mutate func(t *corev1.PodTemplateSpec)) *workload {
	tpl := stTemplate()
	if mutate != nil {
		mutate(tpl)
	}
	replicas := int32(3)
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: stNS},
		Spec:       appsv1.DeploymentSpec{Replicas: &replicas, Template: *tpl},
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "api-6b7d9c5f4-x2x9k", Namespace: stNS, Labels: tpl.Labels},
		Spec:       tpl.Spec,
		Status: corev1.PodStatus{
			Phase: corev1.PodPending, PodIP: "10.244.1.7", HostIP: "10.42.0.11",
			PodIPs: []corev1.PodIP{{IP: "10.244.1.7"}},
		},
	}
	return &workload{
		Kind: "Deployment", Namespace: stNS, Name: "api", Object: d, Declared: replicas,
		Template: &d.Spec.Template, TemplatePath: field.NewPath("spec", "template"),
		Pods: []*corev1.Pod{pod}, CurrentPods: []*corev1.Pod{pod},
		Shape: ShapeNeverStarts, Snap: &snapshot.Snapshot{},
	}
}

// stAttachServices files the snapshot's Services for the workload as the collector does, so a
// case can place a Service in the namespace rather than hand it to the workload.
func stAttachServices(w *workload) {
	if w.Snap != nil && len(w.Snap.Services) > 0 {
		attachServices(w.Snap, serviceIndexOf(w.Snap.Services), w)
	}
}

// stPod returns the workload's only pod.
func stPod(w *workload) *corev1.Pod { return w.CurrentPods[0] }

// stWaiting puts the pod's container in a waiting state.
func stWaiting(w *workload, reason, message string) {
	p := stPod(w)
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "api", Image: w.Template.Spec.Containers[0].Image,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}},
	}}
}

// stTerminated gives the pod's container a last terminated state and a CrashLoopBackOff.
func stTerminated(w *workload, reason string, exit int32, message string) {
	p := stPod(w)
	p.Status.Phase = corev1.PodRunning
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "api", RestartCount: 4,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason:  "CrashLoopBackOff",
			Message: "back-off 1m20s restarting failed container=api pod=api-6b7d9c5f4-x2x9k_shop(0d1f7a52-8c4e-4a0b-9a43-2b1c36f0e9d1)",
		}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: exit, Message: message}},
	}}
}

// stEvent adds a Warning event on the pod (fieldPath names the container for kubelet events)
// or on another object.
func stEvent(w *workload, kind, name, fieldPath, reason, message string) {
	w.Events = append(w.Events, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name + ".18eaf3f639187a3c", Namespace: stNS},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: stNS, Name: name, FieldPath: fieldPath},
		Type:           corev1.EventTypeWarning, Reason: reason, Message: message, Count: 3,
	})
}

// stPodEvent adds a kubelet Warning event on the pod's container.
func stPodEvent(w *workload, reason, message string) {
	stEvent(w, "Pod", stPod(w).Name, "spec.containers{api}", reason, message)
}

// stLog gives the pod's container a log tail.
func stLog(w *workload, lines ...string) {
	w.Logs = append(w.Logs, &snapshot.ContainerLog{Namespace: stNS, Pod: stPod(w).Name, Container: "api", Lines: lines})
}

// stChanged records a change from the last serving revision, and that revision's template.
func stChanged(w *workload, path, previous string, setPrevious func(*corev1.PodTemplateSpec)) {
	if w.PreviousTemplate == nil {
		w.PreviousTemplate = w.Template.DeepCopy()
	}
	if setPrevious != nil {
		setPrevious(w.PreviousTemplate)
	}
	cur, _ := fieldpath.ValueAt(w.TemplatePath, w.Template, stPath(path))
	w.Changes = append(w.Changes, Change{Path: stPath(path), Previous: previous, Current: cur})
}

// stPath parses the few path shapes the tests use into a field.Path, so that a test's wanted
// path is written as the report prints it.
func stPath(s string) *field.Path {
	var p *field.Path
	for _, part := range splitPath(s) {
		switch {
		case part.index >= 0:
			p = p.Index(part.index)
		case part.key != "":
			p = p.Key(part.key)
		case p == nil:
			p = field.NewPath(part.name)
		default:
			p = p.Child(part.name)
		}
	}
	return p
}

type pathPart struct {
	name, key string
	index     int
}

func splitPath(s string) []pathPart {
	var out []pathPart
	for s != "" {
		switch s[0] {
		case '.':
			s = s[1:]
		case '[':
			end := 1
			for end < len(s) && s[end] != ']' {
				end++
			}
			inner := s[1:end]
			n, ok := 0, inner != ""
			for _, r := range inner {
				if r < '0' || r > '9' {
					ok = false
					break
				}
				n = n*10 + int(r-'0')
			}
			if ok {
				out = append(out, pathPart{index: n})
			} else {
				out = append(out, pathPart{key: inner, index: -1})
			}
			s = s[min(end+1, len(s)):]
		default:
			end := 0
			for end < len(s) && s[end] != '.' && s[end] != '[' {
				end++
			}
			out = append(out, pathPart{name: s[:end], index: -1})
			s = s[end:]
		}
	}
	return out
}

// stNode is a node with labels and taints.
func stNode(name string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
}

// stService is a Service in the workload's namespace.
func stService(name string, selector map[string]string, target intstr.IntOrString) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: stNS, Labels: map[string]string{nameLabel: "api"}},
		Spec: corev1.ServiceSpec{
			Selector: selector,
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: target, Protocol: corev1.ProtocolTCP}},
		},
	}
}

// stTop returns the rule, object and path of the first suspect, or zero values.
func stTop(ss []Suspect) (RuleID, string, string) {
	if len(ss) == 0 {
		return "", "", ""
	}
	return ss[0].Rule, ss[0].Object, ss[0].Path.String()
}

// stRank returns the position of the suspect with this path, or -1.
func stRank(ss []Suspect, path string) int {
	for i, s := range ss {
		if s.Path.String() == path {
			return i
		}
	}
	return -1
}

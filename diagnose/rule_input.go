package diagnose

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ruleInput is all a suspect rule reads of a workload: its classified signals and copies, its
// pod template and the objects it refers to. The engine fills it once per workload; a
// detector reads it and records through the ranker's sink methods, never the workload or the
// snapshot, so a rule family is one file with a narrow input.
type ruleInput struct {
	// Object is the workload as suspects name it, Kind/name.
	Object                string
	Kind, Namespace, Name string
	// Workload is the typed workload object (*appsv1.Deployment and the like), for suspects
	// outside its template; read only.
	Workload any
	Declared int32
	Shape    Shape

	// Template is the current pod template, at TemplatePath in Workload; ClaimTemplates are a
	// StatefulSet's volumeClaimTemplates.
	Template       *corev1.PodTemplateSpec
	TemplatePath   *field.Path
	ClaimTemplates []corev1.PersistentVolumeClaim

	// Signals are the failure messages of the failing copies, the controller and the claims,
	// each classified once (collectSignals).
	Signals []*signal
	// Copies are the workload's copies as classified, in the order of Pods.
	Copies []ruleCopy
	// Pods are all copies, any revision; CurrentPods those of the current revision.
	Pods, CurrentPods []*corev1.Pod
	// OwnHosts are the copies' pod and node IPs: a port on them is the copy itself.
	OwnHosts map[string]bool

	// Changes are the fields the revision that fails changed since the last that served;
	// OwnChanges those the current revision changed from the one before it.
	Changes, OwnChanges                  []Change
	CurrentRevision, LastServingRevision string
	// Served says a revision of the workload served, or the current one served early on.
	Served bool
	// Nowhere says why no node can run a copy, "" when some can.
	Nowhere string
	// Schedule is a CronJob's due run that started no Job; nil when none.
	Schedule *scheduleFinding

	// Services select the template's labels; UnmatchedServices were written for the workload
	// but select none of its pods; NearbyServices are every Service the index offered.
	Services, UnmatchedServices, NearbyServices []*corev1.Service
	// Claims are the PersistentVolumeClaims the copies mount or the claim templates name.
	Claims []*corev1.PersistentVolumeClaim
	// Nodes are the cluster's nodes; nodes looks one up by name.
	Nodes []*corev1.Node
	nodes nodeIndex
}

// nodeIndex finds a node by name (the snapshot's index).
type nodeIndex interface {
	Node(name string) *corev1.Node
}

// Node is the node of that name, nil when the snapshot has none.
func (in *ruleInput) Node(name string) *corev1.Node {
	if in.nodes == nil {
		return nil
	}
	return in.nodes.Node(name)
}

// ruleCopy is one copy of the workload as the rules read it.
type ruleCopy struct {
	Pod *corev1.Pod
	// Current: the copy belongs to the current revision; Active: it is not finished or
	// being deleted.
	Current, Active bool
	// Dies names the copy's start-and-die signal, "" when it has none.
	Dies string
	// Age is the copy's age at the reference time.
	Age time.Duration
	// Terminated says a container of the copy terminated; LastTerminated is its newest
	// termination.
	Terminated     bool
	LastTerminated ruleTermination
}

// ruleTermination is a container's termination as the rules read it.
type ruleTermination struct {
	Container string
	Init      bool
	ExitCode  int32
	Reason    string
}

// specInput reads the spec side of w: the template and the objects it refers to, without
// the signals and copies the gap checks do not read.
func specInput(w *workload) ruleInput {
	tp := w.TemplatePath
	if tp == nil {
		tp = field.NewPath("spec", "template")
	}
	return ruleInput{
		Object: w.object(), Kind: w.Kind, Namespace: w.Namespace, Name: w.Name,
		Workload: w.Object, Declared: w.Declared, Shape: w.Shape,
		Template: w.Template, TemplatePath: tp, ClaimTemplates: w.VolumeClaimTemplates,
		Services: w.Services, UnmatchedServices: w.UnmatchedServices, NearbyServices: w.NearbyServices,
		Claims: w.Claims,
	}
}

// newRuleInput reads what the rules may see of w, its signals and copies included.
func newRuleInput(w *workload, signals []*signal) ruleInput {
	in := specInput(w)
	in.Signals, in.Pods, in.CurrentPods = signals, w.Pods, w.CurrentPods
	in.Changes, in.OwnChanges = w.Changes, w.OwnChanges
	in.CurrentRevision, in.LastServingRevision = w.CurrentRevision, w.LastServingRevision
	in.Served = w.cls.LastServing != nil || w.cls.ServedEarly
	in.Nowhere = w.cls.nowhere
	if bf := w.cls.batch; bf != nil {
		in.Schedule = bf.schedule
	}
	if w.Snap != nil {
		in.Nodes, in.nodes = w.Snap.Nodes, w.Snap
	}
	if len(w.cls.copies) > 0 {
		in.Copies = make([]ruleCopy, len(w.cls.copies))
		for i, f := range w.cls.copies {
			in.Copies[i] = ruleCopy{Pod: f.Pod, Current: f.Current, Active: f.Active, Dies: f.Dies, Age: f.Age}
			if lt := f.LastTerminated; lt != nil {
				in.Copies[i].Terminated = true
				in.Copies[i].LastTerminated = ruleTermination{Container: lt.Container(), Init: lt.Init, ExitCode: lt.ExitCode, Reason: lt.Reason}
			}
		}
	}
	in.OwnHosts = map[string]bool{}
	for _, p := range w.Pods {
		for _, ip := range p.Status.PodIPs {
			in.OwnHosts[ip.IP] = true
		}
		if p.Status.PodIP != "" {
			in.OwnHosts[p.Status.PodIP] = true
		}
		if p.Status.HostIP != "" {
			in.OwnHosts[p.Status.HostIP] = true
		}
	}
	return in
}

package diagnose

import (
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// specInput reads the spec side of w for the rules: the template and the objects it refers
// to, without the signals and copies the gap checks do not read.
func specInput(w *workload) rules.Input {
	tp := w.TemplatePath
	if tp == nil {
		tp = field.NewPath("spec", "template")
	}
	return rules.Input{
		Object: w.object(), Kind: w.Kind, Namespace: w.Namespace, Name: w.Name,
		Declared: w.Declared, Shape: rules.Shape(w.Shape), RollingUpdate: rollingUpdate(w.Object),
		Template: w.Template, TemplatePath: tp, SpecPath: specOf(tp), ClaimTemplates: w.VolumeClaimTemplates,
		Services: w.Services, UnmatchedServices: w.UnmatchedServices, NearbyServices: w.NearbyServices,
		Claims: w.Claims,
	}
}

// newRuleInput reads all the rules may see of w, its signals and copies included: a
// detector reads this and never the workload or the snapshot.
func newRuleInput(w *workload, signals []*signal) rules.Input {
	in := specInput(w)
	in.Signals = signals
	in.Changes, in.OwnChanges = w.Changes, w.OwnChanges
	in.CurrentRevision, in.LastServingRevision = w.CurrentRevision, w.LastServingRevision
	in.Served = w.cls.LastServing != nil || w.cls.ServedEarly
	in.Batch = isBatch(w.Kind)
	if bf := w.cls.batch; bf != nil && bf.schedule != nil {
		sc := bf.schedule
		in.Schedule = &rules.Schedule{Rule: sc.rule, Path: sc.path, Message: sc.message}
	}
	if w.Snap != nil {
		in.Nodes, in.NodeIndex = w.Snap.Nodes, w.Snap
	}
	if len(in.Claims) > 0 || len(in.ClaimTemplates) > 0 {
		in.ClaimEvents = claimEvents(w.Events)
		in.Volumes, in.VolumesUnread = volumesOf(w)
	}
	if in.Nowhere = w.cls.nowhere; in.Nowhere != "" && len(in.Nodes) > 0 {
		ex := excludedNodes(&w.Template.Spec, in.Nodes)
		in.Excluded = rules.NodeExclusion{Selector: ex.selector, Taint: ex.taint, Taints: ex.taints}
	}
	// One copy per pod, in w.Pods' order (a signal's lines number them so); what the copy
	// classification read (copyFacts) where it ran, as a workload's diagnosis always does.
	if len(w.Pods) > 0 {
		in.Copies = w.texts.copyRoom(len(w.Pods))
	}
	for i, p := range w.Pods {
		c, life := &in.Copies[i], w.life(i)
		*c = rules.Copy{
			Name: p.Name, Node: p.Spec.NodeName, Active: life.Active, Ready: life.Ready,
			SchedulerAnswered: life.SchedulerAnswered, OwnExits: ownExits(life),
		}
		if i >= len(w.cls.copies) {
			c.Current = slices.Contains(w.CurrentPods, p)
			continue
		}
		f := w.cls.copies[i]
		c.Current, c.Dies, c.Age = f.Current, f.Dies, f.Age
		if lt := f.LastTerminated; lt != nil {
			c.Terminated = true
			c.LastTerminated = rules.Termination{Container: lt.Container(), Init: lt.Init, ExitCode: lt.ExitCode, Reason: lt.Reason}
		}
	}
	in.OwnHosts = map[string]bool{}
	for i := range w.Pods {
		life := w.life(i)
		for _, ip := range life.PodIPs {
			in.OwnHosts[ip.IP] = true
		}
		if life.PodIP != "" {
			in.OwnHosts[life.PodIP] = true
		}
		if life.HostIP != "" {
			in.OwnHosts[life.HostIP] = true
		}
	}
	return in
}

// rollingUpdate says the workload object replaces its copies by a rolling update that starts a
// new copy while an old one runs: a Deployment whose strategy is not Recreate.
func rollingUpdate(obj any) bool {
	d, ok := obj.(*appsv1.Deployment)
	return ok && d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType
}

// ownExits are the containers of p that restarted after ending with an exit code of their own:
// not 0, and not the 137 or 143 of a kill (which is what a failing liveness probe does).
func ownExits(c *facts.Copy) []string {
	var out []string
	for i := range c.Containers {
		k := &c.Containers[i]
		if k.Restarts == 0 {
			continue
		}
		if t := &k.Last; t.Seen && t.ExitCode != 0 && t.ExitCode != 137 && t.ExitCode != 143 {
			out = append(out, k.Name)
		}
	}
	return out
}

// claimEvents are the events of w's claims among its events.
func claimEvents(events []*corev1.Event) []*corev1.Event {
	var out []*corev1.Event
	for _, e := range events {
		if e.InvolvedObject.Kind == "PersistentVolumeClaim" {
			out = append(out, e)
		}
	}
	return out
}

// volumesOf are the PersistentVolumes the claims of w are matched against, and why they are
// not known ("" when read): a source that could not read them (forbidden, or a dump without
// them) leaves a visibility line, and an absent list is not a cluster without volumes.
func volumesOf(w *workload) ([]*corev1.PersistentVolume, string) {
	if w.Snap == nil {
		return nil, "not read"
	}
	for _, v := range w.Snap.Visibility {
		if v.Kind == "PersistentVolume" && (v.Namespace == "" || v.Namespace == w.Namespace) {
			return nil, v.Reason
		}
	}
	return w.Snap.PersistentVolumes, ""
}

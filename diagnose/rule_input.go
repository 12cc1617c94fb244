package diagnose

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

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
		Workload: w.Object, Declared: w.Declared, Shape: rules.Shape(w.Shape),
		Template: w.Template, TemplatePath: tp, SpecPath: specOf(tp), ClaimTemplates: w.VolumeClaimTemplates,
		Services: w.Services, UnmatchedServices: w.UnmatchedServices, NearbyServices: w.NearbyServices,
		Claims: w.Claims,
	}
}

// newRuleInput reads all the rules may see of w, its signals and copies included: a
// detector reads this and never the workload or the snapshot.
func newRuleInput(w *workload, signals []*signal) rules.Input {
	in := specInput(w)
	in.Signals, in.Pods, in.CurrentPods = signals, w.Pods, w.CurrentPods
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
	if in.Nowhere = w.cls.nowhere; in.Nowhere != "" && len(in.Nodes) > 0 {
		ex := excludedNodes(&w.Template.Spec, in.Nodes)
		in.Excluded = rules.NodeExclusion{Selector: ex.selector, Taint: ex.taint, Taints: ex.taints}
	}
	if len(w.cls.copies) > 0 {
		in.Copies = w.texts.copyRoom(len(w.cls.copies))
		for i, f := range w.cls.copies {
			in.Copies[i] = rules.Copy{Pod: f.Pod, Current: f.Current, Active: f.Active, Dies: f.Dies, Age: f.Age}
			if lt := f.LastTerminated; lt != nil {
				in.Copies[i].Terminated = true
				in.Copies[i].LastTerminated = rules.Termination{Container: lt.Container(), Init: lt.Init, ExitCode: lt.ExitCode, Reason: lt.Reason}
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

package rules

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
)

// The service rules. IDs are stable: scripts and the documentation refer to them.
const (
	RuleServiceSelector   RuleID = "service-selector"
	RuleServiceTargetPort RuleID = "service-target-port"
	RuleServiceProtocol   RuleID = "service-protocol"
)

// serviceFamily checks the Services meant for the workload.
var _ = register(family{
	order:  120,
	name:   "service",
	detect: (*ranker).serviceRules,
	rules: []RuleInfo{
		{
			RuleServiceSelector, "A Service meant for the workload selects none of its pods",
			"Service selector matching no pod of the workload; no endpoints",
			"Make spec.selector match the pod template's labels.", false,
		},
		{
			RuleServiceTargetPort, "A Service targets a port no container exposes",
			"Service targetPort matching no containerPort name or number",
			"Make targetPort name or number a containerPort of the workload.", false,
		},
		{
			RuleServiceProtocol, "A Service port's protocol differs from the container port it targets",
			"Service port protocol UDP targeting a TCP containerPort, or TCP (the default when unset) targeting a UDP one",
			"Set the Service port's protocol to the container port's (a port serving both needs two Service ports).", false,
		},
	},
})

// nameLabel is the recommended label that ties a Service to its application.
const nameLabel = "app.kubernetes.io/name"

// serviceRules checks the Services of the workload: one meant for it that selects none of its
// pods, and ports that target no container port.
func (r *ranker) serviceRules() {
	idle := r.in.Shape == ShapeLiveButIdle || r.in.Shape == ""
	for _, svc := range r.unmatchedServices() {
		score := scoreCertain
		if !idle {
			score = scorePossible
		}
		sel := labels.Set(svc.Spec.Selector).String()
		reason := fmt.Sprintf("Service %s selects %s; the pods are labelled %s, so it has no endpoints", svc.Name, sel,
			labels.Set(r.in.Template.Labels).String())
		r.suspectObject(RuleServiceSelector, "Service/"+svc.Name, svc, field.NewPath("spec", "selector"), score, reason)
	}
	for _, svc := range r.in.MatchedServices() {
		for i, sp := range svc.Spec.Ports {
			target := sp.TargetPort
			if target.Type == intstr.Int && target.IntVal == 0 {
				target = intstr.FromInt32(sp.Port)
			}
			declared, known := false, false
			for _, c := range r.in.Template.Spec.Containers {
				d, k := DeclaresPort(&c, target)
				declared, known = declared || d, known || k
			}
			if declared {
				r.portProtocol(svc, i, target, idle)
				continue
			}
			if !known {
				continue
			}
			score := scoreCertain
			if target.Type == intstr.Int {
				// A container may listen on a port it does not declare, but copies that are
				// ready and still get no traffic make the undeclared port the likely fault.
				score = highThreshold
			}
			if !idle {
				score = scorePossible
			}
			r.suspectObject(RuleServiceTargetPort, "Service/"+svc.Name, svc, field.NewPath("spec", "ports").Index(i).Child("targetPort"), score,
				fmt.Sprintf("Service %s port %d targets %s, which no container of %s declares", svc.Name, sp.Port, target.String(), r.in.Object))
		}
	}
}

// serviceCandidates are the Services the classifier found for the workload through its index
// (those selecting it, those meant for it, and those sharing its name or
// app.kubernetes.io/name label), by name. These hold every Service the rules below can
// match; reading them instead of every Service of the namespace keeps a namespace of many
// workloads linear.
func (in *Input) serviceCandidates() []*corev1.Service {
	out := make([]*corev1.Service, 0, len(in.Services)+len(in.UnmatchedServices)+len(in.NearbyServices))
	for _, ss := range [][]*corev1.Service{in.Services, in.UnmatchedServices, in.NearbyServices} {
		for _, s := range ss {
			if s != nil && (s.Namespace == in.Namespace || s.Namespace == "") {
				out = append(out, s)
			}
		}
	}
	if len(out) < 2 {
		return out
	}
	slices.SortStableFunc(out, func(a, b *corev1.Service) int { return strings.Compare(a.Name, b.Name) })
	// One Service per name, the later list's copy winning as before.
	dedup := out[:0]
	for i, s := range out {
		if i+1 < len(out) && out[i+1].Name == s.Name {
			continue
		}
		dedup = append(dedup, s)
	}
	return dedup
}

func (in *Input) selects(svc *corev1.Service) bool {
	if len(svc.Spec.Selector) == 0 {
		return false
	}
	return facts.SetSelects(svc.Spec.Selector, in.Template.Labels)
}

// MatchedServices are the Services that select the workload's template.
func (in *Input) MatchedServices() []*corev1.Service {
	// The candidates are a list of their own: filtered in place.
	cands := in.serviceCandidates()
	out := cands[:0]
	for _, s := range cands {
		if in.selects(s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// unmatchedServices were evidently written for the workload (the classifier says so, or they
// share its name or its app.kubernetes.io/name) but select none of its pods.
func (r *ranker) unmatchedServices() []*corev1.Service {
	meant := map[string]bool{}
	for _, s := range r.in.UnmatchedServices {
		if s != nil {
			meant[s.Name] = true
		}
	}
	var out []*corev1.Service
	for _, s := range r.in.serviceCandidates() {
		if len(s.Spec.Selector) == 0 || r.in.selects(s) {
			continue
		}
		app := r.in.Template.Labels[nameLabel]
		if meant[s.Name] || s.Name == r.in.Name || app != "" && s.Labels[nameLabel] == app {
			out = append(out, s)
		}
	}
	return out
}

// portProtocol names a Service port whose protocol no container port it targets speaks.
func (r *ranker) portProtocol(svc *corev1.Service, i int, target intstr.IntOrString, idle bool) {
	sp := svc.Spec.Ports[i]
	var speaks []string
	for ci := range r.in.Template.Spec.Containers {
		for _, p := range r.in.Template.Spec.Containers[ci].Ports {
			if target.Type == intstr.String && p.Name != target.StrVal || target.Type == intstr.Int && p.ContainerPort != target.IntVal {
				continue
			}
			if facts.SameProtocol(p.Protocol, sp.Protocol) {
				return
			}
			proto := p.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			speaks = append(speaks, fmt.Sprintf("%d/%s", p.ContainerPort, proto))
		}
	}
	if len(speaks) == 0 {
		return
	}
	score := scoreCertain
	if !idle {
		score = scorePossible
	}
	proto := sp.Protocol
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	r.suspectObject(RuleServiceProtocol, "Service/"+svc.Name, svc, field.NewPath("spec", "ports").Index(i).Child("protocol"), score,
		fmt.Sprintf("Service %s port %d is %s; the container port it targets is %s", svc.Name, sp.Port, proto, strings.Join(speaks, ", ")))
}

package rules

import (
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
)

// The admission rules. IDs are stable: scripts and the documentation refer to them.
const (
	RulePodSecurity RuleID = "pod-security"
	RuleLimitRange  RuleID = "limit-range"
)

// admissionFamily reads the admission plugins' refusals the controller records as FailedCreate:
// no copy is ever created, and the message names the rule the template breaks.
var _ = register(family{
	order:  40,
	name:   "admission",
	detect: (*ranker).admissionRules,
	rules: []RuleInfo{
		{
			RulePodSecurity, "The namespace's PodSecurity level refuses the pod template",
			"FailedCreate `violates PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (container \"app\" must set securityContext.allowPrivilegeEscalation=false), ...`",
			"Set the securityContext fields the message names (or run the namespace at a level the workload needs).", false,
		},
		{
			RuleLimitRange, "A LimitRange refuses the containers' requests or limits",
			"FailedCreate `minimum memory usage per Container is 64Mi, but request is 32Mi` (or maximum, or limit)",
			"Bring the request or limit within the namespace's LimitRange.", false,
		},
	},
})

// PodSecurity's refusal (k8s.io/pod-security-admission/admission: `violates PodSecurity %q: %s`,
// the checks' reasons and details from its policy package) and LimitRanger's
// (plugin/pkg/admission/limitranger: `minimum %s usage per %s is %s, but request is %s`).
var (
	rePodSecurity = regexp.MustCompile(`violates PodSecurity "([^"]+)": (.*)$`)
	// A check's detail that names containers and a securityContext field they must (not) set.
	reMustSet = regexp.MustCompile(`(pod or )?containers? ((?:"[^"]+"(?:, )?)+) must (?:not )?(?:set|include \S+ in) securityContext\.([A-Za-z]+(?:\.[A-Za-z]+)?)`)
	// Settings the pod itself must not make: runAsUser=0, hostNetwork=true.
	rePodMustNot   = regexp.MustCompile(`\bpod must not set (?:securityContext\.)?(runAsUser)=`)
	reHostNS       = regexp.MustCompile(`\b(hostNetwork|hostPID|hostIPC)=true\b`)
	reHostPathVols = regexp.MustCompile(`hostPath volumes \(volumes? ((?:"[^"]+"(?:, )?)+)\)`)
	reQuoted       = regexp.MustCompile(`"([^"]+)"`)
	reLimitRange   = regexp.MustCompile(`(minimum|maximum) (\S+) usage per (Container|Pod) is (\S+?),? but (request|limit) is ([^,\]]+)`)
	reLimitUnset   = regexp.MustCompile(`(minimum|maximum) (\S+) usage per (Container|Pod) is (\S+?)\.  No (request|limit) is specified`)
)

// admissionRules reads each refusal once.
func (r *ranker) admissionRules() {
	for _, s := range r.in.Signals {
		if s.Reason != "FailedCreate" || s.Explained {
			continue
		}
		r.read(s)
		if m := rePodSecurity.FindStringSubmatch(s.Text); m != nil {
			if r.podSecurity(m[1], m[2]) {
				s.Explained = true
			}
			continue
		}
		if r.limitRange(s.Text) {
			s.Explained = true
		}
	}
}

// podSecurity names each field the refusal's details name.
func (r *ranker) podSecurity(level, details string) bool {
	said := "the namespace enforces PodSecurity \"" + level + "\", which refuses every copy"
	named := false
	for _, m := range reMustSet.FindAllStringSubmatch(details, -1) {
		if m[1] != "" {
			// "pod or container ... must set": the pod's own securityContext covers them all.
			r.suspectTemplate(RulePodSecurity, fieldPath(r.specPath.Child("securityContext"), m[3]), scoreCertain, said+": "+Clip(m[0], 160))
			named = true
			continue
		}
		for _, q := range reQuoted.FindAllStringSubmatch(m[2], -1) {
			for _, c := range r.containers() {
				if c.c.Name == q[1] {
					r.suspectTemplate(RulePodSecurity, fieldPath(c.path.Child("securityContext"), m[3]), scoreCertain, said+": "+Clip(m[0], 160))
					named = true
				}
			}
		}
	}
	if m := rePodMustNot.FindStringSubmatch(details); m != nil {
		r.suspectTemplate(RulePodSecurity, r.specPath.Child("securityContext", m[1]), scoreCertain, said+": "+Clip(m[0], 160))
		named = true
	}
	for _, m := range reHostNS.FindAllStringSubmatch(details, -1) {
		r.suspectTemplate(RulePodSecurity, r.specPath.Child(m[1]), scoreCertain, said+": "+m[0])
		named = true
	}
	if m := reHostPathVols.FindStringSubmatch(details); m != nil {
		for _, q := range reQuoted.FindAllStringSubmatch(m[1], -1) {
			for j, v := range r.in.Template.Spec.Volumes {
				if v.Name == q[1] {
					r.suspectTemplate(RulePodSecurity, r.specPath.Child("volumes").Index(j).Child("hostPath"), scoreCertain, said+": hostPath volume "+v.Name)
					named = true
				}
			}
		}
	}
	return named
}

// fieldPath appends a dotted field name ("seccompProfile.type") to p.
func fieldPath(p *field.Path, dotted string) *field.Path {
	for _, f := range strings.Split(dotted, ".") {
		p = p.Child(f)
	}
	return p
}

// limitRange names the containers' requests or limits a LimitRange refuses. The message says
// the resource and the value, not the container: the containers whose field holds that value
// are named, or every one setting the field when none does (a pod's total).
func (r *ranker) limitRange(text string) bool {
	named := false
	for _, m := range reLimitRange.FindAllStringSubmatch(text, -1) {
		bound, res, per, enforced, which, got := m[1], m[2], m[3], m[4], m[5], strings.TrimSpace(m[6])
		section := which + "s"
		said := "a LimitRange refuses the copies: " + bound + " " + res + " per " + per + " is " + enforced + ", but the " + which + " is " + got
		want, err := resource.ParseQuantity(got)
		var matched, set []containerRef
		for _, c := range r.containers() {
			if q, ok := resourcesOf(c.c, section)[corev1.ResourceName(res)]; ok {
				set = append(set, c)
				if err == nil && q.Cmp(want) == 0 {
					matched = append(matched, c)
				}
			}
		}
		if per == "Container" && len(matched) > 0 {
			set = matched
		}
		for _, c := range set {
			r.suspectTemplate(RuleLimitRange, fieldpath.ResourcePath(c.path.Child("resources", section), res), scoreCertain, said)
			named = true
		}
	}
	for _, m := range reLimitUnset.FindAllStringSubmatch(text, -1) {
		bound, res, per, enforced, which := m[1], m[2], m[3], m[4], m[5]
		section := which + "s"
		for _, c := range r.containers() {
			if _, ok := resourcesOf(c.c, section)[corev1.ResourceName(res)]; !ok {
				r.suspectTemplate(RuleLimitRange, fieldpath.ResourcePath(c.path.Child("resources", section), res), scoreCertain,
					"a LimitRange refuses the copies: "+bound+" "+res+" per "+per+" is "+enforced+", and container "+c.c.Name+" sets no "+which)
				named = true
			}
		}
	}
	return named
}

// resourcesOf is the container's requests or limits, as section names them.
func resourcesOf(c *corev1.Container, section string) corev1.ResourceList {
	if section == "limits" {
		return c.Resources.Limits
	}
	return c.Resources.Requests
}

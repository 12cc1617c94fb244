package rules

import (
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
)

// The controller rules. IDs are stable: scripts and the documentation refer to them.
const (
	RuleServiceAccountNotFound RuleID = "service-account-not-found"
	RuleQuotaExceeded          RuleID = "quota-exceeded"
)

// controllerFamily reads the API server's admission refusals in FailedCreate.
var _ = register(family{
	order:  30,
	name:   "controller",
	detect: (*ranker).controllerRules,
	rules: []RuleInfo{
		{
			RuleServiceAccountNotFound, "serviceAccountName names an account that does not exist",
			"FailedCreate `error looking up service account ns/sa: serviceaccount \"sa\" not found`",
			"Create the ServiceAccount or correct the name.", false,
		},
		{
			RuleQuotaExceeded, "A ResourceQuota refuses the pods",
			"FailedCreate `exceeded quota: q, requested: ...` or `failed quota: q: must specify ...`",
			"Lower the named resource, set the missing request or limit, or raise the quota.", false,
		},
	},
})

// Pods the controller could not create. The replica set, stateful set and daemon set
// controllers record `Error creating: ERR` (pkg/controller/controller_utils.go, FailedCreate)
// where ERR is the admission Forbidden error `pods "NAME" is forbidden: MSG`:
//   - ResourceQuota (k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go):
//     `exceeded quota: Q, requested: limits.memory=2Gi, used: limits.memory=3Gi, limited: limits.memory=4Gi`
//     or `failed quota: Q: must specify limits.cpu for: app; limits.memory for: app`
//     (pkg/quota/v1/evaluator/core/pods.go).
//   - ServiceAccount (plugin/pkg/admission/serviceaccount/admission.go):
//     `error looking up service account NS/SA: serviceaccount "SA" not found`.
var (
	reQuotaExceeded = regexp.MustCompile(`exceeded quota: ([^,]+), requested: (\S+), used: (\S+), limited: (\S+)`)
	reQuotaMissing  = regexp.MustCompile(`failed quota: ([^:]+): must specify (.+)$`)
	reSALookup      = regexp.MustCompile(`error looking up service account [^/\s]+/(\S+): serviceaccount "([^"]+)" not found`)
)

// controllerRules reads the controller's FailedCreate events.
func (r *ranker) controllerRules() {
	for _, s := range r.in.Signals {
		if s.Reason != "FailedCreate" {
			continue
		}
		r.read(s)
		if m := reSALookup.FindStringSubmatch(s.Text); m != nil {
			r.suspectTemplate(RuleServiceAccountNotFound, r.specPath.Child("serviceAccountName"), scoreCertain,
				"ServiceAccount "+m[2]+" does not exist, so the API server refuses every pod")
			s.Explained = true
			continue
		}
		if m := reQuotaExceeded.FindStringSubmatch(s.Text); m != nil {
			for _, rn := range quotaResources(m[2]) {
				r.quotaSuspect(rn, "ResourceQuota "+m[1]+" refuses the pods: requested "+m[2]+", used "+m[3]+", limited "+m[4])
			}
			s.Explained = true
			continue
		}
		if m := reQuotaMissing.FindStringSubmatch(s.Text); m != nil {
			for _, part := range strings.Split(m[2], "; ") {
				rn, names, _ := strings.Cut(part, " for: ")
				r.quotaSuspectFor(rn, strings.Split(names, ","),
					"ResourceQuota "+m[1]+" requires "+rn+" on every container; these set none")
			}
			s.Explained = true
		}
	}
}

// quotaResources reads the resource names of "limits.memory=2Gi,requests.cpu=1".
func quotaResources(list string) []string {
	var out []string
	for _, kv := range strings.Split(list, ",") {
		if name, _, ok := strings.Cut(kv, "="); ok {
			out = append(out, name)
		}
	}
	return out
}

// quotaField maps a quota resource name to the container resources field it counts.
func quotaField(rn string) (section, name string, ok bool) {
	switch {
	case strings.HasPrefix(rn, "limits."):
		return "limits", strings.TrimPrefix(rn, "limits."), true
	case strings.HasPrefix(rn, "requests."):
		return "requests", strings.TrimPrefix(rn, "requests."), true
	case rn == "cpu" || rn == "memory" || rn == "ephemeral-storage":
		return "requests", rn, true
	}
	return "", "", false
}

// quotaSuspect names the containers' field counted by a quota resource; the largest value
// ranks first. "pods" counts copies, so it names spec.replicas.
func (r *ranker) quotaSuspect(rn, reason string) {
	if rn == "pods" || rn == "count/pods" {
		r.suspectWorkload(RuleQuotaExceeded, field.NewPath("spec", "replicas"), scoreCertain, reason)
		return
	}
	section, name, ok := quotaField(rn)
	if !ok {
		return
	}
	type sized struct {
		ref containerRef
		q   resource.Quantity
	}
	var set []sized
	for _, c := range r.containers() {
		if q, ok := resourcesOf(c.c, section)[corev1.ResourceName(name)]; ok {
			set = append(set, sized{c, q})
		}
	}
	sort.SliceStable(set, func(i, j int) bool { return set[i].q.Cmp(set[j].q) > 0 })
	for _, s := range set {
		// The largest value is the likeliest to have tipped the quota; equal ones tie.
		score := scoreCertain
		if s.q.Cmp(set[0].q) < 0 {
			score = scoreLikely
		}
		r.suspectTemplate(RuleQuotaExceeded, fieldpath.ResourcePath(s.ref.path.Child("resources", section), name), score, reason)
	}
}

// quotaSuspectFor names the resource field of the named containers, which leave it unset.
func (r *ranker) quotaSuspectFor(rn string, containers []string, reason string) {
	section, name, ok := quotaField(rn)
	if !ok {
		return
	}
	for _, c := range r.containers() {
		for _, n := range containers {
			if c.c.Name == n {
				r.suspectTemplate(RuleQuotaExceeded, fieldpath.ResourcePath(c.path.Child("resources", section), name), scoreCertain, reason)
			}
		}
	}
}

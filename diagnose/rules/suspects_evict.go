package rules

import (
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
)

// The eviction rules. IDs are stable: scripts and the documentation refer to them.
const (
	RuleEphemeralStorage   RuleID = "ephemeral-storage-limit"
	RuleEvictedOverRequest RuleID = "evicted-over-request"
)

// evictionFamily reads why the kubelet evicted copies: a limit the copy wrote past, or a
// request far below what it used when its node ran short.
var _ = register(family{
	order:  90,
	name:   "eviction",
	detect: (*ranker).evictionRules,
	rules: []RuleInfo{
		{
			RuleEphemeralStorage, "A copy is evicted for writing more local storage than its limit allows",
			"Evicted `Container c exceeded its local ephemeral storage limit \"1Gi\"`, `Pod ephemeral local storage usage exceeds the total limit of containers 1Gi`, `Usage of EmptyDir volume \"v\" exceeds the limit \"500Mi\"`",
			"Raise the ephemeral-storage limit or the emptyDir sizeLimit, or find what the container writes (logs, caches) and bound it.", true,
		},
		{
			RuleEvictedOverRequest, "A copy is evicted first when its node runs short, for using far more than it requests",
			"Evicted `The node was low on resource: memory. ... Container c was using 900Mi, request is 128Mi, has larger consumption of memory`",
			"Raise the request to what the container uses, so the scheduler places it where that fits.", true,
		},
	},
})

// The kubelet's eviction messages (pkg/kubelet/eviction/helpers.go): containerEphemeralStorageMessageFmt,
// podEphemeralStorageMessageFmt, emptyDirMessageFmt, and containerMessageFmt after
// nodeLowMessageFmt and thresholdMetMessageFmt.
var (
	reEvictContainerStorage = regexp.MustCompile(`Container (\S+) exceeded its local ephemeral storage limit "([^"]+)"`)
	reEvictPodStorage       = regexp.MustCompile(`Pod ephemeral local storage usage exceeds the total limit of containers (\S+?)\.? *$`)
	reEvictEmptyDir         = regexp.MustCompile(`Usage of EmptyDir volume "([^"]+)" exceeds the limit "([^"]+)"`)
	reEvictOverRequest      = regexp.MustCompile(`Container (\S+) was using (\S+), request is (\S+), has larger consumption of (\S+?)\.`)
)

// evictionRules reads each eviction message once.
func (r *ranker) evictionRules() {
	for _, s := range r.in.Signals {
		if s.Reason != "Evicted" || s.Explained {
			continue
		}
		r.read(s)
		if r.evicted(s) {
			s.Explained = true
		}
	}
}

// evicted names the field one eviction message implicates; it reports whether it named one.
func (r *ranker) evicted(s *Signal) bool {
	msg := strings.TrimSpace(s.Text)
	named := false
	if m := reEvictContainerStorage.FindStringSubmatch(msg); m != nil {
		for _, c := range r.containers() {
			if c.c.Name == m[1] {
				r.suspectTemplate(RuleEphemeralStorage, fieldpath.ResourcePath(c.path.Child("resources", "limits"), string(corev1.ResourceEphemeralStorage)), scoreCertain,
					"copies are evicted: container "+m[1]+" wrote past its ephemeral-storage limit "+m[2]+r.copiesOf([]*Signal{s}))
				named = true
			}
		}
	}
	if m := reEvictPodStorage.FindStringSubmatch(msg); m != nil {
		for _, c := range r.containers() {
			if _, ok := c.c.Resources.Limits[corev1.ResourceEphemeralStorage]; ok {
				r.suspectTemplate(RuleEphemeralStorage, fieldpath.ResourcePath(c.path.Child("resources", "limits"), string(corev1.ResourceEphemeralStorage)), scoreLikely,
					"copies are evicted: their containers together wrote past the ephemeral-storage limits, "+m[1]+" in all")
				named = true
			}
		}
	}
	if m := reEvictEmptyDir.FindStringSubmatch(msg); m != nil {
		for j, v := range r.in.Template.Spec.Volumes {
			if v.Name == m[1] && v.EmptyDir != nil {
				r.suspectTemplate(RuleEphemeralStorage, r.specPath.Child("volumes").Index(j).Child("emptyDir", "sizeLimit"), scoreCertain,
					"copies are evicted: the emptyDir volume "+m[1]+" outgrew its sizeLimit "+m[2])
				named = true
			}
		}
	}
	if m := reEvictOverRequest.FindStringSubmatch(msg); m != nil {
		for _, c := range r.containers() {
			if c.c.Name == m[1] {
				r.suspectTemplate(RuleEvictedOverRequest, fieldpath.ResourcePath(c.path.Child("resources", "requests"), m[4]), scoreLikely,
					"copies are evicted when their node runs short of "+m[4]+": container "+m[1]+" used "+m[2]+" against a request of "+m[3]+", so its copies go first")
				named = true
			}
		}
	}
	return named
}

// ReasonEvicted is the pod status reason the kubelet's eviction manager writes
// (pkg/kubelet/eviction/helpers.go, Reason).
const ReasonEvicted = "Evicted"

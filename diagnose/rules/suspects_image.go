package rules

import (
	"regexp"
	"strings"
)

// The image rules. IDs are stable: scripts and the documentation refer to them.
const (
	RuleImageNotFound     RuleID = "image-not-found"
	RuleImageInvalidName  RuleID = "image-invalid-name"
	RuleImagePullAuth     RuleID = "image-pull-auth"
	RuleImageRegistryDown RuleID = "image-registry-unreachable"
	RuleImageRateLimited  RuleID = "image-pull-rate-limited"
)

// imageFamily reads the kubelet's pull errors.
var _ = register(family{
	order:  10,
	name:   "image",
	detect: (*ranker).imageRules,
	rules: []RuleInfo{
		{
			RuleImageNotFound, "Image reference names a tag or digest the registry does not have",
			"ErrImagePull/ImagePullBackOff with `not found` or `manifest unknown`",
			"Correct the image tag or digest; the previous value is the last one that pulled.", false,
		},
		{
			RuleImageInvalidName, "Image reference cannot be parsed",
			"InvalidImageName",
			"Write the image as registry/repository[:tag][@digest].", false,
		},
		{
			RuleImagePullAuth, "Registry refuses the pull: no or wrong credentials",
			"ErrImagePull with `pull access denied`, `unauthorized`, `insufficient_scope`, 401 or 403",
			"Add an imagePullSecrets entry (or attach one to the pod's ServiceAccount) that can read the repository.", false,
		},
		{
			RuleImageRegistryDown, "Registry cannot be reached",
			"ErrImagePull with `no such host`, `i/o timeout` or `connection refused` to the registry, or its 5xx answer",
			"If the registry host did not change, fix the registry or the network path to it; the spec is not at fault.", true,
		},
		{
			RuleImageRateLimited, "Registry throttles the pulls",
			"ErrImagePull with `429 Too Many Requests` or `toomanyrequests` (Docker Hub's pull rate limit)",
			"Pull with credentials (imagePullSecrets: authenticated pulls get a higher limit) or from a mirror; the spec is not at fault.", true,
		},
	},
})

// Image pull failures. The kubelet (pkg/kubelet/images/image_manager.go) reports
// `Failed to pull image "IMG": ERR` events and ErrImagePull / ImagePullBackOff
// (`Back-off pulling image "IMG": ErrImagePull: ERR`) waiting states; ERR is containerd's
// (core/remotes/docker/resolver.go, internal/cri/server/images/image_pull.go):
//   - `rpc error: code = NotFound desc = failed to pull and unpack image "IMG": failed to resolve image: IMG: not found`
//   - `failed to pull and unpack image "IMG": failed to resolve image: pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed`
//   - `... failed to resolve reference "IMG": unexpected status from HEAD request to https://...: 401 Unauthorized`
//   - `... failed to do request: Head "https://HOST/v2/...": dial tcp: lookup HOST on 10.96.0.10:53: no such host`
//   - `... failed to resolve reference "IMG": unexpected status from HEAD request to https://HOST/v2/...: 503 Service Unavailable`
//     (containerd's ErrUnexpectedStatus: the registry failed, a 5xx)
//
// InvalidImageName carries `Failed to apply default image tag "IMG": couldn't parse image name "IMG": invalid reference format`.
var (
	reImageAuth    = regexp.MustCompile(`(?i)pull access denied|unauthorized|insufficient_scope|authorization failed|authentication required|\b401\b|\b403 Forbidden|denied: `)
	reImageMissing = regexp.MustCompile(`(?i)\bnot found\b|manifest unknown|name unknown|code = NotFound`)
	reImageNetwork = regexp.MustCompile(`(?i)no such host|i/o timeout|connection refused|network is unreachable|no route to host|tls handshake timeout|connection reset by peer|context deadline exceeded|x509: |unexpected status (?:code )?from [A-Z]+ request to \S+: 5\d\d\b`)
	reImageInvalid = regexp.MustCompile(`couldn't parse image name|invalid reference format`)
	reImageLimited = regexp.MustCompile(`(?i)429 Too Many Requests|toomanyrequests|pull rate limit`)
)

func isPullSignal(s *Signal) bool {
	switch s.Reason {
	case "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull":
		return true
	case "Failed", "BackOff":
		return strings.HasPrefix(s.Text, "Failed to pull image ") || strings.HasPrefix(s.Text, "Failed to apply default image tag ") ||
			strings.HasPrefix(s.Text, "Back-off pulling image ") ||
			s.Text == "Error: ErrImagePull" || s.Text == "Error: ImagePullBackOff" || s.Text == "Error: InvalidImageName"
	}
	return false
}

// imageRules turns pull failures into suspects on the image, the pull secrets or, when the
// registry cannot be reached, the image as a dependency.
func (r *ranker) imageRules() {
	for _, s := range r.in.Signals {
		if !isPullSignal(s) {
			continue
		}
		r.read(s)
		s.Explained = true
		for _, c := range r.pullContainers(s) {
			imgPath := c.path.Child("image")
			_, imageChanged := r.previous(imgPath)
			kind := s.pullKind()
			switch {
			case s.Reason == "InvalidImageName" || kind == pullInvalid:
				r.suspectTemplate(RuleImageInvalidName, imgPath, scoreCertain, "the image reference cannot be parsed: "+s.Text)
			case kind == pullAuth:
				// A repository that does not exist is also answered with "pull access denied";
				// when the failing revision changed the image, the new name is the likelier fault.
				secrets := scoreCertain
				if imageChanged {
					secrets = scoreLikely
					r.suspectTemplate(RuleImageNotFound, imgPath, scoreCertain,
						"the registry denies "+c.c.Image+", which the failing revision introduced: the repository may not exist under this name")
				}
				r.suspectTemplate(RuleImagePullAuth, r.specPath.Child("imagePullSecrets"), secrets,
					"the registry refused to serve "+c.c.Image+" without credentials; the pod has no pull secret that it accepts")
				r.suspectTemplate(RuleImagePullAuth, r.specPath.Child("serviceAccountName"), scorePossible,
					"pull secrets can also come from the pod's ServiceAccount")
			case kind == pullLimited:
				reason := "the registry " + RegistryHost(c.c.Image) + " throttles pulls of " + c.c.Image + " (" + reImageLimited.FindString(s.Text) + ")"
				r.suspectTemplate(RuleImageRateLimited, r.specPath.Child("imagePullSecrets"), scoreLikely, reason+": authenticated pulls get a higher limit")
				r.suspectTemplate(RuleImageRateLimited, imgPath, scorePossible, reason+": a mirror or pull-through cache avoids the limit")
			case kind == pullMissing:
				r.suspectTemplate(RuleImageNotFound, imgPath, scoreCertain, "the registry has no image "+c.c.Image)
			case kind == pullNetwork:
				reason := "the registry of " + c.c.Image + " cannot be reached: " + networkCause(s.Text)
				switch prev, _ := r.previous(imgPath); {
				case !r.in.Served:
					// No revision served with it, so nothing shows the host ever answered: the
					// cause stays unknown, and the reason must not say otherwise.
					reason += "; no revision has served with this image yet, so a mistyped registry host in the reference is as likely as the registry or the network"
				case !imageChanged:
					reason += "; the image did not change, so the registry or the network is at fault"
				case RegistryHost(prev) == RegistryHost(c.c.Image):
					reason += "; the registry host " + RegistryHost(c.c.Image) + " did not change, so the registry or the network is at fault"
				default:
					reason += "; the failing revision moved the image from registry " + RegistryHost(prev)
				}
				r.suspectTemplate(RuleImageRegistryDown, imgPath, scoreLikely, reason)
			case s.Text != "" && !strings.HasPrefix(s.Text, "Error: ") && !strings.HasPrefix(s.Text, "Back-off pulling image "):
				r.suspectTemplate(RuleImageNotFound, imgPath, scorePossible, "pulling "+c.c.Image+" fails: "+s.Text)
			}
		}
	}
}

// What a pull failure's text says, as imageRules asks it: the first of the expressions
// that matches, in its order.
const (
	pullOther uint8 = iota + 1
	pullInvalid
	pullAuth
	pullMissing
	pullNetwork
	pullLimited
)

func pullKindOf(text string) uint8 {
	switch {
	case reImageInvalid.MatchString(text):
		return pullInvalid
	case reImageLimited.MatchString(text):
		// Before the credentials: a throttled anonymous pull is answered 429, not 401.
		return pullLimited
	case reImageAuth.MatchString(text):
		return pullAuth
	case reImageMissing.MatchString(text):
		return pullMissing
	case reImageNetwork.MatchString(text):
		return pullNetwork
	}
	return pullOther
}

// pullKind is pullKindOf the signal's text.
func (s *Signal) pullKind() uint8 { return pullKindOf(s.Text) }

// pullContainers finds the containers a pull failure is about: the one named by the signal,
// else those whose image the message quotes.
func (r *ranker) pullContainers(s *Signal) []containerRef {
	if s.Container != "" {
		if cs := r.containersOf(s); len(cs) == 1 {
			return cs
		}
	}
	var out []containerRef
	for _, c := range r.containers() {
		if c.c.Image != "" && strings.Contains(s.Text, `"`+c.c.Image+`"`) {
			out = append(out, c)
		}
	}
	return out
}

func networkCause(text string) string {
	if m := reImageNetwork.FindString(text); m != "" {
		return m
	}
	return text
}

// PullUnreachable reports a pull failure whose registry cannot be reached or fails: it does not
// resolve, refuses, times out or answers 5xx, as the image-registry-unreachable rule reads it. An
// image the registry does not have or refuses to serve is not one.
func PullUnreachable(s *Signal) bool { return isPullSignal(s) && s.pullKind() == pullNetwork }

// RegistryHost is the registry an image reference pulls from, as the container runtime reads
// it: the first path component when it looks like a host (has a dot or a port, or is
// localhost), else Docker Hub.
func RegistryHost(image string) string {
	first, _, found := strings.Cut(image, "/")
	if !found || !strings.ContainsAny(first, ".:") && first != "localhost" {
		return "docker.io"
	}
	return first
}

// DependencyDespiteChange reports whether a suspect of rule on a field the failing revision
// changed (from previous to value) still points outside the spec: a registry that cannot be
// reached, when the change kept the registry host (a new tag on a registry that is down is the
// registry's fault). The cause decision consults it before calling a changed field the spec's
// fault.
func DependencyDespiteChange(rule RuleID, value, previous string) bool {
	if rule != RuleImageRegistryDown || previous == "" {
		return false
	}
	return RegistryHost(previous) == RegistryHost(value)
}

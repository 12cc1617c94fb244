package kubeletsim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// imageRef is a parsed image reference, normalized the way containerd names images.
type imageRef struct {
	domain string // registry host, docker.io by default
	path   string // repository path, library/ prefixed for docker.io single names
	tag    string // "" when pinned by digest only
	digest string // sha256:... when pinned
}

// parseImageRef parses an image reference like the docker reference grammar, loosely.
func parseImageRef(s string) imageRef {
	var r imageRef
	name := s
	if i := strings.IndexByte(name, '@'); i >= 0 {
		r.digest = name[i+1:]
		name = name[:i]
	}
	if i := strings.LastIndexByte(name, ':'); i >= 0 && !strings.Contains(name[i:], "/") {
		r.tag = name[i+1:]
		name = name[:i]
	}
	first, rest, found := strings.Cut(name, "/")
	if found && (strings.ContainsAny(first, ".:") || first == "localhost") {
		r.domain, r.path = first, rest
	} else {
		r.domain, r.path = "docker.io", name
		if !strings.Contains(name, "/") {
			r.path = "library/" + name
		}
	}
	if r.tag == "" && r.digest == "" {
		r.tag = "latest"
	}
	return r
}

// repo is the normalized repository name (docker.io/library/nginx).
func (r imageRef) repo() string { return r.domain + "/" + r.path }

// String is the normalized reference containerd reports (docker.io/library/nginx:1.27).
func (r imageRef) String() string {
	s := r.repo()
	if r.tag != "" {
		s += ":" + r.tag
	}
	if r.digest != "" {
		s += "@" + r.digest
	}
	return s
}

// withDefaultTag is the kubelet's applyDefaultImageTag: a reference without tag or digest gets
// ":latest"; otherwise it is kept as written.
func withDefaultTag(spec string) string {
	r := parseImageRef(spec)
	if r.digest == "" && !strings.HasSuffix(spec, ":"+r.tag) {
		return spec + ":latest"
	}
	return spec
}

func digestOf(kind, ref string) string {
	h := sha256.Sum256([]byte(kind + ":" + ref))
	return "sha256:" + hex.EncodeToString(h[:])
}

// statusImage and imageID are what the CRI reports for a pulled image: a tagged image shows its
// normalized tag; one pinned only by digest shows its config digest (kfx.Image).
func statusImage(spec string) (image, imageID string) {
	r := parseImageRef(spec)
	manifest := r.digest
	if manifest == "" {
		manifest = digestOf("manifest", r.String())
	}
	imageID = r.repo() + "@" + manifest
	if r.tag == "" {
		return digestOf("config", r.String()), imageID
	}
	return r.repo() + ":" + r.tag, imageID
}

// Pull errors as the v1.37 kubelet reports containerd 2.x failures. A NotFound gRPC status
// keeps its "rpc error" prefix; code Unknown is stripped by the CRI client.
func pullNotFound(ref imageRef) string {
	return fmt.Sprintf("rpc error: code = NotFound desc = failed to pull and unpack image %q: failed to resolve image: %s: not found",
		ref.String(), ref.String())
}

func pullAccessDenied(ref imageRef) string {
	return fmt.Sprintf("failed to pull and unpack image %q: failed to resolve image: pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed",
		ref.String())
}

func pullNoSuchHost(ref imageRef) string {
	ver := ref.tag
	if ref.digest != "" {
		ver = ref.digest
	}
	return fmt.Sprintf("failed to pull and unpack image %q: failed to resolve image: failed to do request: Head %q: dial tcp: lookup %s on 127.0.0.53:53: no such host",
		ref.String(), "https://"+ref.domain+"/v2/"+ref.path+"/manifests/"+ver, hostOnly(ref.domain))
}

func hostOnly(domain string) string {
	if i := strings.LastIndexByte(domain, ':'); i >= 0 {
		return domain[:i]
	}
	return domain
}

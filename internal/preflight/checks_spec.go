package preflight

import (
	"fmt"
	"sort"
	"strings"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The spec checks. IDs are stable.
const (
	CheckProbes     CheckID = "probes"
	CheckServices   CheckID = "service-selection"
	CheckImages     CheckID = "image"
	CheckReferences CheckID = "references"
)

// checks is the catalogue, in the order the checks run: quota reads the nodes node-fit found.
var checks = []check{
	{CheckServiceAccount, "The pod's ServiceAccount exists (or the manifests create it).", serviceAccount},
	{CheckNodeFit, "The nodeSelector, required node affinity and tolerations match a schedulable node whose allocatable, minus what its bound pods request, holds the requests.", nodeFit},
	{CheckQuota, "The namespace's ResourceQuotas have room for the rollout's surge (maxSurge resolved as the controller does) and any scale-up.", quota},
	{CheckPodSecurity, "The namespace's PodSecurity enforce level admits the pod template (warn and audit levels give warnings), evaluated with k8s.io/pod-security-admission.", podSecurity},
	{CheckProbes, "Every probe's port is one the container declares; HTTP paths start with /.", probes},
	{CheckServices, "Every Service that selects today's copies still selects the new template's labels.", serviceSelection},
	{CheckImages, "Image references parse as the kubelet parses them; a tag without a digest is mutable.", images},
	{CheckReferences, "ConfigMaps and Secrets the template names exist (with --check-references; metadata only).", references},
}

type containerAt struct {
	c    *corev1.Container
	path *field.Path
}

func (s *subject) containers() []containerAt {
	spec := &s.w.Template.Spec
	var out []containerAt
	for i := range spec.InitContainers {
		out = append(out, containerAt{&spec.InitContainers[i], specPath.Child("initContainers").Index(i)})
	}
	for i := range spec.Containers {
		out = append(out, containerAt{&spec.Containers[i], specPath.Child("containers").Index(i)})
	}
	return out
}

// probes: a probe on a port the container does not declare fails on every copy (a named port
// cannot even be resolved), so the copies never turn Ready or are restarted forever.
func probes(s *subject) []Finding {
	var out []Finding
	n := 0
	for _, ca := range s.containers() {
		for _, p := range []struct {
			kind  string
			probe *corev1.Probe
		}{{"liveness", ca.c.LivenessProbe}, {"readiness", ca.c.ReadinessProbe}, {"startup", ca.c.StartupProbe}} {
			if p.probe == nil {
				continue
			}
			n++
			pp := ca.path.Child(p.kind + "Probe")
			var port intstr.IntOrString
			var portPath *field.Path
			switch h := p.probe.ProbeHandler; {
			case h.HTTPGet != nil:
				port, portPath = h.HTTPGet.Port, pp.Child("httpGet", "port")
				if path := h.HTTPGet.Path; path != "" && !strings.HasPrefix(path, "/") {
					out = append(out, s.finding(CheckProbes, ResultWarn, pp.Child("httpGet", "path"),
						"the %s probe of container %s asks for path %q, which does not start with /", p.kind, ca.c.Name, path))
				}
			case h.TCPSocket != nil:
				port, portPath = h.TCPSocket.Port, pp.Child("tcpSocket", "port")
			case h.GRPC != nil:
				port, portPath = intstr.FromInt32(h.GRPC.Port), pp.Child("grpc", "port")
			default:
				continue
			}
			if msg := undeclaredPort(ca.c, port); msg != "" {
				out = append(out, s.finding(CheckProbes, ResultFail, portPath, "the %s probe of container %s %s", p.kind, ca.c.Name, msg))
			}
		}
	}
	if len(out) == 0 {
		if n == 0 {
			return []Finding{s.finding(CheckProbes, ResultPass, nil, "no probes to check")}
		}
		if n == 1 {
			return []Finding{s.finding(CheckProbes, ResultPass, nil, "the probe targets a port its container declares")}
		}
		return []Finding{s.finding(CheckProbes, ResultPass, nil, "all %d probes target ports their containers declare", n)}
	}
	return out
}

// undeclaredPort says what is wrong with a probe's port, or "".
func undeclaredPort(c *corev1.Container, port intstr.IntOrString) string {
	declared := make([]string, 0, len(c.Ports))
	for _, p := range c.Ports {
		if port.Type == intstr.String && p.Name == port.StrVal || port.Type == intstr.Int && p.ContainerPort == port.IntVal {
			return ""
		}
		d := fmt.Sprint(p.ContainerPort)
		if p.Name != "" {
			d += " (" + p.Name + ")"
		}
		declared = append(declared, d)
	}
	has := "declares no ports"
	if len(declared) > 0 {
		has = "declares " + strings.Join(declared, ", ")
	}
	if port.Type == intstr.String {
		return fmt.Sprintf("targets port %q, which the container does not declare (it %s): the kubelet cannot resolve it, so the probe fails on every copy", port.StrVal, has)
	}
	if len(c.Ports) == 0 {
		// Nothing to compare with: ports are declared for people and Services, not required.
		return ""
	}
	return fmt.Sprintf("targets port %d, which the container does not declare (it %s)", port.IntVal, has)
}

// serviceSelection: a Service that selects today's copies but not the new template's labels
// loses every endpoint as the rollout replaces the copies.
func serviceSelection(s *subject) []Finding {
	if s.nf.ServicesUnread != "" {
		return []Finding{s.finding(CheckServices, ResultSkipped, nil, "could not list Services: %s", s.nf.ServicesUnread)}
	}
	var today []labels.Set
	if s.live != nil {
		if s.live.Unread != "" {
			return []Finding{s.finding(CheckServices, ResultSkipped, nil, "could not read today's copies: %s", s.live.Unread)}
		}
		for _, p := range s.live.Pods {
			today = append(today, labels.Set(p.Labels))
		}
		if len(today) == 0 {
			if t := liveTemplate(s.live.Object); t != nil {
				today = append(today, labels.Set(t.Labels))
			}
		}
	}
	if len(today) == 0 {
		return []Finding{s.finding(CheckServices, ResultPass, nil, "no copies today: no Service selects the workload yet")}
	}
	after := map[string]*corev1.Service{}
	for _, svc := range s.servicesAfterApply() {
		after[svc.Name] = svc
	}
	newLabels := labels.Set(s.w.Template.Labels)
	var out []Finding
	var kept []string
	for _, svc := range s.nf.Services {
		if len(svc.Spec.Selector) == 0 || !selectsAny(svc.Spec.Selector, today) {
			continue
		}
		post := after[svc.Name]
		sel := labels.SelectorFromSet(post.Spec.Selector)
		if len(post.Spec.Selector) > 0 && sel.Matches(newLabels) {
			kept = append(kept, svc.Name)
			continue
		}
		var missing []string
		for k, v := range post.Spec.Selector {
			if got, ok := newLabels[k]; !ok || got != v {
				missing = append(missing, k+"="+v)
			}
		}
		sort.Strings(missing)
		out = append(out, s.finding(CheckServices, ResultFail, field.NewPath("spec", "template", "metadata", "labels"),
			"Service %s selects today's copies but not the new template's labels (it needs %s): it would lose every endpoint as the rollout replaces them",
			svc.Name, strings.Join(missing, ", ")))
	}
	if len(out) > 0 {
		return out
	}
	if len(kept) == 0 {
		return []Finding{s.finding(CheckServices, ResultPass, nil, "no Service selects today's copies")}
	}
	return []Finding{s.finding(CheckServices, ResultPass, nil, "Service %s selects today's copies and the new template", strings.Join(kept, ", "))}
}

func selectsAny(selector map[string]string, sets []labels.Set) bool {
	sel := labels.SelectorFromSet(selector)
	for _, l := range sets {
		if sel.Matches(l) {
			return true
		}
	}
	return false
}

// images: the kubelet parses each image with the distribution reference grammar and refuses
// one that does not parse (InvalidImageName); a reference without a digest pulls whatever the
// tag names at pull time, so copies of one revision can run different code.
func images(s *subject) []Finding {
	var out []Finding
	for _, ca := range s.containers() {
		p := ca.path.Child("image")
		img := ca.c.Image
		named, err := reference.ParseNormalizedNamed(img)
		if err != nil {
			out = append(out, s.finding(CheckImages, ResultFail, p,
				"image %q of container %s is not a valid reference (%s): the kubelet would refuse it (InvalidImageName)", img, ca.c.Name, err))
			continue
		}
		if _, ok := named.(reference.Digested); ok {
			out = append(out, s.finding(CheckImages, ResultPass, p, "image %s of container %s is pinned by digest", img, ca.c.Name))
			continue
		}
		tag := "latest"
		if t, ok := named.(reference.Tagged); ok {
			tag = t.Tag()
		}
		switch tag {
		case "latest":
			out = append(out, s.finding(CheckImages, ResultWarn, p,
				"image %s of container %s pulls tag latest, which moves with every push: copies of this revision may run different code; pin a digest (@sha256:...)", img, ca.c.Name))
		default:
			out = append(out, s.finding(CheckImages, ResultWarn, p,
				"image %s of container %s names tag %s without a digest: a tag is mutable, the registry can move it; pin a digest (@sha256:...) to roll out what was tested", img, ca.c.Name, tag))
		}
	}
	return out
}

// Reference is a ConfigMap or Secret a pod template names.
type Reference struct {
	// Kind is ConfigMap or Secret.
	Kind, Name string
	Path       *field.Path
	// Optional references do not stop a copy when missing.
	Optional bool
}

// References lists the ConfigMaps and Secrets the template names: env valueFrom, envFrom,
// volumes (projected sources too) and imagePullSecrets.
func References(w *Workload) []Reference {
	spec := &w.Template.Spec
	var out []Reference
	opt := func(b *bool) bool { return b != nil && *b }
	for _, ca := range (&subject{w: w}).containers() {
		for i, e := range ca.c.Env {
			if e.ValueFrom == nil {
				continue
			}
			p := ca.path.Child("env").Index(i).Child("valueFrom")
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				out = append(out, Reference{"ConfigMap", r.Name, p.Child("configMapKeyRef", "name"), opt(r.Optional)})
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				out = append(out, Reference{"Secret", r.Name, p.Child("secretKeyRef", "name"), opt(r.Optional)})
			}
		}
		for i, e := range ca.c.EnvFrom {
			p := ca.path.Child("envFrom").Index(i)
			if r := e.ConfigMapRef; r != nil {
				out = append(out, Reference{"ConfigMap", r.Name, p.Child("configMapRef", "name"), opt(r.Optional)})
			}
			if r := e.SecretRef; r != nil {
				out = append(out, Reference{"Secret", r.Name, p.Child("secretRef", "name"), opt(r.Optional)})
			}
		}
	}
	for i, v := range spec.Volumes {
		p := specPath.Child("volumes").Index(i)
		if r := v.ConfigMap; r != nil {
			out = append(out, Reference{"ConfigMap", r.Name, p.Child("configMap", "name"), opt(r.Optional)})
		}
		if r := v.Secret; r != nil {
			out = append(out, Reference{"Secret", r.SecretName, p.Child("secret", "secretName"), opt(r.Optional)})
		}
		if v.Projected != nil {
			for j, src := range v.Projected.Sources {
				sp := p.Child("projected", "sources").Index(j)
				if r := src.ConfigMap; r != nil {
					out = append(out, Reference{"ConfigMap", r.Name, sp.Child("configMap", "name"), opt(r.Optional)})
				}
				if r := src.Secret; r != nil {
					out = append(out, Reference{"Secret", r.Name, sp.Child("secret", "name"), opt(r.Optional)})
				}
			}
		}
	}
	for i, r := range spec.ImagePullSecrets {
		// The kubelet pulls without a pull secret it cannot find, so a missing one only warns.
		out = append(out, Reference{"Secret", r.Name, specPath.Child("imagePullSecrets").Index(i).Child("name"), true})
	}
	return out
}

// references: a copy that names a ConfigMap or Secret that does not exist never starts
// (CreateContainerConfigError, or a volume that cannot mount). Looked up only with
// --check-references, and then by metadata only: no data is read.
func references(s *subject) []Finding {
	refs := References(s.w)
	if !s.f.CheckReferences {
		if len(refs) == 0 {
			return []Finding{s.finding(CheckReferences, ResultSkipped, nil, "no ConfigMap or Secret references; not checked without --check-references")}
		}
		return []Finding{s.finding(CheckReferences, ResultSkipped, nil, "%s to ConfigMaps and Secrets not checked; pass --check-references to look them up by metadata", plural(len(refs), "reference", "references"))}
	}
	inStream := s.m.carried()
	var out []Finding
	ok, carried := 0, 0
	for _, r := range refs {
		key := strings.ToLower(r.Kind) + "/" + r.Name
		exists := s.nf.ConfigMaps[r.Name]
		if r.Kind == "Secret" {
			exists = s.nf.Secrets[r.Name]
		}
		switch {
		case inStream[r.Kind+"/"+s.w.Namespace+"/"+r.Name]:
			carried++
		case exists:
			ok++
		case s.nf.Unread[key] != "":
			out = append(out, s.finding(CheckReferences, ResultSkipped, r.Path, "could not look up %s %s: %s", r.Kind, r.Name, s.nf.Unread[key]))
		case r.Optional:
			out = append(out, s.finding(CheckReferences, ResultWarn, r.Path, "%s %s does not exist in namespace %s; the reference is optional", r.Kind, r.Name, s.w.Namespace))
		default:
			out = append(out, s.finding(CheckReferences, ResultFail, r.Path, "%s %s does not exist in namespace %s: the copies would not start", r.Kind, r.Name, s.w.Namespace))
		}
	}
	if len(out) == 0 {
		switch {
		case ok == 0 && carried == 0:
			return []Finding{s.finding(CheckReferences, ResultPass, nil, "no ConfigMap or Secret references")}
		case carried == 0:
			return []Finding{s.finding(CheckReferences, ResultPass, nil, "%s exist (looked up by metadata; no data read)", plural(ok, "referenced ConfigMap or Secret", "referenced ConfigMaps and Secrets"))}
		case ok == 0:
			return []Finding{s.finding(CheckReferences, ResultPass, nil, "%s created by the manifests (not looked up)", plural(carried, "referenced ConfigMap or Secret is", "referenced ConfigMaps and Secrets are"))}
		}
		return []Finding{s.finding(CheckReferences, ResultPass, nil, "%s exist: %d created by the manifests (not looked up), %d looked up by metadata (no data read)",
			plural(ok+carried, "referenced ConfigMap or Secret", "referenced ConfigMaps and Secrets"), carried, ok)}
	}
	return out
}

package rules

import (
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The config rules. IDs are stable: scripts and the documentation refer to them.
const (
	RuleEnvRefNotFound    RuleID = "env-ref-not-found"
	RuleEnvKeyNotFound    RuleID = "env-key-not-found"
	RuleVolumeRefNotFound RuleID = "volume-ref-not-found"
	RuleVolumeKeyNotFound RuleID = "volume-key-not-found"
	RuleRunAsNonRoot      RuleID = "run-as-non-root"
)

// configFamily reads CreateContainerConfigError and FailedMount.
var _ = register(family{
	order:  20,
	name:   "config",
	detect: (*ranker).configRules,
	rules: []RuleInfo{
		{
			RuleEnvRefNotFound, "env/envFrom refers to a Secret or ConfigMap that does not exist",
			"CreateContainerConfigError `secret \"x\" not found` / `configmap \"x\" not found`",
			"Create the object in the namespace, correct the name, or mark the reference optional.", false,
		},
		{
			RuleEnvKeyNotFound, "env refers to a key its Secret or ConfigMap does not have",
			"CreateContainerConfigError `couldn't find key k in Secret ns/x`",
			"Correct the key, or add it to the Secret or ConfigMap.", false,
		},
		{
			RuleVolumeRefNotFound, "A volume refers to a Secret, ConfigMap or claim that does not exist",
			"FailedMount `MountVolume.SetUp failed for volume \"v\" : secret \"x\" not found`",
			"Create the object, correct the name, or mark the volume source optional.", false,
		},
		{
			RuleVolumeKeyNotFound, "A volume's items name a key its Secret or ConfigMap does not have",
			"FailedMount `configmap references non-existent config key: k`",
			"Correct the item key, or add the key to the object.", false,
		},
		{
			RuleRunAsNonRoot, "runAsNonRoot is required but the image runs as root or by user name",
			"CreateContainerConfigError `container has runAsNonRoot and image will run as root`",
			"Set securityContext.runAsUser to a non-zero UID, or use an image whose USER is numeric and not 0.", false,
		},
	},
})

// Missing configuration. CreateContainerConfigError comes from the kubelet's makeEnvironmentVariables
// (pkg/kubelet/kubelet_pods.go): `couldn't find key K in Secret NS/NAME`, `couldn't find key K in
// ConfigMap NS/NAME`, or the secret/configmap manager's NotFound error `secret "NAME" not found`,
// `configmap "NAME" not found` (apimachinery errors.NewNotFound). The Failed event repeats it as
// `Error: MSG`. FailedMount comes from operationexecutor.GenerateError
// (pkg/volume/util/operationexecutor/operation_executor.go):
// `MountVolume.SetUp failed for volume "V" : ERR`, ERR being the same NotFound error, or
// `configmap references non-existent config key: K` (pkg/volume/configmap/configmap.go),
// `references non-existent secret key: K` (pkg/volume/secret/secret.go).
var (
	reKeyMissing    = regexp.MustCompile(`couldn't find key (\S+) in (Secret|ConfigMap) ([^/\s]+)/(\S+)`)
	reRefMissing    = regexp.MustCompile(`\b(secret|configmap|persistentvolumeclaim) "([^"]+)" not found`)
	reMountVolume   = regexp.MustCompile(`MountVolume\.\S+ failed for volume "([^"]+)"`)
	reVolKeyMissing = regexp.MustCompile(`(configmap|secret) references non-existent (?:config|secret) key: (\S+)|references non-existent (secret) key: (\S+)`)
)

// configRules points missing Secrets, ConfigMaps and keys at the env, envFrom or volume
// reference that names them.
func (r *ranker) configRules() {
	for _, s := range r.in.Signals {
		r.read(s)
		switch {
		case s.Reason == "CreateContainerConfigError" || s.Reason == "Failed" && strings.HasPrefix(s.Text, "Error: "):
			if r.envRefs(s) || r.runAsNonRoot(s) {
				s.Explained = true
			}
		case s.Reason == "FailedMount":
			if r.volumeRefs(s) {
				s.Explained = true
			}
		}
	}
}

func (r *ranker) envRefs(s *Signal) bool {
	hit := false
	if m := reKeyMissing.FindStringSubmatch(s.Text); m != nil {
		key, kind, name := m[1], m[2], m[4]
		for _, c := range r.containersOf(s) {
			for j, e := range c.c.Env {
				if e.ValueFrom == nil {
					continue
				}
				p := c.path.Child("env").Index(j).Child("valueFrom")
				if ref := e.ValueFrom.SecretKeyRef; kind == "Secret" && ref != nil && ref.Name == name && ref.Key == key {
					r.suspectTemplate(RuleEnvKeyNotFound, p.Child("secretKeyRef", "key"), scoreCertain,
						"Secret "+name+" has no key "+key+" (env "+e.Name+")")
					hit = true
				}
				if ref := e.ValueFrom.ConfigMapKeyRef; kind == "ConfigMap" && ref != nil && ref.Name == name && ref.Key == key {
					r.suspectTemplate(RuleEnvKeyNotFound, p.Child("configMapKeyRef", "key"), scoreCertain,
						"ConfigMap "+name+" has no key "+key+" (env "+e.Name+")")
					hit = true
				}
			}
		}
		return hit
	}
	m := reRefMissing.FindStringSubmatch(s.Text)
	if m == nil {
		return false
	}
	kind, name := m[1], m[2]
	for _, c := range r.containersOf(s) {
		for j, e := range c.c.Env {
			if e.ValueFrom == nil {
				continue
			}
			p := c.path.Child("env").Index(j).Child("valueFrom")
			if ref := e.ValueFrom.SecretKeyRef; kind == "secret" && ref != nil && ref.Name == name {
				r.suspectTemplate(RuleEnvRefNotFound, p.Child("secretKeyRef", "name"), scoreCertain,
					"Secret "+name+" does not exist (env "+e.Name+")")
				hit = true
			}
			if ref := e.ValueFrom.ConfigMapKeyRef; kind == "configmap" && ref != nil && ref.Name == name {
				r.suspectTemplate(RuleEnvRefNotFound, p.Child("configMapKeyRef", "name"), scoreCertain,
					"ConfigMap "+name+" does not exist (env "+e.Name+")")
				hit = true
			}
		}
		for j, e := range c.c.EnvFrom {
			p := c.path.Child("envFrom").Index(j)
			if e.SecretRef != nil && kind == "secret" && e.SecretRef.Name == name {
				r.suspectTemplate(RuleEnvRefNotFound, p.Child("secretRef", "name"), scoreCertain, "Secret "+name+" does not exist (envFrom)")
				hit = true
			}
			if e.ConfigMapRef != nil && kind == "configmap" && e.ConfigMapRef.Name == name {
				r.suspectTemplate(RuleEnvRefNotFound, p.Child("configMapRef", "name"), scoreCertain, "ConfigMap "+name+" does not exist (envFrom)")
				hit = true
			}
		}
	}
	return hit
}

// reNonRoot matches the kubelet's verifyRunAsNonRoot errors
// (pkg/kubelet/kuberuntime/security_context_others.go).
var reNonRoot = regexp.MustCompile(`container has runAsNonRoot and image (?:will run as root|has non-numeric user|has an invalid user id)`)

// runAsNonRoot names where runAsNonRoot is set (the container's securityContext, else the
// pod's) and the runAsUser that would satisfy it.
func (r *ranker) runAsNonRoot(s *Signal) bool {
	if !reNonRoot.MatchString(s.Text) {
		return false
	}
	for _, c := range r.containersOf(s) {
		p := c.path.Child("securityContext", "runAsNonRoot")
		if sc := c.c.SecurityContext; sc == nil || sc.RunAsNonRoot == nil {
			p = r.specPath.Child("securityContext", "runAsNonRoot")
		}
		r.suspectTemplate(RuleRunAsNonRoot, p, scoreCertain, "the image of container "+c.c.Name+" would run as root, or as a user the kubelet cannot check: "+s.Text)
		r.suspectTemplate(RuleRunAsNonRoot, c.path.Child("securityContext", "runAsUser"), scoreLikely,
			"a numeric non-zero runAsUser satisfies runAsNonRoot whatever the image's USER")
	}
	return true
}

// volumeRefs handles a FailedMount: the volume it names, and the object or key that volume
// refers to.
func (r *ranker) volumeRefs(s *Signal) bool {
	vm := reMountVolume.FindStringSubmatch(s.Text)
	ref := reRefMissing.FindStringSubmatch(s.Text)
	key := reVolKeyMissing.FindStringSubmatch(s.Text)
	if ref == nil && key == nil {
		return false
	}
	hit := false
	for i := range r.in.Template.Spec.Volumes {
		v := &r.in.Template.Spec.Volumes[i]
		if vm != nil && v.Name != vm[1] {
			continue
		}
		p := r.specPath.Child("volumes").Index(i)
		for _, vr := range volumeObjectRefs(v, p) {
			switch {
			case ref != nil && vr.kind == ref[1] && vr.name == ref[2]:
				r.suspectTemplate(RuleVolumeRefNotFound, vr.namePath, scoreCertain,
					kindTitle(vr.kind)+" "+vr.name+" does not exist (volume "+v.Name+")")
				hit = true
			case key != nil && vr.kind == key[1]+key[3]:
				k := key[2] + key[4]
				for j, it := range vr.items {
					if it.Key == k {
						r.suspectTemplate(RuleVolumeKeyNotFound, vr.itemsPath.Index(j).Child("key"), scoreCertain,
							kindTitle(vr.kind)+" "+vr.name+" has no key "+k+" (volume "+v.Name+")")
						hit = true
					}
				}
			}
		}
	}
	return hit
}

// volumeObjectRef is a Secret, ConfigMap or claim that a volume (or a projected source) names.
type volumeObjectRef struct {
	kind      string // secret, configmap, persistentvolumeclaim: as the NotFound error spells it
	name      string
	namePath  *field.Path
	items     []corev1.KeyToPath
	itemsPath *field.Path
}

func volumeObjectRefs(v *corev1.Volume, p *field.Path) []volumeObjectRef {
	var out []volumeObjectRef
	if s := v.Secret; s != nil {
		out = append(out, volumeObjectRef{"secret", s.SecretName, p.Child("secret", "secretName"), s.Items, p.Child("secret", "items")})
	}
	if c := v.ConfigMap; c != nil {
		out = append(out, volumeObjectRef{"configmap", c.Name, p.Child("configMap", "name"), c.Items, p.Child("configMap", "items")})
	}
	if c := v.PersistentVolumeClaim; c != nil {
		out = append(out, volumeObjectRef{"persistentvolumeclaim", c.ClaimName, p.Child("persistentVolumeClaim", "claimName"), nil, nil})
	}
	if pr := v.Projected; pr != nil {
		for i, src := range pr.Sources {
			sp := p.Child("projected", "sources").Index(i)
			if s := src.Secret; s != nil {
				out = append(out, volumeObjectRef{"secret", s.Name, sp.Child("secret", "name"), s.Items, sp.Child("secret", "items")})
			}
			if c := src.ConfigMap; c != nil {
				out = append(out, volumeObjectRef{"configmap", c.Name, sp.Child("configMap", "name"), c.Items, sp.Child("configMap", "items")})
			}
		}
	}
	return out
}

func kindTitle(kind string) string {
	switch kind {
	case "secret":
		return "Secret"
	case "configmap":
		return "ConfigMap"
	case "persistentvolumeclaim":
		return "PersistentVolumeClaim"
	}
	return kind
}

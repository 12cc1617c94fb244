package rules

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
)

// The application rules. IDs are stable: scripts and the documentation refer to them.
const (
	RuleReadOnlyFS          RuleID = "read-only-filesystem"
	RuleVolumePermission    RuleID = "volume-permission"
	RuleJVMHeap             RuleID = "jvm-heap"
	RuleCredentialsRejected RuleID = "credentials-rejected"
)

// appFamily reads what a program says of what its spec gave it: a filesystem it may not write,
// a heap too small, credentials a server refuses.
var _ = register(family{
	order:  80,
	name:   "app",
	detect: (*ranker).appRules,
	rules: []RuleInfo{
		{
			RuleReadOnlyFS, "The container writes where its spec makes the filesystem read-only",
			"`read-only file system` (EROFS) naming a path on the root filesystem under readOnlyRootFilesystem, or under a read-only mount",
			"Mount a writable volume (an emptyDir) where the container writes, or make that filesystem writable.", false,
		},
		{
			RuleVolumePermission, "A container that runs as a non-root user may not write the volume it mounts: no fsGroup gives it the volume's files",
			"`permission denied` naming a path on a PersistentVolumeClaim or hostPath volume, the pod without securityContext.fsGroup",
			"Set securityContext.fsGroup to the container's group, so the kubelet hands it the volume's files, or run as the volume's owner.", false,
		},
		{
			RuleJVMHeap, "The JVM runs out of the heap its flags or its memory limit allow",
			"`java.lang.OutOfMemoryError: Java heap space` (or `GC overhead limit exceeded`) in the log",
			"Raise -Xmx (or MaxRAMPercentage), or the memory limit the JVM sizes its heap from; or find what made the heap grow.", true,
		},
		{
			RuleCredentialsRejected, "A server rejects the credentials the container gives it",
			"`password authentication failed for user` (PostgreSQL), `Access denied for user` (MySQL), `WRONGPASS` (Redis), `Authentication failed` (MongoDB), `ACCESS_REFUSED` (RabbitMQ)",
			"Check the password or token the variable passes (its Secret is not read) against the server's; a rotated secret is outside the spec.", true,
		},
	},
})

// appRules reads each failing signal once for the application rules.
func (r *ranker) appRules() {
	for _, s := range r.in.Signals {
		if s.Explained || s.Text == "" {
			continue
		}
		switch {
		case strings.Contains(s.Text, "ead-only file system"):
			r.read(s)
			if r.readOnlyFS(s) {
				s.Explained = true
			}
		case strings.Contains(s.Text, "ermission denied"):
			r.read(s)
			if r.volumePermission(s) {
				s.Explained = true
			}
		case strings.Contains(s.Text, "OutOfMemoryError"):
			if reJVMHeap.MatchString(s.Text) {
				r.read(s)
				r.jvmHeap(s)
				s.Explained = true
			}
		case mayRejectCredentials(s.Text):
			if m := reCredentials.FindStringSubmatch(s.Text); m != nil {
				r.read(s)
				r.credentialsRejected(s, m[0], firstNonEmpty(m[1:]...))
				s.Explained = true
			}
		}
	}
}

// readOnlyFS reads a write refused with EROFS ("open /tmp/x: read-only file system", nginx's
// "(30: Read-only file system)", Python's "[Errno 30] Read-only file system: '/app/logs'")
// and names the field that made the path read-only: the mount it is under when that mount is
// read-only (readOnly, or a ConfigMap, Secret, downward API or projected volume, which are
// always), else readOnlyRootFilesystem when it is set. It reports whether it named one.
func (r *ranker) readOnlyFS(s *Signal) bool {
	path := firstPath(s)
	named := false
	for _, c := range r.containersOf(s) {
		if path != "" {
			if j := mountOf(c.c, path); j >= 0 {
				m := c.c.VolumeMounts[j]
				mp := c.path.Child("volumeMounts").Index(j)
				switch kind, _ := r.volumeKinds(m.Name); {
				case m.ReadOnly:
					r.suspectTemplate(RuleReadOnlyFS, mp.Child("readOnly"), scoreCertain,
						"the container writes "+path+", under volume "+m.Name+" mounted read-only at "+m.MountPath)
					named = true
				case kind != "":
					r.suspectTemplate(RuleReadOnlyFS, mp.Child("mountPath"), scoreLikely,
						"the container writes "+path+", under "+m.MountPath+", where volume "+m.Name+" is a "+kind+" volume, which is always read-only")
					named = true
				}
				// A writable mount: the write failed for another reason.
				continue
			}
		}
		if sc := c.c.SecurityContext; sc != nil && sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem {
			where := "the container writes to its root filesystem"
			if path != "" {
				where = "the container writes " + path + ", on its root filesystem (no volume is mounted there)"
			}
			r.suspectTemplate(RuleReadOnlyFS, c.path.Child("securityContext", "readOnlyRootFilesystem"), scoreCertain,
				where+", which readOnlyRootFilesystem makes read-only")
			named = true
		}
	}
	return named
}

// mountOf returns the index of the container's mount that holds path (the deepest), or -1.
func mountOf(c *corev1.Container, path string) int {
	best, depth := -1, -1
	for j, m := range c.VolumeMounts {
		mp := strings.TrimSuffix(m.MountPath, "/")
		if (path == mp || strings.HasPrefix(path, mp+"/")) && len(mp) > depth {
			best, depth = j, len(mp)
		}
	}
	return best
}

// volumeKinds say what a pod's volume is, for the rules that read a write refused on it:
// readOnly names the kind when the kubelet always mounts it read-only (read-only-filesystem's),
// owned when its files keep an owner of their own (volume-permission's); "" otherwise.
func (r *ranker) volumeKinds(volume string) (readOnly, owned string) {
	for _, v := range r.in.Template.Spec.Volumes {
		if v.Name != volume {
			continue
		}
		switch {
		case v.ConfigMap != nil:
			return "ConfigMap", ""
		case v.Secret != nil:
			return "Secret", ""
		case v.DownwardAPI != nil:
			return "downward API", ""
		case v.Projected != nil:
			return "projected", ""
		case v.PersistentVolumeClaim != nil:
			return "", "PersistentVolumeClaim " + v.PersistentVolumeClaim.ClaimName
		case v.HostPath != nil:
			return "", "hostPath " + v.HostPath.Path
		}
	}
	return "", ""
}

// firstPath is the first absolute path a signal names, "" when it names none.
func firstPath(s *Signal) string {
	for _, t := range s.Tokens() {
		if t.Kind == facts.ValuePath {
			return t.Path
		}
	}
	return ""
}

// runsAsNonRoot reports whether the container's own or the pod's securityContext says it runs
// as a user other than root. An image's USER is not in the spec; nothing is assumed of it.
func (r *ranker) runsAsNonRoot(c *corev1.Container) (uid string, ok bool) {
	pod := r.in.Template.Spec.SecurityContext
	var user *int64
	var nonRoot *bool
	if pod != nil {
		user, nonRoot = pod.RunAsUser, pod.RunAsNonRoot
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			user = sc.RunAsUser
		}
		if sc.RunAsNonRoot != nil {
			nonRoot = sc.RunAsNonRoot
		}
	}
	switch {
	case user != nil:
		return fmt.Sprint(*user), *user != 0
	case nonRoot != nil && *nonRoot:
		return "a non-root user", true
	}
	return "", false
}

// volumePermission reads EACCES on a path under a volume that keeps its owner's files (a
// claim, a host path) in a container running as non-root, in a pod without fsGroup: the
// kubelet gives the pod's group the volume's files only when fsGroup is set. An emptyDir is
// world-writable, and a ConfigMap or Secret read-only (read-only-filesystem's).
func (r *ranker) volumePermission(s *Signal) bool {
	path := firstPath(s)
	if path == "" || strings.Contains(s.Text, `exec: "`) {
		return false
	}
	if sc := r.in.Template.Spec.SecurityContext; sc != nil && sc.FSGroup != nil {
		return false
	}
	named := false
	for _, c := range r.containersOf(s) {
		j := mountOf(c.c, path)
		if j < 0 {
			continue
		}
		m := c.c.VolumeMounts[j]
		_, kind := r.volumeKinds(m.Name)
		uid, nonRoot := r.runsAsNonRoot(c.c)
		if kind == "" || !nonRoot {
			continue
		}
		r.suspectTemplate(RuleVolumePermission, r.specPath.Child("securityContext", "fsGroup"), scoreLikely,
			"container "+c.c.Name+" runs as "+uid+" and may not write "+path+" on volume "+m.Name+" ("+kind+"), mounted at "+m.MountPath+
				": permission denied; the pod sets no fsGroup, so the volume's files keep their owner")
		named = true
	}
	return named
}

// reJVMHeap matches the JVM's heap exhaustion (java.lang.OutOfMemoryError's message), not its
// other OutOfMemoryErrors (Metaspace, unable to create native thread), which a heap flag does
// not fix.
var reJVMHeap = regexp.MustCompile(`OutOfMemoryError: (?:Java heap space|GC overhead limit exceeded)`)

// reRAMPercentage matches the JVM's flags that size the heap from the container's memory.
var reRAMPercentage = regexp.MustCompile(`-XX:(?:MaxRAMPercentage|MaxRAMFraction)=\S+`)

// jvmHeap names what sized the heap the JVM ran out of: an -Xmx flag, else a MaxRAMPercentage
// flag, else the memory limit the JVM takes a quarter of by default.
func (r *ranker) jvmHeap(s *Signal) {
	for _, c := range r.containersOf(s) {
		said := "the JVM ran out of heap (" + reJVMHeap.FindString(s.Text) + ")"
		found := false
		for _, f := range valuedFields(c) {
			for _, m := range reHeapFlag.FindAllStringSubmatch(f.value, -1) {
				if m[1] != "x" {
					continue
				}
				r.suspectTemplate(RuleJVMHeap, f.path, scoreCertain, said+": -Xmx"+m[2]+m[3]+" caps it")
				found = true
			}
			if flag := reRAMPercentage.FindString(f.value); flag != "" {
				r.suspectTemplate(RuleJVMHeap, f.path, scoreCertain, said+": "+flag+" sizes it from the memory limit")
				found = true
			}
		}
		if found {
			continue
		}
		limitPath := fieldpath.ResourcePath(c.path.Child("resources", "limits"), "memory")
		limit := c.c.Resources.Limits.Memory()
		if limit.IsZero() {
			r.suspectTemplate(RuleJVMHeap, limitPath, scoreLikely, said+": no -Xmx and no memory limit, so the heap is a quarter of the node's memory")
			continue
		}
		r.suspectTemplate(RuleJVMHeap, limitPath, scoreLikely,
			fmt.Sprintf("%s: no -Xmx, so the heap is a quarter of the memory limit %s, about %s", said, limit, resource.NewQuantity(limit.Value()/4, resource.BinarySI)))
	}
}

// valued is a template field holding a string, for the rules that read flags wherever they are.
type valued struct {
	path  *field.Path
	value string
}

// valuedFields are a container's command, args and env values, where JVM flags are passed
// (JAVA_OPTS, JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS).
func valuedFields(c containerRef) []valued {
	var out []valued
	for i, a := range c.c.Command {
		out = append(out, valued{c.path.Child("command").Index(i), a})
	}
	for i, a := range c.c.Args {
		out = append(out, valued{c.path.Child("args").Index(i), a})
	}
	for i, e := range c.c.Env {
		out = append(out, valued{c.path.Child("env").Index(i).Child("value"), e.Value})
	}
	return out
}

// reCredentials matches servers refusing a login, capturing the user when the message names it:
// PostgreSQL's `password authentication failed for user "app"`, MySQL's `Access denied for user
// 'app'@'10.244.1.7' (using password: YES)`, Redis's `WRONGPASS invalid username-password pair`,
// MongoDB's `Authentication failed.`, RabbitMQ's `ACCESS_REFUSED - Login was refused`. A
// logfmt or JSON line escapes the quotes around PostgreSQL's user; a client that words the
// server's verdict its own way ("did not succeed") still names the password authentication.
var reCredentials = regexp.MustCompile(`password authentication (?:[a-z]+ ){1,3}for user \\?"([^"\\]+)\\?"|Access denied for user '([^']+)'@\S+ \(using password: YES\)|WRONGPASS invalid username-password pair|\bAuthentication failed\b|ACCESS_REFUSED - Login was refused`)

// mayRejectCredentials is the literal part of reCredentials, tested first: the expression on
// every failing line of every broken workload was a third of the engine's time.
func mayRejectCredentials(text string) bool {
	return strings.Contains(text, "password authentication") || strings.Contains(text, "Authentication failed") ||
		strings.Contains(text, "Access denied for user") || strings.Contains(text, "WRONGPASS") || strings.Contains(text, "ACCESS_REFUSED")
}

// reSecretName picks the variables that carry a secret by their names.
var reSecretName = regexp.MustCompile(`(?i)(?:PASSWORD|PASSWD|_PASS$|SECRET|TOKEN|CREDENTIAL|API_?KEY|AUTH)`)

// credentialsRejected suspects the variable that passes the password or token, and the one
// holding the user the server names.
func (r *ranker) credentialsRejected(s *Signal, said, user string) {
	// The phrase the server wrote, not the line's head: a client library puts the host, the
	// database and its own words before it.
	said = "the server rejects the container's credentials (" + strings.ReplaceAll(said, `\"`, `"`) + ")"
	for _, c := range r.containersOf(s) {
		for j, e := range c.c.Env {
			p := c.path.Child("env").Index(j)
			switch {
			case reSecretName.MatchString(e.Name) && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
				ref := e.ValueFrom.SecretKeyRef
				r.suspectTemplate(RuleCredentialsRejected, p.Child("valueFrom", "secretKeyRef", "key"), scoreLikely,
					said+"; "+e.Name+" comes from key "+ref.Key+" of Secret "+ref.Name+" (its data is not read)")
			case reSecretName.MatchString(e.Name) && e.Value != "":
				r.suspectTemplate(RuleCredentialsRejected, p.Child("value"), scoreLikely, said+"; "+e.Name+" is set in the spec itself")
			case user != "" && e.Value == user:
				r.suspectTemplate(RuleCredentialsRejected, p.Child("value"), scorePossible, said+"; "+e.Name+" names that user")
			}
		}
		// A Secret whose every key becomes a variable holds the credentials whole, under
		// names the spec does not show.
		for j, ef := range c.c.EnvFrom {
			if ef.SecretRef != nil {
				r.suspectTemplate(RuleCredentialsRejected, c.path.Child("envFrom").Index(j).Child("secretRef"), scoreLikely,
					said+"; every key of Secret "+ef.SecretRef.Name+" becomes a variable of container "+c.c.Name+" (its data is not read)")
			}
		}
	}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

package diagnose

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// readOnly sets the container's readOnlyRootFilesystem.
func readOnly(w *workload) {
	yes := true
	w.Template.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{ReadOnlyRootFilesystem: &yes}
}

// EROFS as programs print it: Go's os.PathError, nginx's mkdir() with errno 30, Python's OSError,
// Node's EROFS error, Java's FileSystemException.
func TestRankSuspectsReadOnlyFilesystem(t *testing.T) {
	const ro = c0 + ".securityContext.readOnlyRootFilesystem"
	runSuspectCases(t, []suspectCase{
		{
			name: "Go, no volume where it writes: readOnlyRootFilesystem",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				readOnly(w)
				stTerminated(w, "Error", 1, "")
				stLog(w, "2026/11/24 10:20:35 open /var/lib/api/cache.db: read-only file system")
			},
			rule: rules.RuleReadOnlyFS, path: ro,
		},
		{
			name: "nginx with an emptyDir elsewhere: still the root filesystem",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				readOnly(w)
				w.Template.Spec.Volumes = []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
				w.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}}
				stTerminated(w, "Error", 1, "")
				stLog(w, `2026/11/24 10:20:35 [emerg] 1#1: mkdir() "/var/cache/nginx/client_temp" failed (30: Read-only file system)`,
					`nginx: [emerg] mkdir() "/var/cache/nginx/client_temp" failed (30: Read-only file system)`)
			},
			rule: rules.RuleReadOnlyFS, path: ro,
			absent: []string{c0 + ".volumeMounts[0].mountPath"},
		},
		{
			name: "Python under a read-only mount: the mount, not the root filesystem",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				readOnly(w)
				w.Template.Spec.Volumes = []corev1.Volume{{Name: "logs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
				w.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "logs", MountPath: "/app/logs", ReadOnly: true}}
				stTerminated(w, "Error", 1, "")
				stLog(w, `Traceback (most recent call last):`, `OSError: [Errno 30] Read-only file system: '/app/logs/api.log'`)
			},
			rule: rules.RuleReadOnlyFS, path: c0 + ".volumeMounts[0].readOnly",
			absent: []string{ro},
		},
		{
			name: "Node writing into a ConfigMap volume, always read-only",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "api-config"},
				}}}}
				w.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "config", MountPath: "/app/config"}}
				stTerminated(w, "Error", 1, "")
				stLog(w, `Error: EROFS: read-only file system, open '/app/config/settings.json'`)
			},
			rule: rules.RuleReadOnlyFS, path: c0 + ".volumeMounts[0].mountPath",
		},
		{
			name: "a writable root filesystem is no suspect of this rule",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				stTerminated(w, "Error", 1, "")
				stLog(w, `java.nio.file.FileSystemException: /tmp/tomcat.8080.123: Read-only file system`)
			},
			absent: []string{ro}, anyTop: true,
		},
	})
}

// runAs sets the pod's user.
func runAs(w *workload, uid int64) {
	w.Template.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: &uid}
}

// claimAt mounts a PersistentVolumeClaim at path in the first container.
func claimAt(w *workload, path string) {
	w.Template.Spec.Volumes = append(w.Template.Spec.Volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "api-data"},
	}})
	w.Template.Spec.Containers[0].VolumeMounts = append(w.Template.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "data", MountPath: path})
}

// EACCES on a claim's files, as Go's os.PathError and PostgreSQL's initdb print it.
func TestRankSuspectsVolumePermission(t *testing.T) {
	const fsGroup = "spec.template.spec.securityContext.fsGroup"
	runSuspectCases(t, []suspectCase{
		{
			name: "a non-root user writing a claim without fsGroup",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				runAs(w, 1000)
				claimAt(w, "/data")
				stTerminated(w, "Error", 1, "")
				stLog(w, `level=fatal msg="open database" error="open /data/app.db: permission denied"`)
			},
			rule: rules.RuleVolumePermission, path: fsGroup,
			absent: []string{c0 + ".volumeMounts[0].mountPath"},
		},
		{
			name: "initdb under runAsNonRoot on the container",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				yes := true
				w.Template.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsNonRoot: &yes}
				claimAt(w, "/var/lib/postgresql/data")
				stTerminated(w, "Error", 1, "")
				stLog(w, `initdb: error: could not change permissions of directory "/var/lib/postgresql/data/pgdata": Operation not permitted`,
					`mkdir: cannot create directory '/var/lib/postgresql/data/pgdata': Permission denied`)
			},
			rule: rules.RuleVolumePermission, path: fsGroup,
		},
		{
			name: "fsGroup set: not this rule's",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				uid, gid := int64(1000), int64(2000)
				w.Template.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: &uid, FSGroup: &gid}
				claimAt(w, "/data")
				stTerminated(w, "Error", 1, "")
				stLog(w, `open /data/app.db: permission denied`)
			},
			absent: []string{fsGroup}, anyTop: true,
		},
		{
			name: "root, or a path on no claim: not this rule's",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				claimAt(w, "/data")
				stTerminated(w, "Error", 1, "")
				stLog(w, `open /data/app.db: permission denied`, `open /etc/shadow: permission denied`)
			},
			absent: []string{fsGroup}, anyTop: true,
		},
	})
}

// java.lang.OutOfMemoryError as the JVM prints it when the heap, not the container, runs out:
// the container exits on its own (no OOMKilled).
func TestRankSuspectsJVMHeap(t *testing.T) {
	const limit = c0 + ".resources.limits.memory"
	oom := []string{`Exception in thread "main" java.lang.OutOfMemoryError: Java heap space`, "\tat com.shop.Catalog.load(Catalog.java:42)"}
	runSuspectCases(t, []suspectCase{
		{
			name: "-Xmx in JAVA_OPTS caps the heap",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "JAVA_OPTS", Value: "-Xms32m -Xmx64m -XX:+UseG1GC"}}
				w.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
				stTerminated(w, "Error", 1, "")
				stLog(w, oom...)
			},
			rule: rules.RuleJVMHeap, path: c0 + ".env[0].value",
			absent: []string{limit},
		},
		{
			name: "MaxRAMPercentage in args",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Args = []string{"-XX:MaxRAMPercentage=10.0", "-jar", "/app/catalog.jar"}
				stTerminated(w, "Error", 3, "")
				stLog(w, `Exception in thread "main" java.lang.OutOfMemoryError: GC overhead limit exceeded`)
			},
			rule: rules.RuleJVMHeap, path: c0 + ".args[0]",
		},
		{
			name: "no flag: the limit the JVM sizes its heap from",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}
				stTerminated(w, "Error", 1, "")
				stLog(w, oom...)
			},
			rule: rules.RuleJVMHeap, path: limit,
		},
		{
			name: "Metaspace is no heap flag's",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "JAVA_OPTS", Value: "-Xmx64m"}}
				stTerminated(w, "Error", 1, "")
				stLog(w, `Exception in thread "main" java.lang.OutOfMemoryError: Metaspace`)
			},
			absent: []string{c0 + ".env[0].value"}, anyTop: true,
		},
	})
}

// Servers refusing a login, each as its client library prints it.
func TestRankSuspectsCredentialsRejected(t *testing.T) {
	secretEnv := func(w *workload) {
		w.Template.Spec.Containers[0].Env = []corev1.EnvVar{
			{Name: "DB_HOST", Value: "orders-db.shop.svc"},
			{Name: "DB_USER", Value: "orders"},
			{Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "orders-db"}, Key: "password",
			}}},
		}
	}
	const key = c0 + ".env[2].valueFrom.secretKeyRef.key"
	runSuspectCases(t, []suspectCase{
		{
			name: "PostgreSQL through pgx: the password's Secret key, then the user",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				secretEnv(w)
				stTerminated(w, "Error", 1, "")
				stLog(w, `level=fatal msg="connect to database" error="failed to connect to `+"`"+`user=orders database=orders`+"`"+`: 10.96.41.7:5432 (orders-db.shop.svc): failed SASL auth: FATAL: password authentication failed for user \"orders\" (SQLSTATE 28P01)"`)
			},
			rule: rules.RuleCredentialsRejected, path: key,
			below: []string{c0 + ".env[1].value"},
		},
		{
			name: "MySQL",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				secretEnv(w)
				stTerminated(w, "Error", 1, "")
				stLog(w, `[mysql] 2026/11/24 10:20:35 connection.go:49: Error 1045 (28000): Access denied for user 'orders'@'10.244.1.7' (using password: YES)`)
			},
			rule: rules.RuleCredentialsRejected, path: key,
			below: []string{c0 + ".env[1].value"},
		},
		{
			name: "Redis with the password in the spec itself",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "REDIS_ADDR", Value: "cache:6379"}, {Name: "REDIS_PASSWORD", Value: "hunter2"}}
				stTerminated(w, "Error", 1, "")
				stLog(w, `level=error msg="redis ping" err="WRONGPASS invalid username-password pair or user is disabled."`)
			},
			rule: rules.RuleCredentialsRejected, path: c0 + ".env[1].value",
			absent: []string{c0 + ".env[0].value"},
		},
	})
}

// The reasons say what the rules read: the user and path, the heap's size, the Secret.
func TestAppRuleReasons(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(w *workload)
		want  string
	}{
		{"volume", func(w *workload) {
			runAs(w, 1000)
			claimAt(w, "/data")
			stLog(w, `open /data/app.db: permission denied`)
		}, "container api runs as 1000 and may not write /data/app.db on volume data (PersistentVolumeClaim api-data), mounted at /data: permission denied; the pod sets no fsGroup"},
		{"heap", func(w *workload) {
			w.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}
			stLog(w, `java.lang.OutOfMemoryError: Java heap space`)
		}, "the JVM ran out of heap (OutOfMemoryError: Java heap space): no -Xmx, so the heap is a quarter of the memory limit 256Mi, about 64Mi"},
		{"secret", func(w *workload) {
			w.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "orders-db"}, Key: "password",
			}}}}
			stLog(w, `level=fatal msg="connect" error="failed to connect to `+"`"+`user=orders database=orders`+"`"+`: 10.96.41.7:5432 (orders-db.shop.svc): failed SASL auth: FATAL: password authentication failed for user \"orders\" (SQLSTATE 28P01)"`)
		}, `the server rejects the container's credentials (password authentication failed for user "orders"); DB_PASSWORD comes from key password of Secret orders-db (its data is not read)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := stWorkload(nil)
			w.Shape = ShapeStartsAndDies
			stTerminated(w, "Error", 1, "")
			tt.setup(w)
			got := rankSuspects(w)
			if len(got) == 0 || !strings.Contains(got[0].Reason, tt.want) {
				t.Fatalf("suspects %+v\nwant the first's reason to hold %q", got, tt.want)
			}
		})
	}
}

package diagnose

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// onNode puts the workload's copy on a node of the given architecture, in the snapshot.
func onNode(w *workload, arch string) {
	stPod(w).Spec.NodeName = "worker-" + arch
	w.Snap = &snapshot.Snapshot{Nodes: []*corev1.Node{{
		ObjectMeta: metav1.ObjectMeta{Name: "worker-" + arch},
		Status:     corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{Architecture: arch, OperatingSystem: "linux"}},
	}}}
}

// runc 1.3's init execs the entrypoint once the container started; ENOEXEC comes back as the
// os.PathError `exec PATH: exec format error` on the container's stderr, and runc init exits
// 255 (libcontainer/init_linux.go, system.Exec). Before runc 1.1 the line was
// `standard_init_linux.go:228: exec user process caused: exec format error`.
func TestRankSuspectsExecFormat(t *testing.T) {
	runSuspectCases(t, []suspectCase{
		{
			name: "the log of runc's init: the image",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				onNode(w, "arm64")
				stTerminated(w, "Error", 255, "")
				stLog(w, "exec /usr/local/bin/api: exec format error")
			},
			rule: RuleExecFormat, path: image,
		},
		{
			name: "the older runc's line, as a termination message falling back to the log",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				stTerminated(w, "Error", 1, "standard_init_linux.go:228: exec user process caused: exec format error\n")
			},
			rule: RuleExecFormat, path: image,
		},
		{
			name: "a command set in the spec is still the image's to run: not a missing executable",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Command = []string{"/usr/local/bin/api", "serve"}
				stTerminated(w, "Error", 255, "")
				stLog(w, "exec /usr/local/bin/api: exec format error")
			},
			rule: RuleExecFormat, path: image,
			absent: []string{c0 + ".command[0]"},
		},
		{
			name: "a changed image ranks above the other changes",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Image = "registry.internal/shop/api:2.5.0"
				stChanged(w, image, "registry.internal/shop/api:2.4.0", nil)
				w.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "debug"}}
				stChanged(w, c0+".env[0].value", "info", nil)
				stTerminated(w, "Error", 255, "")
				stLog(w, "exec /usr/local/bin/api: exec format error")
			},
			rule: RuleExecFormat, path: image,
			below: []string{c0 + ".env[0].value"},
		},
	})
}

// The reason says which executable and, when the snapshot has the node, its architecture.
func TestExecFormatReasonNamesTheNodesArchitecture(t *testing.T) {
	for _, tt := range []struct {
		name, arch, want string
	}{
		{"node known", "arm64", "the kernel cannot run /usr/local/bin/api (exec format error): it is built for another CPU architecture than the node's arm64, or is a script without a #! line; image registry.internal/shop/api:1.4.0"},
		{"node not in the snapshot", "", "the kernel cannot run /usr/local/bin/api (exec format error): it is built for another CPU architecture, or is a script without a #! line; image registry.internal/shop/api:1.4.0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := stWorkload(nil)
			w.Shape = ShapeStartsAndDies
			w.Template.Spec.Containers[0].Image = "registry.internal/shop/api:1.4.0"
			if tt.arch != "" {
				onNode(w, tt.arch)
			}
			stTerminated(w, "Error", 255, "")
			stLog(w, "exec /usr/local/bin/api: exec format error")
			got := rankSuspects(w)
			if len(got) == 0 || got[0].Reason != tt.want {
				t.Fatalf("suspects %+v\nwant the first's reason %q", got, tt.want)
			}
			if !strings.Contains(fix(w, w.Shape, CauseSpec, &got[0]), "nodeSelector kubernetes.io/arch") {
				t.Errorf("fix %q does not say how to keep the pods on nodes of the image's architecture", fix(w, w.Shape, CauseSpec, &got[0]))
			}
		})
	}
}

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
			rule: RuleReadOnlyFS, path: ro,
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
			rule: RuleReadOnlyFS, path: ro,
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
			rule: RuleReadOnlyFS, path: c0 + ".volumeMounts[0].readOnly",
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
			rule: RuleReadOnlyFS, path: c0 + ".volumeMounts[0].mountPath",
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

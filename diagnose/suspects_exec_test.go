package diagnose

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
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
			rule: rules.RuleExecFormat, path: image,
		},
		{
			name: "the older runc's line, as a termination message falling back to the log",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				stTerminated(w, "Error", 1, "standard_init_linux.go:228: exec user process caused: exec format error\n")
			},
			rule: rules.RuleExecFormat, path: image,
		},
		{
			name: "a command set in the spec is still the image's to run: not a missing executable",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Command = []string{"/usr/local/bin/api", "serve"}
				stTerminated(w, "Error", 255, "")
				stLog(w, "exec /usr/local/bin/api: exec format error")
			},
			rule: rules.RuleExecFormat, path: image,
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
			rule: rules.RuleExecFormat, path: image,
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

// A container that exits 0 in a Deployment: CrashLoopBackOff after Completed, with no message to
// read. The command that runs to completion is the suspect, else the args the image's
// entrypoint is given, else the image; a Job's container is meant to complete.
func TestProcessEnds(t *testing.T) {
	for _, tt := range []struct {
		name         string
		mutate       func(*corev1.Container)
		path, reason string
	}{
		{
			"a one-shot command", func(c *corev1.Container) { c.Command = []string{"/bin/sh", "-c", "echo migrating; ./migrate"} },
			"spec.template.spec.containers[0].command", "its command /bin/sh -c echo migrating; ./migrate runs to completion",
		},
		{
			"args that print and return", func(c *corev1.Container) { c.Args = []string{"--version"} },
			"spec.template.spec.containers[0].args", "given args --version, runs to completion",
		},
		{"the image's own entrypoint", nil, "spec.template.spec.containers[0].image", "the image's own entrypoint runs to completion"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			d := c.deployment("web", 2, 1, "NewReplicaSetAvailable", 2*time.Hour)
			if tt.mutate != nil {
				tt.mutate(&d.Spec.Template.Spec.Containers[0])
			}
			rs := c.replicaSet(d, 1, 2, 2*time.Hour, nil)
			c.pod(rs, "a", 30*time.Minute, crashLooping("Completed", 0, 9))
			c.pod(rs, "b", 30*time.Minute, crashLooping("Completed", 0, 9))
			got := c.diagnoseOne("web")
			if len(got.Suspects) == 0 || got.Suspects[0].Rule != rules.RuleProcessEnds || got.Suspects[0].Path.String() != tt.path ||
				!strings.Contains(got.Suspects[0].Reason, tt.reason) || !strings.Contains(got.Suspects[0].Reason, "on 2 copies") {
				t.Fatalf("suspects %+v\nwant process-ends at %s saying %q", got.Suspects, tt.path, tt.reason)
			}
		})
	}
	// An exit code other than 0 is a failure with its own rules, and says nothing of this one.
	c := newCluster()
	d := c.deployment("web", 2, 1, "NewReplicaSetAvailable", 2*time.Hour)
	rs := c.replicaSet(d, 1, 2, 2*time.Hour, nil)
	c.pod(rs, "a", 30*time.Minute, crashLooping("Error", 1, 9))
	for _, s := range c.diagnoseOne("web").Suspects {
		if s.Rule == rules.RuleProcessEnds {
			t.Errorf("process-ends on a copy that exits 1: %+v", s)
		}
	}
}

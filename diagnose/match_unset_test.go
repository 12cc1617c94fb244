package diagnose

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// TestRankSuspectsUnsetVariable: a variable the program says it lacks, which no env entry of its
// container sets, implicates the env, the envFrom that may hold it, or the entry the failing
// revision removed.
func TestRankSuspectsUnsetVariable(t *testing.T) {
	runSuspectCases(t, []suspectCase{
		{
			name: "not set anywhere: the container's env",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}}
				stTerminated(w, "Error", 1, "")
				stLog(w, `level=info msg="starting api" version=2.4.0`, `level=error msg="required environment variable DATABASE_URL is not set"`)
			},
			rule: rules.RuleEnvVarUnset, path: c0 + ".env",
			absent: []string{c0 + ".env[0].value", c0 + ".envFrom"},
		},
		{
			name: "a container without env, the message in its termination state",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				stTerminated(w, "Error", 1, "panic: API_TOKEN must be set")
			},
			rule: rules.RuleEnvVarUnset, path: c0 + ".env",
		},
		{
			name: "the container reads a ConfigMap whole: envFrom, which may lack it",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "api-config"},
				}}}
				stTerminated(w, "Error", 1, "")
				stLog(w, `Traceback (most recent call last):`, `  File "/app/main.py", line 7, in <module>`,
					`    DSN = os.environ["DATABASE_URL"]`, `KeyError: 'DATABASE_URL'`)
			},
			rule: rules.RuleEnvVarUnset, path: c0 + ".envFrom",
			absent: []string{c0 + ".env"},
		},
		{
			name: "the failing revision removed the entry: it ranks first",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}}
				stChanged(w, c0+".env[1]", `{"name":"DATABASE_URL","value":"postgres://api@db.shop.svc:5432/api"}`, func(t *corev1.PodTemplateSpec) {
					t.Spec.Containers[0].Env = append(t.Spec.Containers[0].Env, corev1.EnvVar{Name: "DATABASE_URL", Value: "postgres://api@db.shop.svc:5432/api"})
				})
				w.Template.Spec.Containers[0].Image = "registry.internal/shop/api:2.4.0"
				stChanged(w, image, "registry.internal/shop/api:2.3.9", nil)
				stTerminated(w, "Error", 1, "")
				stLog(w, `2026/11/24 10:20:35 DATABASE_URL is not set`)
			},
			rule: rules.RuleEnvVarUnset, path: c0 + ".env[1]",
			below:  []string{image},
			absent: []string{c0 + ".env"},
		},
		{
			name: "a warning about an optional variable is not the failure",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}
				stTerminated(w, "OOMKilled", 137, "")
				stLog(w, `level=warn msg="SENTRY_DSN not set, error reporting disabled"`, `level=info msg="decoding batch" size=8064x6048`)
			},
			rule: rules.RuleMemoryLimit, path: c0 + ".resources.limits.memory",
			absent: []string{c0 + ".env"},
		},
		{
			name: "a variable its env sets is the general rule's, not this one's",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "DATABASE_URL", Value: ""}}
				stTerminated(w, "Error", 1, "")
				stLog(w, `level=error msg="required environment variable DATABASE_URL is not set"`)
			},
			rule: rules.RuleNamedInFailure, path: c0 + ".env[0].value",
			absent: []string{c0 + ".env"},
		},
		{
			name: "a line that names a variable without calling it unset implicates nothing",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				stTerminated(w, "Error", 1, "")
				stLog(w, `level=error msg="missing permissions for S3_BUCKET: AccessDenied"`)
			},
			absent: []string{c0 + ".env", c0 + ".envFrom"}, anyTop: true,
		},
		{
			name: "the container that logged it, not the sidecar that sets it",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers = append(w.Template.Spec.Containers, corev1.Container{
					Name: "proxy", Image: "registry.internal/shop/proxy:1.0",
					Env: []corev1.EnvVar{{Name: "DATABASE_URL", Value: "postgres://api@db.shop.svc:5432/api"}},
				})
				stTerminated(w, "Error", 1, "")
				stLog(w, `fatal: DATABASE_URL is not set`)
			},
			rule: rules.RuleEnvVarUnset, path: c0 + ".env",
			absent: []string{"spec.template.spec.containers[1].env", "spec.template.spec.containers[1].env[0].value"},
		},
		{
			name: "a second container's log names its own env",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers = append(w.Template.Spec.Containers, corev1.Container{
					Name: "worker", Image: "registry.internal/shop/worker:1.0",
					Env: []corev1.EnvVar{{Name: "QUEUE", Value: "jobs"}},
				})
				stTerminated(w, "Error", 1, "")
				w.Logs = append(w.Logs, &snapshot.ContainerLog{
					Namespace: stNS, Pod: stPod(w).Name, Container: "worker",
					Lines: []string{`Error: environment variable "REDIS_URL" not found`},
				})
			},
			rule: rules.RuleEnvVarUnset, path: "spec.template.spec.containers[1].env",
			absent: []string{c0 + ".env"},
		},
	})
}

// The suspect says which variable, and the fix and reason name it; the confidence follows
// what the engine can see: high where the template alone decides, medium behind envFrom.
func TestUnsetVariableSuspectAndFix(t *testing.T) {
	for _, tt := range []struct {
		name       string
		envFrom    bool
		shape      Shape
		confidence Confidence
		fix        string
	}{
		{"env", false, ShapeStartsAndDies, ConfidenceHigh, "add variable DATABASE_URL to Deployment/api spec.template.spec.containers[0].env"},
		{"envFrom", true, ShapeStartsAndDies, ConfidenceMedium, "add variable DATABASE_URL to the ConfigMap or Secret that Deployment/api spec.template.spec.containers[0].envFrom reads, or to the container's env"},
		// The program runs on without it: it may have meant something else.
		{"running", false, ShapeLiveButIdle, ConfidenceMedium, "add variable DATABASE_URL to Deployment/api spec.template.spec.containers[0].env"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := stWorkload(nil)
			w.Shape = tt.shape
			w.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}}
			if tt.envFrom {
				w.Template.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{
					{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "api-config"}}},
					{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "api-env"}}},
				}
			}
			stTerminated(w, "Error", 1, "")
			stLog(w, `level=error msg="required environment variable DATABASE_URL is not set"`)
			got := rankSuspects(w)
			if len(got) == 0 || got[0].Rule != rules.RuleEnvVarUnset {
				t.Fatalf("suspects %+v, want env-var-unset first", got)
			}
			s := got[0]
			if s.Variable != "DATABASE_URL" || s.Confidence != tt.confidence {
				t.Errorf("variable %q confidence %s, want DATABASE_URL %s", s.Variable, s.Confidence, tt.confidence)
			}
			wantReason := "container api's env does not set it (it sets LOG_LEVEL)"
			if tt.envFrom {
				wantReason = "it may be missing from ConfigMap api-config and Secret api-env (their data is not read)"
			}
			if !strings.HasPrefix(s.Reason, "the failure says variable DATABASE_URL is not set") || !strings.Contains(s.Reason, wantReason) {
				t.Errorf("reason %q, want the variable and %q", s.Reason, wantReason)
			}
			if f := fix(w, w.Shape, CauseSpec, &s); f != tt.fix {
				t.Errorf("fix %q, want %q", f, tt.fix)
			}
		})
	}
}

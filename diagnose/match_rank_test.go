package diagnose

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// TestRankSuspectsGeneralRule: the endpoints, hosts, ports, paths, flags and variables that
// failures name lead to the template fields that hold them.
func TestRankSuspectsGeneralRule(t *testing.T) {
	tests := []suspectCase{
		{
			name: "general rule: a port the failure names, host resolved to an IP",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Env = []corev1.EnvVar{
					{Name: "CACHE_ADDR", Value: "api-cache.shop.svc:6379"},
					{Name: "DATABASE_URL", Value: "postgres://orders-db.shop.svc:5432/orders?sslmode=disable"},
				}
				stTerminated(w, "Error", 1, "")
				stLog(w, `{"level":"info","msg":"connecting","cache":"api-cache.shop.svc:6379"}`,
					`{"level":"error","msg":"database unavailable","error":"dial tcp 10.96.7.21:5432: connect: connection refused"}`)
			},
			rule: rules.RuleNamedInFailure, path: c0 + ".env[1].value",
			absent: []string{c0 + ".env[0].value"},
		},
		{
			name: "general rule: a host that does not resolve",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Args = []string{"--upstream", "https://payments.partner.example/v1/charge"}
				stTerminated(w, "Error", 1, "")
				stLog(w, `time=2026-11-24T11:58:02.114Z level=ERROR msg="request failed" err="Post \"https://payments.partner.example/v1/charge\": dial tcp: lookup payments.partner.example on 10.96.0.10:53: no such host"`)
			},
			rule: rules.RuleNamedInFailure, path: c0 + ".args[1]",
		},
		{
			name: "general rule: a file under a mounted path",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "config", MountPath: "/etc/api"}}
				stTerminated(w, "Error", 1, "")
				stLog(w, "Error: open /etc/api/config.yaml: no such file or directory")
			},
			rule: rules.RuleNamedInFailure, path: c0 + ".volumeMounts[0].mountPath",
		},
		{
			name: "general rule: the pod's own address names nothing",
			setup: func(w *workload) {
				w.Shape = ShapeLiveButIdle
				w.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "LISTEN", Value: "0.0.0.0:8080"}}
				stLog(w, `2026/11/24 10:20:40 [error] 34#34: *1 connect() failed (111: Connection refused) while connecting to upstream, client: 10.244.1.1, server: localhost, request: "GET /ready HTTP/1.1", host: "10.244.1.7:8080"`)
			},
			absent: []string{c0 + ".env[0].value"}, anyTop: true,
		},
		{
			name: "changed field the evidence names ranks above an unchanged one",
			setup: func(w *workload) {
				w.Shape = ShapeLiveButIdle
				w.Template.Spec.Containers[0].Env = []corev1.EnvVar{
					{Name: "PRIMARY", Value: "intake-a.internal:9443"},
					{Name: "SECONDARY", Value: "intake-b.internal:9443"},
				}
				stChanged(w, c0+".env[1].value", "intake-b.internal:8443", nil)
				stLog(w, `{"level":"warn","msg":"upstream dial failed","error":"dial tcp 10.96.14.7:9443: connect: connection refused"}`)
			},
			rule: rules.RuleNamedInFailure, path: c0 + ".env[1].value",
			below: []string{c0 + ".env[0].value"},
		},
		{
			name: "variable from an optional Secret key that the program says is unset",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				optional := true
				w.Template.Spec.Containers[0].Env = []corev1.EnvVar{
					{Name: "ARCHIVE_BUCKET", Value: "telemetry-archive"},
					{Name: "ARCHIVE_S3_SECRET_ACCESS_KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "telemetry-archive-s3"}, Key: "secret-access-key", Optional: &optional,
					}}},
				}
				stChanged(w, c0+".env[1]", "", nil)
				stTerminated(w, "Error", 1, "")
				stLog(w, `{"level":"fatal","ts":"2026-11-24T11:58:02.114Z","msg":"invalid configuration","error":"ARCHIVE_S3_SECRET_ACCESS_KEY is required when ARCHIVE_BUCKET is set"}`)
			},
			rule: rules.RuleNamedInFailure, path: c0 + ".env[1].valueFrom.secretKeyRef.key",
			below: []string{c0 + ".env[0].value"},
		},
		{
			name: "changed flag the program does not define ranks first",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Args = []string{"-config=/etc/api/config.yaml", "-log-format=json", "-listen-adress=:8080"}
				stChanged(w, c0+".args[2]", "", nil)
				stTerminated(w, "Error", 2, "")
				stLog(w, "flag provided but not defined: -listen-adress", "Usage of /usr/local/bin/api:")
			},
			rule: rules.RuleRejectedArgument, path: c0 + ".args[2]",
		},
		{
			name: "a change nothing names is a low suspect",
			setup: func(w *workload) {
				w.Template.Spec.Containers[0].Image = "registry.internal/shop/api:1.5.0"
				stChanged(w, image, "registry.internal/shop/api:1.4.0", nil)
			},
			rule: rules.RuleChangedField, path: image,
		},
	}
	runSuspectCases(t, tests)
}

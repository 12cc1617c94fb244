package diagnose

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// Docker Hub's pull rate limit through containerd 2.1: the resolver's HEAD request gets
// ErrUnexpectedStatus (core/remotes/errors: "unexpected status from %s request to %s: %s"),
// which the kubelet wraps as ever.
func TestRankSuspectsPullRateLimited(t *testing.T) {
	const msg = `Back-off pulling image "docker.io/library/nginx:1.27": ErrImagePull: failed to pull and unpack image "docker.io/library/nginx:1.27": failed to resolve reference "docker.io/library/nginx:1.27": unexpected status from HEAD request to https://registry-1.docker.io/v2/library/nginx/manifests/1.27: 429 Too Many Requests`
	runSuspectCases(t, []suspectCase{
		{
			name: "throttled: credentials first, a mirror after",
			setup: func(w *workload) {
				w.Template.Spec.Containers[0].Image = "docker.io/library/nginx:1.27"
				stWaiting(w, "ImagePullBackOff", msg)
				stPodEvent(w, "Failed", `Failed to pull image "docker.io/library/nginx:1.27": failed to pull and unpack image "docker.io/library/nginx:1.27": failed to resolve reference "docker.io/library/nginx:1.27": unexpected status from HEAD request to https://registry-1.docker.io/v2/library/nginx/manifests/1.27: 429 Too Many Requests`)
			},
			rule: rules.RuleImageRateLimited, path: "spec.template.spec.imagePullSecrets",
			below: []string{image},
		},
	})
}

// A readiness probe that gets no answer in time, as the kubelet's HTTP prober reports it
// (pkg/probe/http: the client's timeout error).
func TestRankSuspectsReadinessTimeout(t *testing.T) {
	const timedOut = `Readiness probe failed: Get "http://10.244.1.7:8080/healthz": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`
	runSuspectCases(t, []suspectCase{
		{
			name: "copies that run and never answer in time",
			setup: func(w *workload) {
				w.Shape = ShapeLiveButIdle
				stPodEvent(w, "Unhealthy", timedOut)
			},
			rule: rules.RuleReadinessTimeout, path: c0 + ".readinessProbe.timeoutSeconds",
		},
		{
			name: "the program's own words rank above the timeout",
			setup: func(w *workload) {
				w.Shape = ShapeLiveButIdle
				w.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "UPSTREAM", Value: "pricing.internal:9443"}}
				stPodEvent(w, "Unhealthy", timedOut)
				stLog(w, `level=error msg="upstream slow" upstream=pricing.internal:9443 err="context deadline exceeded"`)
			},
			rule: rules.RuleNamedInFailure, path: c0 + ".env[0].value",
			below: []string{c0 + ".readinessProbe.timeoutSeconds"},
		},
		{
			name: "copies that die: the liveness rules', not this one's",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				stPodEvent(w, "Unhealthy", timedOut)
			},
			absent: []string{c0 + ".readinessProbe.timeoutSeconds"}, anyTop: true,
		},
	})
}

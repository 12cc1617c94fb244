package diagnose

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// The messages are the kubelet's "%s probe failed: %s" (pkg/kubelet/prober/prober.go) around
// net/http's error from pkg/probe/http/http.go and pkg/probe/grpc/grpc.go's texts, the same in
// v1.31 and v1.37.
func TestProbeProtocol(t *testing.T) {
	grpcPort := func(w *workload) {
		w.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "grpc", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}}
		w.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Port = intstr.FromString("grpc")
		w.Template.Spec.Containers[0].LivenessProbe = nil
	}
	grpcProbe := func(w *workload, port int32) {
		w.Template.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: port}}}
	}
	runSuspectCases(t, []suspectCase{
		{
			name: "an httpGet readiness probe on a gRPC port reads an HTTP/2 SETTINGS frame",
			setup: func(w *workload) {
				w.Shape = ShapeLiveButIdle
				grpcPort(w)
				stPodEvent(w, "Unhealthy", `Readiness probe failed: Get "http://10.244.1.7:9090/healthz": net/http: HTTP/1.x transport connection broken: malformed HTTP response "\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x05\x00\x00@\x00"`)
			},
			rule: rules.RuleProbeProtocol, path: c0 + ".readinessProbe.httpGet",
			absent: []string{c0 + ".readinessProbe.timeoutSeconds", c0 + ".readinessProbe.httpGet.path"},
		},
		{
			name: "an httpGet liveness probe on a TLS port reads a TLS alert",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				stPodEvent(w, "Unhealthy", `Liveness probe failed: Get "http://10.244.1.7:8080/live": net/http: HTTP/1.x transport connection broken: malformed HTTP response "\x15\x03\x01\x00\x02\x02"`)
			},
			rule: rules.RuleProbeScheme, path: c0 + ".livenessProbe.httpGet.scheme",
		},
		{
			name: "a grpc readiness probe on a port declared as http never connects",
			setup: func(w *workload) {
				w.Shape = ShapeLiveButIdle
				grpcProbe(w, 8080)
				stPodEvent(w, "Unhealthy", `Readiness probe failed: timeout: failed to connect service "10.244.1.7:8080" within 1s: context deadline exceeded`)
			},
			rule: rules.RuleProbeProtocol, path: c0 + ".readinessProbe.grpc",
			below: []string{c0 + ".readinessProbe.timeoutSeconds"},
		},
		{
			name: "a grpc probe that cannot connect to a gRPC port is not a protocol mismatch",
			setup: func(w *workload) {
				w.Shape = ShapeLiveButIdle
				grpcPort(w)
				grpcProbe(w, 9090)
				stPodEvent(w, "Unhealthy", `Readiness probe failed: timeout: failed to connect service "10.244.1.7:9090" within 1s: context deadline exceeded`)
			},
			anyTop: true, absent: []string{c0 + ".readinessProbe.grpc"},
		},
	})
}

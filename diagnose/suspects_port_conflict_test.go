package diagnose

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

func TestPortInUse(t *testing.T) {
	sidecar := func(w *workload, port int32) {
		w.Template.Spec.Containers = append(w.Template.Spec.Containers, corev1.Container{
			Name: "exporter", Image: "prom/statsd-exporter:v0.28.0",
			Ports: []corev1.ContainerPort{{Name: "web", ContainerPort: port}},
		})
	}
	runSuspectCases(t, []suspectCase{
		{
			name: "Go's bind failure on a port a sidecar container also declares",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Ports = append(w.Template.Spec.Containers[0].Ports, corev1.ContainerPort{Name: "metrics", ContainerPort: 9102})
				sidecar(w, 9102)
				stTerminated(w, "Error", 1, "")
				stLog(w, `{"time":"2026-11-13T05:17:10.116Z","level":"ERROR","msg":"metrics server failed","addr":":9102","err":"listen tcp :9102: bind: address already in use"}`)
			},
			rule: rules.RulePortInUse, path: c0 + ".ports[1].containerPort",
			below: []string{"spec.template.spec.containers[1].ports[0].containerPort"},
		},
		{
			name: "Spring Boot's port in use, the port an injector annotation hands a sidecar",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Annotations = map[string]string{"dapr.io/enabled": "true", "dapr.io/app-port": "8080", "dapr.io/metrics-port": "9090"}
				w.Template.Spec.Containers[0].Ports = append(w.Template.Spec.Containers[0].Ports, corev1.ContainerPort{Name: "management", ContainerPort: 9090})
				stTerminated(w, "Error", 1, "")
				stLog(w, `2026-11-12T14:47:58.101Z ERROR 1 --- [main] o.s.b.d.LoggingFailureAnalysisReporter   : `,
					`Web server failed to start. Port 9090 was already in use.`)
			},
			rule: rules.RulePortInUse, path: c0 + ".ports[1].containerPort",
			below:  []string{"spec.template.metadata.annotations[dapr.io/metrics-port]"},
			absent: []string{"spec.template.metadata.annotations[dapr.io/app-port]"},
		},
		{
			name: "Node's EADDRINUSE on a port only a sidecar declares",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				sidecar(w, 3000)
				stTerminated(w, "Error", 1, "")
				stLog(w, `Error: listen EADDRINUSE: address already in use :::3000`)
			},
			rule: rules.RulePortInUse, path: "spec.template.spec.containers[1].ports[0].containerPort",
		},
	})
}

package diagnose

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// BenchmarkRankSuspects ranks a 50-copy workload whose copies each log 400 failing lines, the
// bound collectSignals reads.
func BenchmarkRankSuspects(b *testing.B) {
	w := stWorkload(func(t *corev1.PodTemplateSpec) {
		t.Spec.Containers[0].Env = []corev1.EnvVar{
			{Name: "INGEST_ENDPOINT", Value: "telemetry-intake.internal:9443"},
			{Name: "CACHE", Value: "redis://cache.shop.svc:6379/0"},
			{Name: "LOG_LEVEL", Value: "info"},
		}
		t.Spec.Containers[0].Args = []string{"--config=/etc/api/config.yaml", "--listen=:8080"}
	})
	w.Shape = ShapeLiveButIdle
	w.Pods, w.CurrentPods, w.Logs = nil, nil, nil
	for i := range 50 {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("api-6b7d9c5f4-%05d", i), Namespace: stNS},
			Status:     corev1.PodStatus{PodIP: fmt.Sprintf("10.244.%d.%d", i/200, i%200+2)},
		}
		w.Pods = append(w.Pods, p)
		lines := make([]string, 0, 400)
		for j := range 400 {
			lines = append(lines, fmt.Sprintf(`{"level":"warn","ts":"2026-11-24T14:%02d:%02d.036Z","msg":"upstream dial failed, will retry","endpoint":"telemetry-intake.internal:9443","attempt":%d,"error":"dial tcp 10.96.14.7:9443: connect: connection refused"}`, j/60%60, j%60, j))
		}
		w.Logs = append(w.Logs, &snapshot.ContainerLog{Namespace: stNS, Pod: p.Name, Container: "api", Lines: lines})
	}
	w.CurrentPods = w.Pods
	b.ReportAllocs()
	for b.Loop() {
		if got := rankSuspects(w); len(got) == 0 {
			b.Fatal("no suspects")
		}
	}
}

package dump

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

func jsonMarshalPod(t *testing.T, p *corev1.Pod) []byte {
	t.Helper()
	c := p.DeepCopy()
	c.APIVersion, c.Kind = "v1", "Pod"
	data, err := json.MarshalIndent(c, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	return append(data, '\n')
}

// differences names the parts of two snapshots that differ, comparing the exported content.
func differences(a, b *snapshot.Snapshot) []string {
	var out []string
	check := func(name string, x, y any) {
		if !apiequality.Semantic.DeepEqual(x, y) {
			out = append(out, name)
		}
	}
	if !a.ReferenceTime.Equal(b.ReferenceTime) {
		out = append(out, "ReferenceTime")
	}
	check("Namespaces", a.Namespaces, b.Namespaces)
	check("Visibility", a.Visibility, b.Visibility)
	check("Deployments", a.Deployments, b.Deployments)
	check("StatefulSets", a.StatefulSets, b.StatefulSets)
	check("DaemonSets", a.DaemonSets, b.DaemonSets)
	check("ReplicaSets", a.ReplicaSets, b.ReplicaSets)
	check("ControllerRevisions", a.ControllerRevisions, b.ControllerRevisions)
	check("Jobs", a.Jobs, b.Jobs)
	check("CronJobs", a.CronJobs, b.CronJobs)
	check("Pods", a.Pods, b.Pods)
	check("Events", a.Events, b.Events)
	check("Services", a.Services, b.Services)
	check("PersistentVolumeClaims", a.PersistentVolumeClaims, b.PersistentVolumeClaims)
	check("Nodes", a.Nodes, b.Nodes)
	check("ResourceQuotas", a.ResourceQuotas, b.ResourceQuotas)
	check("EndpointSlices", a.EndpointSlices, b.EndpointSlices)
	check("Logs", a.Logs, b.Logs)
	return out
}

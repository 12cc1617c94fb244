package diagnose

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestServicesWithoutSlicesAreOneItem: the Services of a workload that have no EndpointSlice
// in the snapshot are one visibility item naming each of them, however many select it; a
// Service whose slice was read is not among them.
func TestServicesWithoutSlicesAreOneItem(t *testing.T) {
	tests := []struct {
		name        string
		sliced      []string
		unsliced    []string
		wantMessage string
	}{
		{name: "five Services select the workload, none has a slice", unsliced: []string{"web-e", "web-a", "web-c", "web-b", "web-d"},
			wantMessage: "no EndpointSlice of 5 Services (web-a, web-b, web-c, …) in the snapshot; Ready copies were counted as serving"},
		{name: "two Services have slices, two have none", sliced: []string{"web", "web-admin"}, unsliced: []string{"web-metrics", "web-canary"},
			wantMessage: "no EndpointSlice of Services web-canary and web-metrics in the snapshot; Ready copies were counted as serving"},
		{name: "one Service, no slice", unsliced: []string{"web"},
			wantMessage: "no EndpointSlice of Service web in the snapshot; Ready copies were counted as serving"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			d := c.deployment("web", 3, 1, reasonNewRSAvailable, 24*time.Hour)
			rs := c.replicaSet(d, 1, 3, 24*time.Hour, nil)
			eps := map[*corev1.Pod]bool{}
			for _, s := range []string{"a", "b", "c"} {
				eps[c.pod(rs, s, 24*time.Hour, running(true))] = true
			}
			for _, name := range tt.sliced {
				c.endpointSlice(c.service(name, "web"), 8080, eps)
			}
			for _, name := range tt.unsliced {
				c.service(name, "web")
			}
			got := c.diagnoseOne("web")
			var items []Evidence
			for _, e := range got.Evidence {
				if e.Kind == "NoEndpointSlices" {
					items = append(items, e)
				}
			}
			if len(items) != 1 {
				t.Fatalf("%d NoEndpointSlices items, want 1: %v", len(items), evidenceKinds(got))
			}
			e := items[0]
			var want []string
			for _, name := range tt.unsliced {
				want = append(want, "Service/"+name)
			}
			slices.Sort(want)
			if e.Source != SourceVisibility || e.Message != tt.wantMessage || !slices.Equal(e.Objects, want) || int(e.Count) != len(want) {
				t.Errorf("got %s %q objects %v count %d,\nwant visibility %q objects %v count %d",
					e.Source, e.Message, e.Objects, e.Count, tt.wantMessage, want, len(want))
			}
		})
	}
}

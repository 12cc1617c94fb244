package diagnose

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		{
			name: "five Services select the workload, none has a slice", unsliced: []string{"web-e", "web-a", "web-c", "web-b", "web-d"},
			wantMessage: "no EndpointSlice of 5 Services (web-a, web-b, web-c, …) in the snapshot; Ready copies were counted as serving",
		},
		{
			name: "two Services have slices, two have none", sliced: []string{"web", "web-admin"}, unsliced: []string{"web-metrics", "web-canary"},
			wantMessage: "no EndpointSlice of Services web-canary and web-metrics in the snapshot; Ready copies were counted as serving",
		},
		{
			name: "three Services, none has a slice", unsliced: []string{"web-metrics", "web", "web-canary"},
			wantMessage: "no EndpointSlice of Services web, web-canary and web-metrics in the snapshot; Ready copies were counted as serving",
		},
		{
			name: "one Service, no slice", unsliced: []string{"web"},
			wantMessage: "no EndpointSlice of Service web in the snapshot; Ready copies were counted as serving",
		},
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

// TestManyServicesOfOneNamespace: two workloads of one namespace, each selected by twenty
// Services (more than a workload's set of Services keeps in a list), diagnosed one after the
// other by one worker, which keeps its set and the Services' references from one to the
// next: each workload's item names its own Services without a slice, every one once.
func TestManyServicesOfOneNamespace(t *testing.T) {
	c := newCluster()
	pods := map[string]map[*corev1.Pod]bool{}
	for _, app := range []string{"api", "web"} {
		d := c.deployment(app, 3, 1, reasonNewRSAvailable, 24*time.Hour)
		rs := c.replicaSet(d, 1, 3, 24*time.Hour, nil)
		pods[app] = map[*corev1.Pod]bool{}
		for _, s := range []string{"a", "b", "c"} {
			pods[app][c.pod(rs, s, 24*time.Hour, running(true))] = true
		}
	}
	want := map[string][]string{}
	for i := range 20 {
		for _, app := range []string{"web", "api"} {
			name := fmt.Sprintf("%s-%02d", app, 19-i)
			svc := c.service(name, app)
			// Three of api's Services have their slices.
			if app == "api" && i%7 == 0 {
				c.endpointSlice(svc, 8080, pods[app])
				continue
			}
			want[app] = append(want[app], "Service/"+name)
		}
	}
	r := Diagnose(c.s)
	for _, app := range []string{"api", "web"} {
		d := r.Find("Deployment", testNS, app)
		if d == nil {
			t.Fatalf("no diagnosis of %s", app)
		}
		slices.Sort(want[app])
		var items []Evidence
		for _, e := range d.Evidence {
			if e.Kind == "NoEndpointSlices" {
				items = append(items, e)
			}
		}
		if len(items) != 1 {
			t.Fatalf("%s: %d NoEndpointSlices items, want 1: %v", app, len(items), evidenceKinds(d))
		}
		e := items[0]
		wantMessage := fmt.Sprintf("no EndpointSlice of %d Services (%s, %s, %s, …) in the snapshot; Ready copies were counted as serving",
			len(want[app]), want[app][0][len("Service/"):], want[app][1][len("Service/"):], want[app][2][len("Service/"):])
		if e.Message != wantMessage || !slices.Equal(e.Objects, want[app]) || int(e.Count) != len(want[app]) {
			t.Errorf("%s: got %q objects %v count %d,\nwant %q objects %v count %d",
				app, e.Message, e.Objects, e.Count, wantMessage, want[app], len(want[app]))
		}
	}
}

// TestServiceSetsShareTheWorkersMap: the sets of two workloads diagnosed one after the other
// by one worker take its map in turn; the second set, past its list too, takes the Services
// the first took as well.
func TestServiceSetsShareTheWorkersMap(t *testing.T) {
	svcs := func(prefix string) []*corev1.Service {
		var out []*corev1.Service
		for i := range smallUIDs + 4 {
			out = append(out, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%02d", prefix, i)}})
		}
		return out
	}
	room := &textCache{}
	first, second := svcs("a"), svcs("b")
	a := serviceSet{room: room}
	a.add(first...)
	a.add(first[:3]...)
	if len(a.list) != len(first) {
		t.Fatalf("first set: %d Services, want %d", len(a.list), len(first))
	}
	b := serviceSet{room: room}
	b.add(second...)
	b.add(first[:5]...)
	b.add(second[:2]...)
	if want := append(slices.Clone(second), first[:5]...); !slices.Equal(b.list, want) {
		t.Errorf("second set: %d Services %v, want %d", len(b.list), names(b.list), len(want))
	}
}

func names(svcs []*corev1.Service) []string {
	var out []string
	for _, s := range svcs {
		out = append(out, s.Name)
	}
	return out
}

package diagnose

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCountsServiceEndpoints: serving means Ready and, when a Service selects the workload, a
// ready endpoint of it on a port a container exposes.
func TestCountsServiceEndpoints(t *testing.T) {
	tests := []struct {
		name        string
		port        int32
		readyInMesh []bool // per copy: is it a ready endpoint (absent when shorter)
		noSlices    bool
		want        int32
		evidence    string
	}{
		{name: "ready endpoints on the exposed port serve", port: 8080, readyInMesh: []bool{true, true, true}, want: 3},
		{name: "a not-ready endpoint does not serve", port: 8080, readyInMesh: []bool{true, false, true}, want: 2},
		{name: "a Ready pod missing from the slice does not serve", port: 8080, readyInMesh: []bool{true}, want: 1},
		{name: "endpoints on a port no container exposes do not serve", port: 9090, readyInMesh: []bool{true, true, true}, want: 0},
		{name: "without EndpointSlices Ready copies count and the gap is said", noSlices: true, want: 3, evidence: "NoEndpointSlices"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			d := c.deployment("web", 3, 1, reasonNewRSAvailable, 24*time.Hour)
			rs := c.replicaSet(d, 1, 3, 24*time.Hour, nil)
			var pods []*corev1.Pod
			for _, s := range []string{"a", "b", "c"} {
				pods = append(pods, c.pod(rs, s, 24*time.Hour, running(true)))
			}
			svc := c.service("web", "web")
			if !tt.noSlices {
				eps := map[*corev1.Pod]bool{}
				for i, r := range tt.readyInMesh {
					eps[pods[i]] = r
				}
				c.endpointSlice(svc, tt.port, eps)
			}
			got := c.diagnoseOne("web")
			if got.Counts.Serving != tt.want {
				t.Errorf("serving = %d, want %d", got.Counts.Serving, tt.want)
			}
			if got.Counts.Existing != 3 {
				t.Errorf("existing = %d, want 3", got.Counts.Existing)
			}
			if tt.evidence != "" && !hasEvidence(got, tt.evidence) {
				t.Errorf("no %s evidence in %v", tt.evidence, evidenceKinds(got))
			}
		})
	}
}

// TestCountsExcludeFinishedCopies: terminating, evicted and completed pods are not existing
// copies (the controllers do not count them either), but they stay in the copy list.
func TestCountsExcludeFinishedCopies(t *testing.T) {
	c := newCluster()
	d := c.deployment("web", 2, 1, reasonNewRSAvailable, 24*time.Hour)
	rs := c.replicaSet(d, 1, 2, 24*time.Hour, nil)
	c.pod(rs, "a", 24*time.Hour, running(true))
	c.pod(rs, "b", 24*time.Hour, running(true))
	c.pod(rs, "c", 24*time.Hour, func(p *corev1.Pod) {
		running(true)(p)
		p.DeletionTimestamp = agoPtr(10 * time.Second)
	})
	c.pod(rs, "d", 24*time.Hour, func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.Reason = "Evicted"
	})
	got := c.diagnoseOne("web")
	if got.Counts.Existing != 2 || got.Counts.Serving != 2 {
		t.Errorf("counts = %+v, want 2 existing, 2 serving", got.Counts)
	}
	if len(got.Detail.Copies()) != 4 {
		t.Errorf("copy list has %d entries, want 4", len(got.Detail.Copies()))
	}
	if got.YoungestCopySeconds == nil || *got.YoungestCopySeconds != int64(24*time.Hour/time.Second) {
		t.Errorf("youngest = %v, want %d", got.YoungestCopySeconds, int64(24*time.Hour/time.Second))
	}
}

// TestServiceOfAnotherComponent: a Service that shares the workload's app.kubernetes.io/name but
// serves another component's pods is not meant for this workload, so its Ready copies serve.
func TestServiceOfAnotherComponent(t *testing.T) {
	c := newCluster()
	d := c.deployment("cache-replica", 2, 1, reasonNewRSAvailable, 24*time.Hour)
	d.Spec.Template.Labels["app.kubernetes.io/name"] = "cache"
	rs := c.replicaSet(d, 1, 2, 24*time.Hour, nil)
	c.pod(rs, "a", 24*time.Hour, running(true))
	c.pod(rs, "b", 24*time.Hour, running(true))

	primary := c.deployment("cache-primary", 1, 1, reasonNewRSAvailable, 24*time.Hour)
	prs := c.replicaSet(primary, 1, 1, 24*time.Hour, nil)
	pp := c.pod(prs, "a", 24*time.Hour, running(true))
	svc := c.service("cache", "cache-primary")
	svc.Labels = map[string]string{"app.kubernetes.io/name": "cache"}
	c.endpointSlice(svc, 8080, map[*corev1.Pod]bool{pp: true})

	got := c.diagnoseOne("cache-replica")
	if got.Shape != ShapeHealthy || got.Counts.Serving != 2 {
		t.Errorf("shape %s serving %d, want healthy with 2 serving", got.Shape, got.Counts.Serving)
	}
}

// TestEndpointsFindTheirCopies: an endpoint names its copy by UID, else by name (a slice
// written without UIDs, a pod read without one), in a workload of a few copies (scanned) and
// of many (looked up); only the copies named serve, and the copy list says which.
func TestEndpointsFindTheirCopies(t *testing.T) {
	for _, n := range []int{3, 3 * smallUIDs} {
		c := newCluster()
		d := c.deployment("web", int32(n), 1, reasonNewRSAvailable, 24*time.Hour)
		rs := c.replicaSet(d, 1, int32(n), 24*time.Hour, nil)
		var pods []*corev1.Pod
		for i := range n {
			pods = append(pods, c.pod(rs, fmt.Sprintf("p%03d", i), 24*time.Hour, running(true)))
		}
		// The first copy has no UID; the last is named by an endpoint without one.
		pods[0].UID = ""
		svc := c.service("web", "web")
		named := map[*corev1.Pod]bool{pods[0]: true, pods[n-1]: true, pods[1]: true}
		c.endpointSlice(svc, 8080, named)
		es := c.s.EndpointSlices[len(c.s.EndpointSlices)-1]
		for i := range es.Endpoints {
			if ref := es.Endpoints[i].TargetRef; ref.Name == pods[n-1].Name {
				ref.UID = ""
			}
		}
		got := c.diagnoseOne("web")
		if got.Counts.Serving != 3 {
			t.Errorf("%d copies: serving = %d, want 3", n, got.Counts.Serving)
		}
		for _, cp := range got.Detail.Copies() {
			want := cp.Name == pods[0].Name || cp.Name == pods[1].Name || cp.Name == pods[n-1].Name
			if cp.Serving != want {
				t.Errorf("%d copies: %s serving = %v, want %v", n, cp.Name, cp.Serving, want)
			}
		}
	}
}

// TestCopiesWithoutAnAge: a copy without a creation time, or with one after the reference time
// (a skewed clock, a hostile dump), has no age. The workload's youngest and oldest copies are
// read from the others, and each such copy's age is unknown (nil) or negative, which the printers
// show as kubectl does (<unknown>, <invalid>), never as 292 years or 0s.
func TestCopiesWithoutAnAge(t *testing.T) {
	for _, tt := range []struct {
		name               string
		ages               []time.Duration
		unset              int
		wantYoung, wantOld *int64
	}{
		{
			name: "one copy without a creation time", ages: []time.Duration{10 * time.Minute, 20 * time.Minute, 30 * time.Minute}, unset: 0,
			wantYoung: ptr(int64(20 * 60)), wantOld: ptr(int64(30 * 60)),
		},
		{
			name: "one copy created in the future", ages: []time.Duration{-10 * time.Minute, 20 * time.Minute, 30 * time.Minute}, unset: -1,
			wantYoung: ptr(int64(20 * 60)), wantOld: ptr(int64(30 * 60)),
		},
		{name: "no copy with an age", ages: []time.Duration{-time.Hour, time.Hour}, unset: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			d := c.deployment("web", int32(len(tt.ages)), 1, reasonNewRSAvailable, 2*time.Hour)
			rs := c.replicaSet(d, 1, int32(len(tt.ages)), 2*time.Hour, nil)
			var pods []*corev1.Pod
			for i, age := range tt.ages {
				pods = append(pods, c.pod(rs, fmt.Sprint(i), age, running(true)))
			}
			if tt.unset >= 0 {
				pods[tt.unset].CreationTimestamp = metav1.Time{}
			}
			got := c.diagnoseOne("web")
			if !reflect.DeepEqual(got.YoungestCopySeconds, tt.wantYoung) || !reflect.DeepEqual(got.OldestCopySeconds, tt.wantOld) {
				t.Errorf("youngest, oldest = %v, %v; want %v, %v", deref(got.YoungestCopySeconds), deref(got.OldestCopySeconds), deref(tt.wantYoung), deref(tt.wantOld))
			}
			for _, cp := range got.Detail.Copies() {
				p := pods[0]
				for _, q := range pods {
					if q.Name == cp.Name {
						p = q
					}
				}
				switch {
				case p.CreationTimestamp.IsZero():
					if cp.AgeSeconds != nil {
						t.Errorf("copy %s without a creation time has age %d", cp.Name, *cp.AgeSeconds)
					}
				case p.CreationTimestamp.After(testRef):
					if cp.AgeSeconds == nil || *cp.AgeSeconds >= 0 {
						t.Errorf("copy %s created in the future has age %v, want a negative one", cp.Name, deref(cp.AgeSeconds))
					}
				default:
					if cp.AgeSeconds == nil || *cp.AgeSeconds <= 0 {
						t.Errorf("copy %s has age %v", cp.Name, deref(cp.AgeSeconds))
					}
				}
			}
		})
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

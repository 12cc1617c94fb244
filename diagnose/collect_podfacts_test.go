package diagnose

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// eventfulCluster has copies whose events name them in every way the snapshot's index files
// them: by UID, by name without a UID (with and without the involved object's namespace), an
// earlier copy of the same name with another UID, a copy's UID under another kind and name,
// and copies without a UID; and Deployments and ReplicaSets named without a UID or under
// another UID.
func eventfulCluster() *snapshot.Snapshot {
	c := newCluster()
	for n := range 4 {
		name := fmt.Sprintf("evented-%d", n)
		d := c.deployment(name, 6, 1, reasonNewRSAvailable, 48*time.Hour)
		rs := c.replicaSet(d, 1, 6, 48*time.Hour, nil)
		// The workload and its ReplicaSet named without a UID, and the workload's name under
		// another UID (an earlier Deployment of the name).
		switch n {
		case 1:
			c.event("Deployment", d.Name, "", "Warning", "FailedCreate", "odd: a Deployment event without a UID", 1, time.Minute)
		case 2:
			c.event("ReplicaSet", rs.Name, "", "Warning", "FailedCreate", `pods "`+rs.Name+`-x" is forbidden: exceeded quota: compute`, 4, time.Minute)
		case 3:
			c.event("Deployment", d.Name, c.nextUID(), "Normal", "ScalingReplicaSet", "Scaled up replica set "+rs.Name+" to 6", 1, 72*time.Hour)
		}
		for j := range 6 {
			state := running(true)
			if (j+n)%3 == 0 {
				state = crashLooping("Error", 1, 4)
			}
			p := c.pod(rs, fmt.Sprintf("e%d", j), 24*time.Hour, state)
			switch (j + n) % 6 {
			case 0:
				c.event("Pod", p.Name, p.UID, "Warning", "BackOff", "Back-off restarting failed container app in pod "+p.Name, 12, time.Minute)
			case 1:
				c.event("Pod", p.Name, "", "Warning", "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503", 3, 2*time.Minute)
			case 2:
				c.event("Pod", p.Name, "", "Normal", "Pulled", `Container image "registry.example/app:1.0.0" already present on machine`, 1, time.Hour)
				c.s.Events[len(c.s.Events)-1].InvolvedObject.Namespace = ""
			case 3:
				c.event("Pod", p.Name, c.nextUID(), "Warning", "FailedMount", "MountVolume.SetUp failed for volume \"cfg\"", 2, 3*time.Hour)
			case 4:
				c.event("ReplicaSet", "someone-else", p.UID, "Warning", "FailedCreate", "odd: a ReplicaSet event naming a copy's UID", 1, time.Minute)
			default:
				p.UID = ""
				if n%2 == 0 {
					c.event("Pod", p.Name, "", "Warning", "BackOff", "Back-off restarting failed container app in pod "+p.Name, 5, time.Minute)
				} else {
					// EventsFor returns every event of the name for a copy without a UID.
					c.event("Pod", p.Name, c.nextUID(), "Warning", "BackOff", "Back-off restarting failed container app in pod "+p.Name, 5, time.Minute)
				}
			}
		}
	}
	return c.s
}

// TestPodFactsAsEventsFor holds collectShared, which asks for a copy's events only where
// podFacts says the snapshot has some, to asking for every copy's, with reflect.DeepEqual on
// whole reports: every scenario, the eventful cluster and the synthetic clusters.
func TestPodFactsAsEventsFor(t *testing.T) {
	cases := map[string]func() *snapshot.Snapshot{
		"eventful":        eventfulCluster,
		"mixed logs":      mixedLogCluster,
		"healthy 1000x10": func() *snapshot.Snapshot { return syntheticHealthyClusterOf(1000, 100, 10) },
		"synthetic 300":   func() *snapshot.Snapshot { return syntheticCluster(300, 300) },
	}
	for _, v := range verdictDirs(t) {
		cases[v.ID] = func() *snapshot.Snapshot { return loadDump(t, v.Dir, loadExpected(t, v.Dir)) }
	}
	podEvents := 0
	for name, build := range cases {
		s := build()
		s.Index()
		got := Diagnose(s)
		askEveryPodsEvents = true
		want := Diagnose(s)
		askEveryPodsEvents = false
		if !reflect.DeepEqual(got, want) {
			for i := range got.Workloads {
				if g, w := &got.Workloads[i], &want.Workloads[i]; !reflect.DeepEqual(g, w) {
					t.Errorf("%s: %s/%s differs when every copy's events are asked for:\n got evidence %+v\nwant evidence %+v", name, g.Kind, g.Name, g.Evidence, w.Evidence)
					break
				}
			}
			continue
		}
		if name == "eventful" {
			for _, d := range want.Workloads {
				for _, o := range d.Detail.Observations() {
					if o.Kind == ObsEvent && o.Object != nil && o.Object.Kind == "Pod" {
						podEvents++
					}
				}
			}
		}
	}
	if podEvents < 12 {
		t.Fatalf("the eventful cluster's reports hold %d events of copies: too few to tell the two ways apart", podEvents)
	}
}

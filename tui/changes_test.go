package tui

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// trackedChurn changes a namespace at random as a watch's informers see it and makes the watch's
// snapshots with a snapshot.Tracker: copies restart, turn ready and unready, are deleted, made
// again, renamed and moved to another ReplicaSet; a Deployment rolls out a new ReplicaSet and its
// old one is deleted; events come, count up and go, by UID or by name alone; slices follow
// readiness; tails are read, and the visibility lines come and go.
type trackedChurn struct {
	rng    *rand.Rand
	tr     *snapshot.Tracker
	objs   map[snapshot.ObjectKey]runtime.Object
	logs   []snapshot.ContainerLog
	vis    []snapshot.Visibility
	serial int
	// kinds limits the changes to those a watch follows without a full diagnosis, so that
	// the incremental path is the one taken; with all, Services and StatefulSets change too.
	all bool
}

func newTrackedChurn(seed uint64, base *snapshot.Snapshot) *trackedChurn {
	c := &trackedChurn{rng: rand.New(rand.NewPCG(seed, 7)), objs: map[snapshot.ObjectKey]runtime.Object{}}
	base.Each(func(o runtime.Object) { c.objs[keyOf(o)] = o })
	c.tr = snapshot.NewTracker(base)
	return c
}

func keyOf(o runtime.Object) snapshot.ObjectKey {
	m := o.(metav1.Object)
	return snapshot.ObjectKey{Kind: reflect.TypeOf(o).Elem().Name(), Namespace: m.GetNamespace(), Name: m.GetName()}
}

func (c *trackedChurn) put(o runtime.Object) {
	c.objs[keyOf(o)] = o
	c.tr.Put(o)
}

func (c *trackedChurn) del(o runtime.Object) {
	delete(c.objs, keyOf(o))
	c.tr.Delete(o)
}

// some returns a random object of a kind, or nil.
func some[T any](c *trackedChurn) *T {
	var all []*T
	for _, o := range c.objs {
		if t, ok := any(o).(*T); ok {
			all = append(all, t)
		}
	}
	if len(all) == 0 {
		return nil
	}
	// Map order is random but not seeded: sort for a sequence a seed repeats.
	sortByName(all)
	return all[c.rng.IntN(len(all))]
}

func sortByName[T any](xs []*T) {
	name := func(x *T) string { m := any(x).(metav1.Object); return m.GetNamespace() + "/" + m.GetName() }
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && name(xs[j]) < name(xs[j-1]); j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

func (c *trackedChurn) step(n int) *snapshot.Snapshot {
	for range n {
		c.change()
	}
	s := c.tr.Snapshot()
	s.Namespaces = []string{"telemetry"}
	s.Source = snapshot.SourceInfo{Type: snapshot.SourceLive}
	s.ReferenceTime = refTime
	s.Logs = append([]snapshot.ContainerLog(nil), c.logs...)
	s.Visibility = append([]snapshot.Visibility(nil), c.vis...)
	return s
}

func (c *trackedChurn) change() {
	c.serial++
	switch c.rng.IntN(12) {
	case 0, 1, 2: // a copy restarts or turns ready or unready
		if p := some[corev1.Pod](c); p != nil {
			p = p.DeepCopy()
			cs := &p.Status.ContainerStatuses[0]
			if c.rng.IntN(2) == 0 {
				cs.RestartCount++
				cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}
			}
			cs.Ready = !cs.Ready
			for i := range p.Status.Conditions {
				p.Status.Conditions[i].Status = map[bool]corev1.ConditionStatus{true: corev1.ConditionTrue, false: corev1.ConditionFalse}[cs.Ready]
			}
			c.put(p)
			c.slicesFollow(p)
		}
	case 3: // a copy is deleted, or made again under its name with a new UID, or renamed
		if p := some[corev1.Pod](c); p != nil {
			switch c.rng.IntN(3) {
			case 0:
				c.del(p)
			case 1:
				p = p.DeepCopy()
				p.UID = types.UID(fmt.Sprintf("uid-again-%d", c.serial))
				c.put(p)
			default:
				c.del(p)
				p = p.DeepCopy()
				p.Name, p.UID = fmt.Sprintf("%s-r%d", p.Name, c.serial), types.UID(fmt.Sprintf("uid-renamed-%d", c.serial))
				c.put(p)
			}
		}
	case 4: // a copy moves to another ReplicaSet, or loses its controller
		p, rs := some[corev1.Pod](c), some[appsv1.ReplicaSet](c)
		if p != nil && rs != nil {
			p = p.DeepCopy()
			if c.rng.IntN(4) == 0 {
				p.OwnerReferences = nil
			} else {
				p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}
				p.Labels = map[string]string{"app": rs.Labels["app"], appsv1.DefaultDeploymentUniqueLabelKey: rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]}
			}
			c.put(p)
		}
	case 5: // a Deployment rolls out a new ReplicaSet, or an old one is deleted or orphaned
		if d := some[appsv1.Deployment](c); d != nil {
			switch c.rng.IntN(3) {
			case 0:
				hash := fmt.Sprintf("h%d", c.serial)
				rs := &appsv1.ReplicaSet{
					ObjectMeta: metav1.ObjectMeta{
						Name: d.Name + "-" + hash, Namespace: d.Namespace, UID: types.UID("uid-rs-" + hash),
						Labels:            map[string]string{"app": d.Name, appsv1.DefaultDeploymentUniqueLabelKey: hash},
						Annotations:       map[string]string{"deployment.kubernetes.io/revision": fmt.Sprint(c.serial)},
						CreationTimestamp: metav1.NewTime(refTime.Add(-time.Minute)),
						OwnerReferences:   []metav1.OwnerReference{{Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: ptr.To(true)}},
					},
					Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1), Selector: d.Spec.Selector, Template: d.Spec.Template},
				}
				c.put(rs)
				d = d.DeepCopy()
				d.Annotations = map[string]string{"deployment.kubernetes.io/revision": fmt.Sprint(c.serial)}
				c.put(d)
			case 1:
				if rs := some[appsv1.ReplicaSet](c); rs != nil {
					c.del(rs)
				}
			default:
				if rs := some[appsv1.ReplicaSet](c); rs != nil {
					rs = rs.DeepCopy()
					rs.OwnerReferences = nil
					c.put(rs)
				}
			}
		}
	case 6, 7: // an event about a copy, by UID or by name alone, counts up or comes
		if p := some[corev1.Pod](c); p != nil {
			e := &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: p.Name + ".back-off", Namespace: p.Namespace, UID: types.UID(fmt.Sprintf("uid-ev-%d", c.serial))},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
				Reason:         "BackOff", Message: "Back-off restarting failed container", Type: corev1.EventTypeWarning,
				Count: int32(c.serial), LastTimestamp: metav1.NewTime(refTime.Add(-time.Duration(c.rng.IntN(600)) * time.Second)),
			}
			if c.rng.IntN(3) == 0 {
				e.InvolvedObject.UID = ""
			}
			c.put(e)
		}
	case 8: // an event goes, or one about a ReplicaSet or a Deployment comes
		switch c.rng.IntN(3) {
		case 0:
			if e := some[corev1.Event](c); e != nil {
				c.del(e)
			}
		case 1:
			if rs := some[appsv1.ReplicaSet](c); rs != nil {
				c.put(&corev1.Event{
					ObjectMeta:     metav1.ObjectMeta{Name: rs.Name + ".create", Namespace: rs.Namespace},
					InvolvedObject: corev1.ObjectReference{Kind: "ReplicaSet", Namespace: rs.Namespace, Name: rs.Name, UID: rs.UID},
					Reason:         "FailedCreate", Message: "pods \"x\" is forbidden: exceeded quota", Type: corev1.EventTypeWarning,
					LastTimestamp: metav1.NewTime(refTime.Add(-time.Minute)),
				})
			}
		default:
			if d := some[appsv1.Deployment](c); d != nil {
				c.put(&corev1.Event{
					ObjectMeta:     metav1.ObjectMeta{Name: d.Name + ".scaled", Namespace: d.Namespace},
					InvolvedObject: corev1.ObjectReference{Kind: "Deployment", Namespace: d.Namespace, Name: d.Name, UID: d.UID},
					Reason:         "ScalingReplicaSet", Message: "Scaled up", LastTimestamp: metav1.NewTime(refTime.Add(-time.Minute)),
				})
			}
		}
	case 9: // a tail is read, or read again
		if p := some[corev1.Pod](c); p != nil {
			c.logs = append(c.logs, snapshot.ContainerLog{
				Namespace: p.Namespace, Pod: p.Name, Container: p.Status.ContainerStatuses[0].Name, Previous: true,
				Lines: []string{fmt.Sprintf("panic: dial tcp 10.96.14.7:5432: connect: connection refused (%d)", c.serial)},
			})
			c.logs = dedupeTails(c.logs)
		}
	case 10: // the visibility of the logs changes
		if len(c.vis) > 0 && c.rng.IntN(2) == 0 {
			c.vis = nil
		} else {
			c.vis = []snapshot.Visibility{{Kind: "pods/log", Namespace: "telemetry", Reason: fmt.Sprintf("%d log tails not read yet: while watching, at most 5 log tails are read a second", 1+c.rng.IntN(9))}}
		}
	case 11: // with all: a kind not followed changes, which calls for a full diagnosis
		if !c.all {
			return
		}
		if svc := some[corev1.Service](c); svc != nil {
			svc = svc.DeepCopy()
			svc.Spec.Ports[0].Port++
			c.put(svc)
		}
	}
}

// slicesFollow rewrites the EndpointSlice that lists p as the endpointslice controller does.
func (c *trackedChurn) slicesFollow(p *corev1.Pod) {
	for _, o := range c.objs {
		es, ok := o.(*discoveryv1.EndpointSlice)
		if !ok {
			continue
		}
		for i, ep := range es.Endpoints {
			if ep.TargetRef != nil && ep.TargetRef.Name == p.Name {
				es = es.DeepCopy()
				es.Endpoints[i].Conditions.Ready = ptr.To(p.Status.ContainerStatuses[0].Ready)
				c.put(es)
				return
			}
		}
	}
}

// The workloads the console diagnoses again, found from what the watch's Tracker says changed,
// are exactly those found by comparing the two snapshots' lists, over random sequences of
// restarts, readiness flips, deletes, copies made again and renamed, copies moving between
// ReplicaSets, rollouts, orphaned ReplicaSets, events by UID and by name, slices, tails and
// visibility lines; and every report of the console's incremental diagnosis of those snapshots
// equals a full diagnosis of the same objects, its rows and workload objects those drawn anew.
func TestChangesSaidByTheTrackerAreTheChangesFound(t *testing.T) {
	for seed := uint64(1); seed <= 16; seed++ {
		base := scaleSnapshot(12, 3)
		withServices(base)
		c := newTrackedChurn(seed, base)
		c.all = seed%4 == 0
		clock := refTime
		eng := &countingEngine{}
		inc := eng.incremental(&clock)
		base.Index()
		inc.next(base, nil)
		prev := base
		for step := range 25 {
			s := c.step(1 + c.rng.IntN(5))
			// As the watch hands them on: indexed, the index derived from the last one's.
			s.Index()
			said, ok := s.ChangesSince(prev)
			if !ok {
				t.Fatalf("seed %d step %d: the snapshot does not say what changed since the last", seed, step)
			}
			found, followedOnly := objectsChanged(prev, s)
			want := map[workloadKey]bool(nil)
			if followedOnly {
				want = dirtyWorkloads(prev, s, found)
			}
			got := dirtyWorkloads(prev, s, said)
			if !followedOnly {
				// A kind not followed changed: the Tracker's changes say so too.
				if changedWorkloads(prev, s) != nil {
					t.Fatalf("seed %d step %d: a change of a kind not followed did not call for a full diagnosis", seed, step)
				}
			} else if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d step %d: the Tracker's changes name workloads %v, the lists' differences %v", seed, step, got, want)
			}
			clock = clock.Add(500 * time.Millisecond)
			ds := inc.next(s, nil)
			if full := diagnose.Diagnose(rebuilt(s)); !reflect.DeepEqual(ds.report, full) {
				t.Logf("diagnosed again: %v; a full diagnosis on the derived index is the same: %v", eng.again, reflect.DeepEqual(diagnose.Diagnose(s), full))
				for j := range full.Workloads {
					if j < len(ds.report.Workloads) && !reflect.DeepEqual(ds.report.Workloads[j], full.Workloads[j]) {
						t.Logf("%s/%s differs from %s/%s:\n got %+v\nwant %+v", full.Workloads[j].Kind, full.Workloads[j].Name, ds.report.Workloads[j].Kind, ds.report.Workloads[j].Name, ds.report.Workloads[j].Evidence, full.Workloads[j].Evidence)
						break
					}
				}
				t.Fatalf("seed %d step %d: the incremental report differs from a full diagnosis", seed, step)
			}
			if fresh := datasetOf(rebuilt(s), ds.report); !reflect.DeepEqual(ds.rows, fresh.rows) {
				t.Fatalf("seed %d step %d: the rows differ from rows drawn anew", seed, step)
			} else if !reflect.DeepEqual(ds.objects, fresh.objects) {
				t.Fatalf("seed %d step %d: the workloads' objects taken from the last dataset differ from those found anew", seed, step)
			}
			prev = s
		}
		if eng.partial == 0 {
			t.Fatalf("seed %d: no snapshot was diagnosed incrementally", seed)
		}
	}
}

package tui

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// rebuilt is s as the watch builds its next snapshot from the informers' stores: the same
// objects, in new lists, without indexes.
func rebuilt(s *snapshot.Snapshot) *snapshot.Snapshot {
	next := &snapshot.Snapshot{}
	sv, nv := reflect.ValueOf(s).Elem(), reflect.ValueOf(next).Elem()
	for i := 0; i < sv.NumField(); i++ {
		if sv.Type().Field(i).IsExported() {
			nv.Field(i).Set(sv.Field(i))
		}
	}
	next.Pods = append([]*corev1.Pod(nil), s.Pods...)
	next.Events = append([]*corev1.Event(nil), s.Events...)
	return next
}

// countingEngine counts full and incremental diagnoses and records what was diagnosed again.
type countingEngine struct {
	full, partial int
	again         []string
	// reusedRows counts the rows replay saw taken from the last dataset.
	reusedRows int
}

func (c *countingEngine) incremental(clock *time.Time) *incremental {
	return &incremental{
		diagnose: func(s *snapshot.Snapshot) *diagnose.Report { c.full++; return diagnose.Diagnose(s) },
		rediag: func(prev *diagnose.Report, s *snapshot.Snapshot, changed func(kind, namespace, name string) bool) *diagnose.Report {
			c.partial++
			c.again = nil
			return diagnose.Rediagnose(prev, s, func(kind, namespace, name string) bool {
				if changed(kind, namespace, name) {
					c.again = append(c.again, kind+"/"+name)
					return true
				}
				return false
			})
		},
		now: func() time.Time { return *clock },
	}
}

// Pod status changes, a new event and a deleted copy have only their workloads diagnosed again,
// and the report equals a full diagnosis of the same snapshot.
func TestAWatchSnapshotIsDiagnosedAgainOnlyWhereItChanged(t *testing.T) {
	clock := refTime
	eng := &countingEngine{}
	inc := eng.incremental(&clock)
	prev := scaleSnapshot(60, 3)
	inc.next(prev, nil)

	next := rebuilt(prev)
	// service-00001's first copy starts crash-looping; service-00002's copy gets a warning;
	// service-00004 loses a copy.
	crashing := pod(prev.Deployments[1], 0, false, 3, "CrashLoopBackOff")
	for i, p := range next.Pods {
		if p.Name == crashing.Name {
			next.Pods[i] = crashing
		}
	}
	warned := next.Pods[2*3]
	next.Events = append(next.Events, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: warned.Name + ".1", Namespace: warned.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: warned.Namespace, Name: warned.Name, UID: warned.UID},
		Type:           corev1.EventTypeWarning, Reason: "Unhealthy", Message: "Readiness probe failed: HTTP probe failed with statuscode: 503",
		Count: 4, LastTimestamp: metav1.NewTime(refTime.Add(-time.Minute)),
	})
	gone := next.Pods[4*3+1]
	next.Pods = append(next.Pods[:4*3+1], next.Pods[4*3+2:]...)
	clock = clock.Add(time.Second)
	got := inc.next(next, nil)

	if eng.full != 1 || eng.partial != 1 {
		t.Fatalf("%d full and %d incremental diagnoses, want 1 and 1", eng.full, eng.partial)
	}
	want := []string{"Deployment/service-00001", "Deployment/service-00002", "Deployment/service-00004"}
	if !reflect.DeepEqual(eng.again, want) {
		t.Errorf("diagnosed again %v, want %v (the copy gone was %s)", eng.again, want, gone.Name)
	}
	full := diagnose.Diagnose(rebuilt(next))
	if !reflect.DeepEqual(got.report, full) {
		t.Fatal("the incremental report differs from a full diagnosis of the same snapshot")
	}
	if d := full.Find("Deployment", crashing.Namespace, "service-00001"); d == nil || d.Counts.Restarts != 3 {
		t.Fatalf("the crash-looping copy did not reach the diagnosis: %+v", d)
	}
}

// What several workloads may share, and time, call for a full diagnosis.
func TestAWatchSnapshotIsDiagnosedInFullWhenItCannotTellWhatChanged(t *testing.T) {
	clock := refTime
	eng := &countingEngine{}
	inc := eng.incremental(&clock)
	prev := scaleSnapshot(20, 2)
	inc.next(prev, nil)

	next := rebuilt(prev)
	next.Services = append(next.Services, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "telemetry", UID: types.UID("uid-svc-shop")},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "service-00003"}},
	})
	inc.next(next, nil)
	if eng.full != 2 || eng.partial != 0 {
		t.Errorf("a new Service: %d full and %d incremental diagnoses, want 2 and 0", eng.full, eng.partial)
	}

	inc.next(rebuilt(next), nil)
	if eng.full != 2 || eng.partial != 1 || len(eng.again) != 0 {
		t.Errorf("nothing changed: %d full, %d incremental, again %v; want 2, 1 and nothing", eng.full, eng.partial, eng.again)
	}
	clock = clock.Add(fullEvery)
	inc.next(rebuilt(next), nil)
	if eng.full != 3 {
		t.Errorf("after %s: %d full diagnoses, want 3: ages move with the clock", fullEvery, eng.full)
	}
}

// A kind changedWorkloads does not trace, as every kind added to the table later, calls for a
// full diagnosis when any of its objects changes.
func TestAChangeOfAnUntracedKindIsAFullDiagnosis(t *testing.T) {
	prev := scaleSnapshot(5, 2)
	for _, k := range snapshot.Kinds {
		if followed[k.Kind] {
			continue
		}
		next := rebuilt(prev)
		obj := k.New()
		obj.(metav1.Object).SetName("added")
		obj.(metav1.Object).SetNamespace("telemetry")
		k.Add(next, []runtime.Object{obj})
		if changedWorkloads(prev, next) != nil {
			t.Errorf("a new %s was traced to workloads; want a full diagnosis", k.Kind)
		}
	}
	if changedWorkloads(prev, rebuilt(prev)) == nil {
		t.Error("an unchanged snapshot called for a full diagnosis")
	}
}

// withServices gives each Deployment of s a Service and the EndpointSlice the endpointslice
// controller writes for it: every copy an endpoint, ready as the copy is.
func withServices(s *snapshot.Snapshot) {
	for _, d := range s.Deployments {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: d.Namespace, UID: types.UID("uid-svc-" + d.Name)},
			Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": d.Name},
				Ports:    []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}},
			},
		}
		es := &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{
				Name: d.Name + "-x7k2p", Namespace: d.Namespace, UID: types.UID("uid-es-" + d.Name),
				Labels: map[string]string{
					discoveryv1.LabelServiceName: d.Name,
					discoveryv1.LabelManagedBy:   "endpointslice-controller.k8s.io",
				},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: d.Name, UID: svc.UID, Controller: ptr.To(true)}},
			},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
		}
		for i, p := range s.Pods {
			if p.Labels["app"] != d.Name {
				continue
			}
			ready := false
			for _, c := range p.Status.Conditions {
				ready = ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
			}
			es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{
				Addresses:  []string{fmt.Sprintf("10.244.%d.%d", i/250, i%250+2)},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready), Serving: ptr.To(ready), Terminating: ptr.To(false)},
				TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
			})
		}
		s.Services = append(s.Services, svc)
		s.EndpointSlices = append(s.EndpointSlices, es)
	}
}

// replaceSlice puts a copy of s's EndpointSlice named name, changed by edit, in its place.
func replaceSlice(s *snapshot.Snapshot, name string, edit func(*discoveryv1.EndpointSlice)) {
	s.EndpointSlices = append([]*discoveryv1.EndpointSlice(nil), s.EndpointSlices...)
	for i, es := range s.EndpointSlices {
		if es.Name == name {
			es = es.DeepCopy()
			edit(es)
			s.EndpointSlices[i] = es
		}
	}
}

// An EndpointSlice rewritten when a copy's readiness flips has only the workloads of the copies
// it lists diagnosed again, and the report equals a full diagnosis; a slice that appears, goes,
// empties or moves to another Service calls for a full one.
func TestAnEndpointSliceUpdateIsDiagnosedAgainOnlyForItsCopies(t *testing.T) {
	clock := refTime
	eng := &countingEngine{}
	inc := eng.incremental(&clock)
	prev := scaleSnapshot(30, 3)
	withServices(prev)
	first := inc.next(prev, nil)
	if d := first.report.Find("Deployment", "telemetry", "service-00005"); d == nil || d.Counts.Serving != 3 {
		t.Fatalf("service-00005 before: %+v, want 3 serving", d)
	}

	next := rebuilt(prev)
	// The endpointslice controller saw service-00005's second copy fail its readiness probe.
	replaceSlice(next, "service-00005-x7k2p", func(es *discoveryv1.EndpointSlice) {
		es.Endpoints[1].Conditions.Ready = ptr.To(false)
		es.Endpoints[1].Conditions.Serving = ptr.To(false)
	})
	clock = clock.Add(time.Second)
	got := inc.next(next, nil)
	if eng.full != 1 || eng.partial != 1 {
		t.Fatalf("%d full and %d incremental diagnoses, want 1 and 1", eng.full, eng.partial)
	}
	if want := []string{"Deployment/service-00005"}; !reflect.DeepEqual(eng.again, want) {
		t.Errorf("diagnosed again %v, want %v", eng.again, want)
	}
	if !reflect.DeepEqual(got.report, diagnose.Diagnose(rebuilt(next))) {
		t.Fatal("the incremental report differs from a full diagnosis of the same snapshot")
	}
	if d := got.report.Find("Deployment", "telemetry", "service-00005"); d == nil || d.Counts.Serving != 2 {
		t.Fatalf("the slice's change did not reach the diagnosis: %+v", d)
	}

	for name, edit := range map[string]func(s *snapshot.Snapshot){
		"emptied": func(s *snapshot.Snapshot) {
			replaceSlice(s, "service-00007-x7k2p", func(es *discoveryv1.EndpointSlice) { es.Endpoints = nil })
		},
		"moved to another Service": func(s *snapshot.Snapshot) {
			replaceSlice(s, "service-00007-x7k2p", func(es *discoveryv1.EndpointSlice) { es.Labels[discoveryv1.LabelServiceName] = "service-00008" })
		},
		"deleted": func(s *snapshot.Snapshot) { s.EndpointSlices = s.EndpointSlices[1:] },
		"added": func(s *snapshot.Snapshot) {
			es := s.EndpointSlices[0].DeepCopy()
			es.Name, es.UID = "service-00000-b9m4q", "uid-es-second"
			s.EndpointSlices = append(append([]*discoveryv1.EndpointSlice(nil), s.EndpointSlices...), es)
		},
	} {
		after := rebuilt(next)
		edit(after)
		if changedWorkloads(next, after) != nil {
			t.Errorf("a slice %s was traced to workloads; want a full diagnosis", name)
		}
	}
}

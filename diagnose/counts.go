package diagnose

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// serviceView is what the Services of a workload say about its copies.
type serviceView struct {
	// Known is false when no Service is meant for the workload, or none of them has an
	// EndpointSlice in the snapshot: then Ready is the best the engine can see.
	Known bool
	// endpoint[i] says copy i (workload.Pods[i]) is a ready endpoint on a port a container
	// exposes; nil when no copy is.
	endpoint []bool
	// Unexposed names a Service whose ready endpoints are on ports no container exposes.
	Unexposed string
}

// endpoints reads the EndpointSlices of the workload's Services. A Service that is meant for the
// workload but selects none of its pods counts as known with no endpoints: its slices are empty.
func endpoints(s *snapshot.Snapshot, w *workload) serviceView {
	var v serviceView
	f := newCopyFinder(w.Pods)
	// The ready endpoints are found first and their copies' ports read after, in a loop of
	// their own: a copy's container ports are read by nothing else, each read waits on memory,
	// and in a short loop the reads of the next copies are under way while one waits.
	ready := w.texts.readyRoom()
	for si, svc := range w.Services {
		slices := s.EndpointSlicesFor(svc.Namespace, svc.Name)
		if len(slices) == 0 {
			continue
		}
		v.Known = true
		for _, es := range slices {
			for ix := range es.Endpoints {
				ep := &es.Endpoints[ix]
				if ep.TargetRef == nil || ep.TargetRef.Kind != "Pod" {
					continue
				}
				i := f.find(ep.TargetRef.UID, ep.TargetRef.Name)
				if i < 0 || (ep.Conditions.Ready != nil && !*ep.Conditions.Ready) {
					continue
				}
				ready = append(ready, readyEndpoint{copy: int32(i), service: int32(si), slice: es})
			}
		}
	}
	for _, r := range ready {
		if exposesAny(w.Pods[r.copy], w.Services[r.service], r.slice.Ports) {
			if v.endpoint == nil {
				v.endpoint = w.texts.flagRoom(len(w.Pods))
			}
			v.endpoint[r.copy] = true
		} else if v.Unexposed == "" {
			v.Unexposed = w.Services[r.service].Name
		}
	}
	w.texts.keepReadyRoom(ready)
	if len(w.UnmatchedServices) > 0 {
		v.Known = true
	}
	return v
}

// readyEndpoint is a ready endpoint of a copy: the copy's index, the Service's index in
// workload.Services and the slice that lists it.
type readyEndpoint struct {
	copy, service int32
	slice         *discoveryv1.EndpointSlice
}

// copyFinder looks up the index of the copy with a UID, else of the copy with a name (the
// last of the copies with it, as maps filled in order would hold); -1 when none has either. An
// empty UID names no copy: a pod without one is found by its name. A few copies are scanned.
type copyFinder struct {
	pods   []*corev1.Pod
	byUID  map[types.UID]int
	byName map[string]int
}

func newCopyFinder(pods []*corev1.Pod) copyFinder {
	f := copyFinder{pods: pods}
	if len(pods) <= smallUIDs {
		return f
	}
	f.byUID = make(map[types.UID]int, len(pods))
	f.byName = make(map[string]int, len(pods))
	for i, p := range pods {
		if p.UID != "" {
			f.byUID[p.UID] = i
		}
		f.byName[p.Name] = i
	}
	return f
}

func (f *copyFinder) find(uid types.UID, name string) int {
	if f.byName == nil {
		for i := len(f.pods) - 1; uid != "" && i >= 0; i-- {
			if f.pods[i].UID == uid {
				return i
			}
		}
		for i := len(f.pods) - 1; i >= 0; i-- {
			if f.pods[i].Name == name {
				return i
			}
		}
		return -1
	}
	if i, ok := f.byUID[uid]; ok && uid != "" {
		return i
	}
	if i, ok := f.byName[name]; ok {
		return i
	}
	return -1
}

// exposesAny reports whether the pod has a container port among the slice's ports.
func exposesAny(p *corev1.Pod, svc *corev1.Service, ports []discoveryv1.EndpointPort) bool {
	if len(ports) == 0 {
		// The EndpointSlice controller lists an endpoint with no port when none of the
		// Service's ports resolves on the pod (a targetPort naming a port no container
		// carries; k8s.io/endpointslice getEndpointPorts): no traffic reaches it. Only a
		// Service without ports (headless) has no ports by design.
		return len(svc.Spec.Ports) == 0
	}
	for ix := range p.Spec.Containers {
		c := &p.Spec.Containers[ix]
		for jx := range c.Ports {
			cp := &c.Ports[jx]
			for _, sp := range ports {
				// A UDP Service port does not reach a TCP listener, nor the reverse: the
				// slice's port carries the Service port's protocol.
				if sp.Port != nil && *sp.Port == cp.ContainerPort && (sp.Protocol == nil || facts.SameProtocol(*sp.Protocol, cp.Protocol)) {
					return true
				}
			}
		}
	}
	return false
}

// ownServiceSelectsNone reports whether the Service with the workload's own name is one meant for
// it that selects none of its copies: that is the Service clients use, so another Service
// (a NodePort for an edge balancer, a StatefulSet's governing headless one) selecting the copies
// does not make them serve.
func ownServiceSelectsNone(w *workload) bool {
	for _, svc := range w.UnmatchedServices {
		if svc.Name == w.Name {
			return true
		}
	}
	return false
}

// count fills w.Counts and w.serving, and returns the copy ages.
func count(s *snapshot.Snapshot, w *workload, ref time.Time) (youngest, oldest *int64) {
	// The ages are kept here and put on the heap once: a pointer to each copy's age would
	// be an allocation per copy.
	var young, old int64
	aged := false
	view := endpoints(s, w)
	if ownServiceSelectsNone(w) {
		view.Known, view.endpoint = true, nil
	}
	w.Counts = Counts{Declared: w.Declared}
	w.serving = w.texts.flagRoom(len(w.Pods))
	for i := range w.Pods {
		c := w.life(i)
		if !c.Active {
			continue
		}
		w.Counts.Existing++
		w.Counts.Restarts += c.Restarts
		if c.Ready && (!view.Known || (view.endpoint != nil && view.endpoint[i])) {
			w.Counts.Serving++
			w.serving[i] = true
		}
		// A copy without a creation time, or with one after the reference time (a skewed
		// clock, a hostile dump), has no age: it would read as 292 years or a negative one.
		if c.Created.IsZero() || c.Created.After(ref) {
			continue
		}
		age := int64(ref.Sub(c.Created) / time.Second)
		if !aged || age < young {
			young = age
		}
		if !aged || age > old {
			old = age
		}
		aged = true
	}
	if aged {
		ages := &[2]int64{young, old}
		youngest, oldest = &ages[0], &ages[1]
	}
	w.cls.serviceKnown = view.Known
	w.cls.unexposedService = view.Unexposed
	seeDialLoops(w)
	seeCopies(w)
	w.cls.nowhere = runsNowhere(w)
	return youngest, oldest
}

package diagnose

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// active is the controllers' own notion of an existing copy: not terminating and not finished.
// A pod being deleted or one that Succeeded/Failed (evicted, completed) no longer counts toward
// the declared count, so it does not count here either; it still appears in the copy list.
func active(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// serviceView is what the Services of a workload say about its copies.
type serviceView struct {
	// Known is false when no Service is meant for the workload, or none of them has an
	// EndpointSlice in the snapshot: then Ready is the best the engine can see.
	Known bool
	// Endpoint holds the copies that are ready endpoints on a port a container exposes.
	Endpoint map[types.UID]bool
	// Unexposed names a Service whose ready endpoints are on ports no container exposes.
	Unexposed string
}

// endpoints reads the EndpointSlices of the workload's Services. A Service that is meant for the
// workload but selects none of its pods counts as known with no endpoints: its slices are empty.
func endpoints(s *snapshot.Snapshot, w *workload) serviceView {
	v := serviceView{Endpoint: map[types.UID]bool{}}
	pods := map[types.UID]*corev1.Pod{}
	byName := map[string]*corev1.Pod{}
	for _, p := range w.Pods {
		pods[p.UID] = p
		byName[p.Name] = p
	}
	for _, svc := range w.Services {
		slices := s.EndpointSlicesFor(svc.Namespace, svc.Name)
		if len(slices) == 0 {
			continue
		}
		v.Known = true
		for _, es := range slices {
			for _, ep := range es.Endpoints {
				if ep.TargetRef == nil || ep.TargetRef.Kind != "Pod" {
					continue
				}
				p := pods[ep.TargetRef.UID]
				if p == nil {
					p = byName[ep.TargetRef.Name]
				}
				if p == nil || (ep.Conditions.Ready != nil && !*ep.Conditions.Ready) {
					continue
				}
				if exposesAny(p, es.Ports) {
					v.Endpoint[p.UID] = true
				} else if v.Unexposed == "" {
					v.Unexposed = svc.Name
				}
			}
		}
	}
	if len(w.UnmatchedServices) > 0 {
		v.Known = true
	}
	return v
}

// exposesAny reports whether the pod has a container port among the slice's ports. A slice
// without ports (a Service with no ports) is taken at its word.
func exposesAny(p *corev1.Pod, ports []discoveryv1.EndpointPort) bool {
	if len(ports) == 0 {
		return true
	}
	for _, c := range p.Spec.Containers {
		for _, cp := range c.Ports {
			for _, sp := range ports {
				if sp.Port != nil && *sp.Port == cp.ContainerPort {
					return true
				}
			}
		}
	}
	return false
}

// count fills w.Counts and w.ServingPods, and returns the copy ages.
func count(s *snapshot.Snapshot, w *workload, ref time.Time) (youngest, oldest *int64) {
	view := endpoints(s, w)
	w.Counts = Counts{Declared: w.Declared}
	w.ServingPods = map[types.UID]bool{}
	for _, p := range w.Pods {
		if !active(p) {
			continue
		}
		w.Counts.Existing++
		w.Counts.Restarts += restarts(p)
		if podReady(p) && (!view.Known || view.Endpoint[p.UID]) {
			w.Counts.Serving++
			w.ServingPods[p.UID] = true
		}
		age := int64(ref.Sub(p.CreationTimestamp.Time) / time.Second)
		if age < 0 {
			age = 0
		}
		if youngest == nil || age < *youngest {
			youngest = &age
		}
		if oldest == nil || age > *oldest {
			oldest = &age
		}
	}
	w.cls.serviceKnown = view.Known
	w.cls.unexposedService = view.Unexposed
	seeCopies(w)
	w.cls.nowhere = runsNowhere(w)
	return youngest, oldest
}

func restarts(p *corev1.Pod) int32 {
	var n int32
	for _, cs := range p.Status.InitContainerStatuses {
		n += cs.RestartCount
	}
	for _, cs := range p.Status.ContainerStatuses {
		n += cs.RestartCount
	}
	return n
}

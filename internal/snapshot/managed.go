package snapshot

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
)

// TrimManagedFields drops an object's managedFields as a source reads it: they are often half of
// an object's size. A Service keeps them: their times are the only record of when its selector or
// ports changed, which dates a change made under a workload that served. Services are few and
// small.
func TrimManagedFields(obj any) {
	if _, ok := obj.(*corev1.Service); ok {
		return
	}
	// Only when there are any: a watch trims again the objects it was seeded with, which the
	// snapshot on screen holds, and a write there would race with the screen's reads.
	if m, err := meta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
}

// TrimWatched trims an object as a watch stores it: its managedFields dropped, as
// TrimManagedFields does, and of a pod, each container status's resources, allocated
// resources and their status, volume mounts, user and stop signal, which no reader of a
// snapshot reads (the engine reads resources and mounts from the spec): a watch holds every pod
// of its namespaces for as long as it runs, about a kilobyte each of these. It changes the
// object in place, as TrimManagedFields does, so that an informer seeded with the first read's
// objects keeps those very objects (the console tells a changed object by its pointer); the
// fields it clears are ones nothing reads, so the first read's snapshot, which may be on screen
// meanwhile, reads the same.
func TrimWatched(obj any) {
	TrimManagedFields(obj)
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	for _, css := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses, p.Status.EphemeralContainerStatuses} {
		for i := range css {
			cs := &css[i]
			if cs.AllocatedResources != nil || cs.Resources != nil || cs.VolumeMounts != nil || cs.User != nil ||
				cs.AllocatedResourcesStatus != nil || cs.StopSignal != nil {
				cs.AllocatedResources, cs.Resources, cs.VolumeMounts, cs.User = nil, nil, nil, nil
				cs.AllocatedResourcesStatus, cs.StopSignal = nil, nil
			}
		}
	}
}

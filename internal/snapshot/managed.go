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
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
}

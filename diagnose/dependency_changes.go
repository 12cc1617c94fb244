package diagnose

import (
	"bytes"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// outsideChange is a change the snapshot can date to an object the workload depends on, made
// after the workload's current revision rolled out: the workload's own spec did not change, the
// ground under it did.
type outsideChange struct {
	Object  string
	Manager string
	At      time.Time
}

// serviceSpecChangedAt dates the last write to a Service's spec from its managedFields: the
// newest entry whose fields hold spec. Its creation (an entry as old as the object) is not a
// change. Dumps written by kubectl get hide managedFields unless asked; then nothing is dated.
func serviceSpecChangedAt(svc *corev1.Service) (time.Time, string) {
	var at time.Time
	manager := ""
	for _, mf := range svc.ManagedFields {
		if mf.Time == nil || mf.FieldsV1 == nil || !bytes.Contains(mf.FieldsV1.GetRawBytes(), []byte(`"f:spec"`)) {
			continue
		}
		if mf.Time.Sub(svc.CreationTimestamp.Time) <= endpointGrace {
			continue
		}
		if mf.Time.After(at) {
			at, manager = mf.Time.Time, mf.Manager
		}
	}
	return at, manager
}

// changedUnderneath reports the dated change to the object of a suspect outside the workload (a
// Service's selector or ports) made after the workload's current revision served: the workload
// served, its spec is unchanged, and the other object changed since.
func changedUnderneath(w *workload, top *Suspect) *outsideChange {
	h := &w.cls.history
	if top == nil || h.Current == nil || h.LastServing != h.Current {
		return nil
	}
	name, ok := strings.CutPrefix(top.Object, "Service/")
	if !ok {
		return nil
	}
	for _, svc := range w.NearbyServices {
		if svc.Name != name {
			continue
		}
		at, manager := serviceSpecChangedAt(svc)
		if at.IsZero() || !at.After(h.Current.Created.Add(servedReady)) {
			return nil
		}
		return &outsideChange{Object: top.Object, Manager: manager, At: at.UTC()}
	}
	return nil
}

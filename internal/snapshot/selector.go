package snapshot

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// Selector picks workloads by their own labels and fields, as `kubectl get deploy -l ...
// --field-selector ...` picks them. A live source sends the same strings to the API server; a dump
// is filtered with FilterWorkloads, so both answer alike.
type Selector struct {
	// Label and Field are the selectors as typed; empty selects everything.
	Label, Field string
	labels       labels.Selector
	fields       fields.Selector
}

// SelectableFields are the fields the API server selects workloads on (apps/v1 Deployments,
// StatefulSets and DaemonSets accept only the object metadata's).
var SelectableFields = []string{"metadata.name", "metadata.namespace"}

// ParseSelector parses a label and a field selector. It rejects a field the API server would
// reject, with the server's own words, so a dump and a cluster fail alike.
func ParseSelector(label, field string) (Selector, error) {
	s := Selector{Label: label, Field: field, labels: labels.Everything(), fields: fields.Everything()}
	if label != "" {
		l, err := labels.Parse(label)
		if err != nil {
			return Selector{}, fmt.Errorf("invalid label selector %q: %w", label, err)
		}
		s.labels = l
	}
	if field != "" {
		f, err := fields.ParseSelector(field)
		if err != nil {
			return Selector{}, fmt.Errorf("invalid field selector %q: %w", field, err)
		}
		for _, r := range f.Requirements() {
			if r.Field != SelectableFields[0] && r.Field != SelectableFields[1] {
				// The message of apimachinery's DefaultMetaV1FieldSelectorConversion.
				return Selector{}, fmt.Errorf("%q is not a known field selector: only %q, %q", r.Field, SelectableFields[0], SelectableFields[1])
			}
		}
		s.fields = f
	}
	return s, nil
}

// Empty reports whether the selector selects every workload.
func (s Selector) Empty() bool { return s.Label == "" && s.Field == "" }

// Matches reports whether an object's labels and metadata fields are selected.
func (s Selector) Matches(o metav1.Object) bool {
	if s.Empty() {
		return true
	}
	if s.labels != nil && !s.labels.Matches(labels.Set(o.GetLabels())) {
		return false
	}
	return s.fields == nil || s.fields.Matches(fields.Set{"metadata.name": o.GetName(), "metadata.namespace": o.GetNamespace()})
}

// FilterWorkloads returns a snapshot whose workloads of Selectable kinds (Deployments,
// StatefulSets, DaemonSets) are those sel matches. A workload of a kind that Follows another (a
// ReplicaSet a Deployment controls) follows its controller, whose labels it need not share: it is
// kept when the controller is, which it cannot be when a live source's server left the
// controller out; one without such a controller is a workload of its own and kept when sel
// matches it. Everything the workloads depend on (pods, events, services, nodes) is kept, since a
// selector picks workloads, not their evidence. An empty selector returns s itself.
func (s *Snapshot) FilterWorkloads(sel Selector) *Snapshot {
	if sel.Empty() {
		return s
	}
	out := *s
	out.index = nil
	// What a Tracker says changed is about the whole lists, not the ones kept.
	out.seq, out.changes = 0, nil
	kept := map[types.UID]bool{}
	for i := range Kinds {
		if k := &Kinds[i]; k.Selectable {
			k.ops.filterObjects(&out, s, func(o metav1.Object) bool {
				if !sel.Matches(o) {
					return false
				}
				kept[o.GetUID()] = true
				return true
			})
		}
	}
	for i := range Kinds {
		if k := &Kinds[i]; k.Follows != "" {
			k.ops.filterObjects(&out, s, func(o metav1.Object) bool {
				if c := metav1.GetControllerOfNoCopy(o); c != nil && c.Kind == k.Follows {
					return kept[c.UID]
				}
				return sel.Matches(o)
			})
		}
	}
	return &out
}

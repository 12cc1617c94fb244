package snapshot

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
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

// FilterWorkloads returns a snapshot whose Deployments, StatefulSets and DaemonSets are those sel
// matches. A ReplicaSet a Deployment controls follows that Deployment, whose labels it need not
// share: it is kept when the Deployment is, which it cannot be when a live source's server left the
// Deployment out; any other ReplicaSet is a workload of its own and kept when sel matches it. Everything the workloads depend on (pods, events, services, nodes) is
// kept, since a selector picks workloads, not their evidence. An empty selector returns s itself.
func (s *Snapshot) FilterWorkloads(sel Selector) *Snapshot {
	if sel.Empty() {
		return s
	}
	out := *s
	out.index = nil
	out.Deployments = nil
	kept := map[types.UID]bool{}
	for _, d := range s.Deployments {
		if sel.Matches(d) {
			out.Deployments = append(out.Deployments, d)
			kept[d.UID] = true
		}
	}
	out.StatefulSets = selected(s.StatefulSets, sel)
	out.DaemonSets = selected(s.DaemonSets, sel)
	out.ReplicaSets = nil
	for _, rs := range s.ReplicaSets {
		if replicaSetKept(rs, sel, kept) {
			out.ReplicaSets = append(out.ReplicaSets, rs)
		}
	}
	return &out
}

func replicaSetKept(rs *appsv1.ReplicaSet, sel Selector, kept map[types.UID]bool) bool {
	if c := metav1.GetControllerOf(rs); c != nil && c.Kind == "Deployment" {
		return kept[c.UID]
	}
	return sel.Matches(rs)
}

func selected[T metav1.Object](objs []T, sel Selector) []T {
	var out []T
	for _, o := range objs {
		if sel.Matches(o) {
			out = append(out, o)
		}
	}
	return out
}

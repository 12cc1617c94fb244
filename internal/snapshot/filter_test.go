package snapshot

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func om(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "-" + name)}
}

func twoNamespaces() *Snapshot {
	s := &Snapshot{
		ReferenceTime: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC),
		Namespaces:    []string{"a", "b"},
		Source:        SourceInfo{Type: SourceDump, Path: "x", Skipped: map[string]int{"ConfigMap": 2}},
		Visibility: []Visibility{
			{Kind: "Node", Reason: "forbidden"},
			{Kind: "Event", Namespace: "a", Reason: "forbidden"},
			{Kind: "Event", Namespace: "b", Reason: "forbidden"},
		},
	}
	for _, ns := range []string{"a", "b"} {
		s.Deployments = append(s.Deployments, &appsv1.Deployment{ObjectMeta: om(ns, "web")})
		s.StatefulSets = append(s.StatefulSets, &appsv1.StatefulSet{ObjectMeta: om(ns, "db")})
		s.DaemonSets = append(s.DaemonSets, &appsv1.DaemonSet{ObjectMeta: om(ns, "agent")})
		s.ReplicaSets = append(s.ReplicaSets, &appsv1.ReplicaSet{ObjectMeta: om(ns, "web-1")})
		s.ControllerRevisions = append(s.ControllerRevisions, &appsv1.ControllerRevision{ObjectMeta: om(ns, "db-1")})
		pod := &corev1.Pod{ObjectMeta: om(ns, "web-1-x")}
		pod.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-1", UID: types.UID(ns + "-web-1")}}
		s.Pods = append(s.Pods, pod)
		s.Events = append(s.Events, &corev1.Event{
			ObjectMeta:     om(ns, "web.1"),
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "web-1-x"},
		})
		s.Services = append(s.Services, &corev1.Service{ObjectMeta: om(ns, "web")})
		s.PersistentVolumeClaims = append(s.PersistentVolumeClaims, &corev1.PersistentVolumeClaim{ObjectMeta: om(ns, "data")})
		s.ResourceQuotas = append(s.ResourceQuotas, &corev1.ResourceQuota{ObjectMeta: om(ns, "quota")})
		slice := &discoveryv1.EndpointSlice{ObjectMeta: om(ns, "web-abc")}
		slice.Labels = map[string]string{discoveryv1.LabelServiceName: "web"}
		s.EndpointSlices = append(s.EndpointSlices, slice)
		s.Logs = append(s.Logs, ContainerLog{Namespace: ns, Pod: "web-1-x", Container: "web", Lines: []string{ns}})
	}
	s.Nodes = []*corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, {ObjectMeta: metav1.ObjectMeta{Name: "n2"}}}
	return s
}

func namespacesOf[T metav1.Object](objs []T) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetNamespace())
	}
	return out
}

func TestFilterNamespaces(t *testing.T) {
	tests := []struct {
		name           string
		ns             []string
		wantNamespaces []string
		wantObjectNS   []string
		wantVisibility int
	}{
		{name: "one namespace", ns: []string{"b"}, wantNamespaces: []string{"b"}, wantObjectNS: []string{"b"}, wantVisibility: 2},
		{name: "both, unsorted with a duplicate", ns: []string{"b", "a", "b"}, wantNamespaces: []string{"a", "b"}, wantObjectNS: []string{"a", "b"}, wantVisibility: 3},
		{name: "a namespace the snapshot lacks", ns: []string{"c"}, wantNamespaces: []string{"c"}, wantObjectNS: nil, wantVisibility: 1},
		{name: "empty keeps everything", ns: nil, wantNamespaces: []string{"a", "b"}, wantObjectNS: []string{"a", "b"}, wantVisibility: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := twoNamespaces()
			s.Index()
			got := s.FilterNamespaces(tt.ns)

			if !slices.Equal(got.Namespaces, tt.wantNamespaces) {
				t.Errorf("Namespaces = %v, want %v", got.Namespaces, tt.wantNamespaces)
			}
			for kind, ns := range map[string][]string{
				"Deployment":            namespacesOf(got.Deployments),
				"StatefulSet":           namespacesOf(got.StatefulSets),
				"DaemonSet":             namespacesOf(got.DaemonSets),
				"ReplicaSet":            namespacesOf(got.ReplicaSets),
				"ControllerRevision":    namespacesOf(got.ControllerRevisions),
				"Pod":                   namespacesOf(got.Pods),
				"Event":                 namespacesOf(got.Events),
				"Service":               namespacesOf(got.Services),
				"PersistentVolumeClaim": namespacesOf(got.PersistentVolumeClaims),
				"ResourceQuota":         namespacesOf(got.ResourceQuotas),
				"EndpointSlice":         namespacesOf(got.EndpointSlices),
			} {
				if !slices.Equal(ns, tt.wantObjectNS) {
					t.Errorf("%s namespaces = %v, want %v", kind, ns, tt.wantObjectNS)
				}
			}
			var logNS []string
			for _, l := range got.Logs {
				logNS = append(logNS, l.Namespace)
			}
			if !slices.Equal(logNS, tt.wantObjectNS) {
				t.Errorf("log namespaces = %v, want %v", logNS, tt.wantObjectNS)
			}
			if len(got.Nodes) != 2 {
				t.Errorf("nodes = %d, want 2 (nodes have no namespace and are kept)", len(got.Nodes))
			}
			if len(got.Visibility) != tt.wantVisibility {
				t.Errorf("visibility = %v, want %d entries", got.Visibility, tt.wantVisibility)
			}
			if !got.ReferenceTime.Equal(s.ReferenceTime) || got.Source.Path != "x" || got.Source.Skipped["ConfigMap"] != 2 {
				t.Errorf("reference time or source not kept: %v %+v", got.ReferenceTime, got.Source)
			}
		})
	}
}

func TestFilterNamespacesIndexesAreItsOwn(t *testing.T) {
	s := twoNamespaces()
	s.Index()
	got := s.FilterNamespaces([]string{"a"})

	if n := len(got.PodsOwnedBy("b-web-1")); n != 0 {
		t.Errorf("filtered snapshot finds %d pods of namespace b through its index", n)
	}
	if n := len(got.PodsOwnedBy("a-web-1")); n != 1 {
		t.Errorf("filtered snapshot finds %d pods of namespace a, want 1", n)
	}
	if n := len(s.PodsOwnedBy("b-web-1")); n != 1 {
		t.Errorf("original snapshot finds %d pods of namespace b after filtering, want 1", n)
	}
	if got.Log("b", "web-1-x", "web", false) != nil || got.Log("a", "web-1-x", "web", false) == nil {
		t.Error("filtered snapshot's log index does not match its logs")
	}
	if len(got.EndpointSlicesFor("b", "web")) != 0 || len(got.ServicesIn("b")) != 0 {
		t.Error("filtered snapshot's index still holds namespace b")
	}

	got.Source.Skipped["ConfigMap"] = 99
	if s.Source.Skipped["ConfigMap"] != 2 {
		t.Error("filtered snapshot shares the Skipped map with the original")
	}
	all := s.FilterNamespaces(nil)
	all.Pods[0], all.Nodes[0], all.Logs[0].Pod = nil, nil, "other"
	if s.Pods[0] == nil || s.Nodes[0] == nil || s.Logs[0].Pod != "web-1-x" {
		t.Error("a filtered snapshot shares its slices with the original")
	}
}

package snapshot

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// labelled is a snapshot of two namespaces whose workloads carry tier labels; the Deployment
// api's ReplicaSets carry only their template's labels, as the deployment controller makes them.
func labelled() *Snapshot {
	s := &Snapshot{}
	for _, ns := range []string{"a", "b"} {
		api := &appsv1.Deployment{ObjectMeta: om(ns, "api")}
		api.Labels = map[string]string{"tier": "web", "team": "core"}
		db := &appsv1.Deployment{ObjectMeta: om(ns, "db-proxy")}
		db.Labels = map[string]string{"tier": "db"}
		s.Deployments = append(s.Deployments, api, db)
		for _, d := range []*appsv1.Deployment{api, db} {
			rs := &appsv1.ReplicaSet{ObjectMeta: om(ns, d.Name+"-5d8f7")}
			rs.Labels = map[string]string{"pod-template-hash": "5d8f7"}
			rs.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: ptr.To(true)}}
			s.ReplicaSets = append(s.ReplicaSets, rs)
		}
		bare := &appsv1.ReplicaSet{ObjectMeta: om(ns, "by-hand")}
		bare.Labels = map[string]string{"tier": "web"}
		s.ReplicaSets = append(s.ReplicaSets, bare)
		sts := &appsv1.StatefulSet{ObjectMeta: om(ns, "db")}
		sts.Labels = map[string]string{"tier": "db"}
		s.StatefulSets = append(s.StatefulSets, sts)
		ds := &appsv1.DaemonSet{ObjectMeta: om(ns, "agent")}
		s.DaemonSets = append(s.DaemonSets, ds)
	}
	return s
}

func names[T metav1.Object](objs []T) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetNamespace()+"/"+o.GetName())
	}
	return out
}

func TestFilterWorkloads(t *testing.T) {
	tests := []struct {
		name, label, field  string
		deploy, rs, sts, ds []string
	}{
		{
			name: "label equality keeps the deployment's replicasets, which lack its labels", label: "tier=web",
			deploy: []string{"a/api", "b/api"}, rs: []string{"a/api-5d8f7", "a/by-hand", "b/api-5d8f7", "b/by-hand"},
		},
		{
			name: "set-based and negated labels", label: "tier in (db),team!=core",
			deploy: []string{"a/db-proxy", "b/db-proxy"}, rs: []string{"a/db-proxy-5d8f7", "b/db-proxy-5d8f7"}, sts: []string{"a/db", "b/db"},
		},
		{name: "label existence", label: "!tier", ds: []string{"a/agent", "b/agent"}},
		{name: "field name and namespace", field: "metadata.name=db,metadata.namespace=b", sts: []string{"b/db"}},
		{
			name: "field inequality with a label", label: "tier", field: "metadata.namespace!=a",
			deploy: []string{"b/api", "b/db-proxy"}, rs: []string{"b/api-5d8f7", "b/db-proxy-5d8f7", "b/by-hand"}, sts: []string{"b/db"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := ParseSelector(tt.label, tt.field)
			if err != nil {
				t.Fatal(err)
			}
			in := labelled()
			before := len(in.Deployments) + len(in.ReplicaSets)
			got := in.FilterWorkloads(sel)
			check := func(what string, got, want []string) {
				t.Helper()
				if !slices.Equal(got, want) {
					t.Errorf("%s = %v, want %v", what, got, want)
				}
			}
			check("deployments", names(got.Deployments), tt.deploy)
			check("replicasets", names(got.ReplicaSets), tt.rs)
			check("statefulsets", names(got.StatefulSets), tt.sts)
			check("daemonsets", names(got.DaemonSets), tt.ds)
			if len(in.Deployments)+len(in.ReplicaSets) != before {
				t.Error("FilterWorkloads changed its input")
			}
		})
	}
}

func TestFilterWorkloadsWithoutTheOwningDeployment(t *testing.T) {
	// A live source's server drops the unselected Deployment but lists every ReplicaSet: one whose
	// controller is absent must not turn into a workload of its own.
	s := labelled()
	s.Deployments = s.Deployments[:1] // a/api only
	sel, err := ParseSelector("pod-template-hash=5d8f7", "")
	if err != nil {
		t.Fatal(err)
	}
	got := s.FilterWorkloads(sel)
	if n := names(got.ReplicaSets); len(n) != 0 {
		t.Errorf("replicasets = %v, want none: each is controlled by a deployment the selector did not keep", n)
	}
}

func TestParseSelectorErrors(t *testing.T) {
	tests := []struct{ label, field, want string }{
		{label: "tier in (web", want: `invalid label selector "tier in (web": `},
		{field: "spec.replicas=3", want: `"spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{field: "metadata.name", want: `invalid field selector "metadata.name": `},
	}
	for _, tt := range tests {
		_, err := ParseSelector(tt.label, tt.field)
		if err == nil || len(err.Error()) < len(tt.want) || err.Error()[:len(tt.want)] != tt.want {
			t.Errorf("ParseSelector(%q, %q) = %v, want an error starting %q", tt.label, tt.field, err, tt.want)
		}
	}
	if s, err := ParseSelector("", ""); err != nil || !s.Empty() {
		t.Errorf("empty selectors: %v %v", s, err)
	}
}

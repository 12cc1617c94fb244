package live

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/pager"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// kind is one resource the source reads. snapshot.Kinds, with pod logs and the namespace names
// the console offers, is the whole list of what the tool may touch: Secrets and ConfigMaps are
// deliberately absent.
type kind struct {
	Kind     string
	Resource string // group/version/resource, for messages
	Cluster  bool
	// Workload marks the kinds a diagnosis is about: a read that could list none of them has
	// nothing to say and fails instead of reporting an empty namespace.
	Workload bool
	list     func(c kubernetes.Interface, ns string) pager.ListPageFunc
	add      func(s *snapshot.Snapshot, objs []runtime.Object)
	watch    func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext
	object   runtime.Object // an example, for the informer's type checks

	// selectable kinds are the workloads -l and --field-selector pick; the API server filters
	// them. A ReplicaSet follows its Deployment (snapshot.FilterWorkloads), whose labels it need
	// not share, so it is listed whole.
	selectable bool
	// rows are the kinds the console lists as rows before anything else is read: the
	// workloads no other workload controls.
	rows bool
}

// listOptions adds the source's selectors to opts when they apply to k.
func (k *kind) listOptions(sel snapshot.Selector, opts metav1.ListOptions) metav1.ListOptions {
	if k.selectable {
		opts.LabelSelector, opts.FieldSelector = sel.Label, sel.Field
	}
	return opts
}

// qualified is the resource as kubectl names it with its group: "deployments.apps", "pods".
func (k *kind) qualified() string {
	gv, resource, _ := strings.Cut(k.Resource, " ")
	if group, _, ok := strings.Cut(gv, "/"); ok {
		return resource + "." + group
	}
	return resource
}

// kinds are the live source's view of snapshot.Kinds, in its order.
var kinds = liveKinds(snapshot.Kinds, kindCalls)

// liveKinds joins the kind table with the calls of each kind. A kind of the table without
// calls is a programming error that every test of the package catches at once.
func liveKinds(table []snapshot.Kind, byKind map[string]calls) []kind {
	out := make([]kind, 0, len(table))
	for i := range table {
		k := &table[i]
		c, ok := byKind[k.Kind]
		if !ok || c.list == nil || c.watch == nil {
			panic("live: no list and watch calls for kind " + k.Kind + " of snapshot.Kinds")
		}
		out = append(out, kind{
			Kind: k.Kind, Resource: k.GVK.GroupVersion().String() + " " + k.Resource,
			Cluster: k.Cluster, Workload: k.Workload, selectable: k.Selectable, rows: k.Workload && k.Follows == "",
			list: c.list, add: k.Add, watch: c.watch, object: k.New(),
		})
	}
	return out
}

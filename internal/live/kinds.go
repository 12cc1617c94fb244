package live

import (
	"context"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/pager"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// kind is one resource the source reads. The table below, with pod logs and the namespace names
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
	// rows are the kinds the console lists as rows before anything else is read.
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

func pageFunc[L runtime.Object](fn func(ctx context.Context, opts metav1.ListOptions) (L, error)) pager.ListPageFunc {
	return func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return fn(ctx, opts)
	}
}

func appendAs[T any](dst *[]*T, objs []runtime.Object) {
	for _, o := range objs {
		if t, ok := any(o).(*T); ok {
			*dst = append(*dst, t)
		}
	}
}

var kinds = []kind{
	{
		Kind: "Deployment", Resource: "apps/v1 deployments", Workload: true, selectable: true, rows: true,
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.AppsV1().Deployments(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.Deployments, o) },
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.AppsV1().Deployments(ns).Watch
		},
		object: &appsv1.Deployment{},
	},
	{
		Kind: "StatefulSet", Resource: "apps/v1 statefulsets", Workload: true, selectable: true, rows: true,
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.AppsV1().StatefulSets(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.StatefulSets, o) },
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.AppsV1().StatefulSets(ns).Watch
		},
		object: &appsv1.StatefulSet{},
	},
	{
		Kind: "DaemonSet", Resource: "apps/v1 daemonsets", Workload: true, selectable: true, rows: true,
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.AppsV1().DaemonSets(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.DaemonSets, o) },
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.AppsV1().DaemonSets(ns).Watch
		},
		object: &appsv1.DaemonSet{},
	},
	{
		Kind: "ReplicaSet", Resource: "apps/v1 replicasets", Workload: true,
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.AppsV1().ReplicaSets(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.ReplicaSets, o) },
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.AppsV1().ReplicaSets(ns).Watch
		},
		object: &appsv1.ReplicaSet{},
	},
	{
		Kind: "ControllerRevision", Resource: "apps/v1 controllerrevisions",
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.AppsV1().ControllerRevisions(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.ControllerRevisions, o) },
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.AppsV1().ControllerRevisions(ns).Watch
		},
		object: &appsv1.ControllerRevision{},
	},
	{
		Kind: "Pod", Resource: "v1 pods",
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc { return pageFunc(c.CoreV1().Pods(ns).List) },
		add:  func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.Pods, o) },
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.CoreV1().Pods(ns).Watch
		},
		object: &corev1.Pod{},
	},
	{
		Kind: "Event", Resource: "v1 events",
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.CoreV1().Events(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.Events, o) },
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.CoreV1().Events(ns).Watch
		},
		object: &corev1.Event{},
	},
	{
		Kind: "Service", Resource: "v1 services",
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.CoreV1().Services(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.Services, o) },
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.CoreV1().Services(ns).Watch
		},
		object: &corev1.Service{},
	},
	{
		Kind: "PersistentVolumeClaim", Resource: "v1 persistentvolumeclaims",
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.CoreV1().PersistentVolumeClaims(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.PersistentVolumeClaims, o) },
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.CoreV1().PersistentVolumeClaims(ns).Watch
		},
		object: &corev1.PersistentVolumeClaim{},
	},
	{
		Kind: "ResourceQuota", Resource: "v1 resourcequotas",
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.CoreV1().ResourceQuotas(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.ResourceQuotas, o) },
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.CoreV1().ResourceQuotas(ns).Watch
		},
		object: &corev1.ResourceQuota{},
	},
	{
		Kind: "EndpointSlice", Resource: "discovery.k8s.io/v1 endpointslices",
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.DiscoveryV1().EndpointSlices(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.EndpointSlices, o) },
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.DiscoveryV1().EndpointSlices(ns).Watch
		},
		object: &discoveryv1.EndpointSlice{},
	},
	{
		Kind: "Node", Resource: "v1 nodes", Cluster: true,
		list:   func(c kubernetes.Interface, _ string) pager.ListPageFunc { return pageFunc(c.CoreV1().Nodes().List) },
		add:    func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.Nodes, o) },
		watch:  func(c kubernetes.Interface, _ string) cache.WatchFuncWithContext { return c.CoreV1().Nodes().Watch },
		object: &corev1.Node{},
	},
}

package live

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/pager"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// kind is one resource the source reads. The table below is the whole list of what the tool
// may touch: Secrets and ConfigMaps are deliberately absent.
type kind struct {
	Kind     string
	Resource string // group/version/resource, for messages
	Cluster  bool
	list     func(c kubernetes.Interface, ns string) pager.ListPageFunc
	add      func(s *snapshot.Snapshot, objs []runtime.Object)
	informer func(f informers.SharedInformerFactory) cache.SharedIndexInformer
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
		Kind: "Deployment", Resource: "apps/v1 deployments",
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.AppsV1().Deployments(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.Deployments, o) },
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().Deployments().Informer()
		},
	},
	{
		Kind: "StatefulSet", Resource: "apps/v1 statefulsets",
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.AppsV1().StatefulSets(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.StatefulSets, o) },
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().StatefulSets().Informer()
		},
	},
	{
		Kind: "DaemonSet", Resource: "apps/v1 daemonsets",
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.AppsV1().DaemonSets(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.DaemonSets, o) },
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().DaemonSets().Informer()
		},
	},
	{
		Kind: "ReplicaSet", Resource: "apps/v1 replicasets",
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.AppsV1().ReplicaSets(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.ReplicaSets, o) },
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().ReplicaSets().Informer()
		},
	},
	{
		Kind: "ControllerRevision", Resource: "apps/v1 controllerrevisions",
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.AppsV1().ControllerRevisions(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.ControllerRevisions, o) },
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().ControllerRevisions().Informer()
		},
	},
	{
		Kind: "Pod", Resource: "v1 pods",
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc { return pageFunc(c.CoreV1().Pods(ns).List) },
		add:  func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.Pods, o) },
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().Pods().Informer()
		},
	},
	{
		Kind: "Event", Resource: "v1 events",
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.CoreV1().Events(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.Events, o) },
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().Events().Informer()
		},
	},
	{
		Kind: "Service", Resource: "v1 services",
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.CoreV1().Services(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.Services, o) },
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().Services().Informer()
		},
	},
	{
		Kind: "PersistentVolumeClaim", Resource: "v1 persistentvolumeclaims",
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.CoreV1().PersistentVolumeClaims(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.PersistentVolumeClaims, o) },
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().PersistentVolumeClaims().Informer()
		},
	},
	{
		Kind: "ResourceQuota", Resource: "v1 resourcequotas",
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.CoreV1().ResourceQuotas(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.ResourceQuotas, o) },
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().ResourceQuotas().Informer()
		},
	},
	{
		Kind: "EndpointSlice", Resource: "discovery.k8s.io/v1 endpointslices",
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.DiscoveryV1().EndpointSlices(ns).List)
		},
		add: func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.EndpointSlices, o) },
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Discovery().V1().EndpointSlices().Informer()
		},
	},
	{
		Kind: "Node", Resource: "v1 nodes", Cluster: true,
		list: func(c kubernetes.Interface, _ string) pager.ListPageFunc { return pageFunc(c.CoreV1().Nodes().List) },
		add:  func(s *snapshot.Snapshot, o []runtime.Object) { appendAs(&s.Nodes, o) },
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().Nodes().Informer()
		},
	},
}

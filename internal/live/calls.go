package live

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/pager"
)

// calls are the client calls that list and watch one kind in a namespace ("" for all, or for a
// cluster-scoped kind). They live here, not in snapshot.Kinds, so the snapshot model does not
// depend on the client.
type calls struct {
	list  func(c kubernetes.Interface, ns string) pager.ListPageFunc
	watch func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext
}

// kindCalls holds the calls of every kind of snapshot.Kinds, by its Kind name; liveKinds fails
// at start-up for a kind added to the table and not here.
var kindCalls = map[string]calls{
	"Deployment": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.AppsV1().Deployments(ns).List)
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.AppsV1().Deployments(ns).Watch
		},
	},
	"StatefulSet": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.AppsV1().StatefulSets(ns).List)
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.AppsV1().StatefulSets(ns).Watch
		},
	},
	"DaemonSet": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.AppsV1().DaemonSets(ns).List)
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.AppsV1().DaemonSets(ns).Watch
		},
	},
	"ReplicaSet": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.AppsV1().ReplicaSets(ns).List)
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.AppsV1().ReplicaSets(ns).Watch
		},
	},
	"ControllerRevision": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.AppsV1().ControllerRevisions(ns).List)
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.AppsV1().ControllerRevisions(ns).Watch
		},
	},
	"CronJob": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.BatchV1().CronJobs(ns).List)
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.BatchV1().CronJobs(ns).Watch
		},
	},
	"Job": {
		list:  func(c kubernetes.Interface, ns string) pager.ListPageFunc { return pageFunc(c.BatchV1().Jobs(ns).List) },
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext { return c.BatchV1().Jobs(ns).Watch },
	},
	"Pod": {
		list:  func(c kubernetes.Interface, ns string) pager.ListPageFunc { return pageFunc(c.CoreV1().Pods(ns).List) },
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext { return c.CoreV1().Pods(ns).Watch },
	},
	"Event": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.CoreV1().Events(ns).List)
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext { return c.CoreV1().Events(ns).Watch },
	},
	"Service": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.CoreV1().Services(ns).List)
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.CoreV1().Services(ns).Watch
		},
	},
	"PersistentVolumeClaim": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.CoreV1().PersistentVolumeClaims(ns).List)
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.CoreV1().PersistentVolumeClaims(ns).Watch
		},
	},
	"ResourceQuota": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.CoreV1().ResourceQuotas(ns).List)
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.CoreV1().ResourceQuotas(ns).Watch
		},
	},
	"EndpointSlice": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.DiscoveryV1().EndpointSlices(ns).List)
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.DiscoveryV1().EndpointSlices(ns).Watch
		},
	},
	"Node": {
		list:  func(c kubernetes.Interface, _ string) pager.ListPageFunc { return pageFunc(c.CoreV1().Nodes().List) },
		watch: func(c kubernetes.Interface, _ string) cache.WatchFuncWithContext { return c.CoreV1().Nodes().Watch },
	},
}

func pageFunc[L runtime.Object](fn func(ctx context.Context, opts metav1.ListOptions) (L, error)) pager.ListPageFunc {
	return func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return fn(ctx, opts)
	}
}

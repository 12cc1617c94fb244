package live

import (
	"context"

	corev1 "k8s.io/api/core/v1"
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
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.BatchV1().Jobs(ns).List)
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext { return c.BatchV1().Jobs(ns).Watch },
	},
	"Pod": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return podsApart(pageFunc(c.CoreV1().Pods(ns).List))
		},
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
	"PodDisruptionBudget": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return pageFunc(c.PolicyV1().PodDisruptionBudgets(ns).List)
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.PolicyV1().PodDisruptionBudgets(ns).Watch
		},
	},
	"Node": {
		list: func(c kubernetes.Interface, _ string) pager.ListPageFunc {
			return pageFunc(c.CoreV1().Nodes().List)
		},
		watch: func(c kubernetes.Interface, _ string) cache.WatchFuncWithContext { return c.CoreV1().Nodes().Watch },
	},
	"PersistentVolume": {
		list: func(c kubernetes.Interface, _ string) pager.ListPageFunc {
			return pageFunc(c.CoreV1().PersistentVolumes().List)
		},
		watch: func(c kubernetes.Interface, _ string) cache.WatchFuncWithContext {
			return c.CoreV1().PersistentVolumes().Watch
		},
	},
}

func pageFunc[L runtime.Object](fn func(ctx context.Context, opts metav1.ListOptions) (L, error)) pager.ListPageFunc {
	return func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return fn(ctx, opts)
	}
}

// podsApart is list with each pod of a page copied into an allocation of its own, not left an
// item of the list's one array: a watch stores the first read's very pods, and one array of a
// namespace's pods stayed reachable as long as any one of them was, and with it every field of
// the pods the informers had since replaced (a 20k-pod namespace: a 25 MB array holding up to
// 5 KB more for each pod changed since the read). The copy is shallow: what a pod points to
// (its strings, slices and maps) is allocated apart by the decoder already.
func podsApart(list pager.ListPageFunc) pager.ListPageFunc {
	return func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		o, err := list(ctx, opts)
		if err != nil {
			return nil, err
		}
		pods, ok := o.(*corev1.PodList)
		if !ok {
			return o, nil
		}
		l := &metav1.List{ListMeta: pods.ListMeta, Items: make([]runtime.RawExtension, len(pods.Items))}
		for i := range pods.Items {
			p := new(corev1.Pod)
			*p = pods.Items[i]
			l.Items[i].Object = p
		}
		return l, nil
	}
}

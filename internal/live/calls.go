package live

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
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
			return fastPageFunc[appsv1.DeploymentList](c, appsGroup, "deployments", "DeploymentList", ns, pageFunc(c.AppsV1().Deployments(ns).List))
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.AppsV1().Deployments(ns).Watch
		},
	},
	"StatefulSet": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return fastPageFunc[appsv1.StatefulSetList](c, appsGroup, "statefulsets", "StatefulSetList", ns, pageFunc(c.AppsV1().StatefulSets(ns).List))
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.AppsV1().StatefulSets(ns).Watch
		},
	},
	"DaemonSet": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return fastPageFunc[appsv1.DaemonSetList](c, appsGroup, "daemonsets", "DaemonSetList", ns, pageFunc(c.AppsV1().DaemonSets(ns).List))
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.AppsV1().DaemonSets(ns).Watch
		},
	},
	"ReplicaSet": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return fastPageFunc[appsv1.ReplicaSetList](c, appsGroup, "replicasets", "ReplicaSetList", ns, pageFunc(c.AppsV1().ReplicaSets(ns).List))
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.AppsV1().ReplicaSets(ns).Watch
		},
	},
	"ControllerRevision": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return fastPageFunc[appsv1.ControllerRevisionList](c, appsGroup, "controllerrevisions", "ControllerRevisionList", ns, pageFunc(c.AppsV1().ControllerRevisions(ns).List))
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.AppsV1().ControllerRevisions(ns).Watch
		},
	},
	"CronJob": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return fastPageFunc[batchv1.CronJobList](c, batchGroup, "cronjobs", "CronJobList", ns, pageFunc(c.BatchV1().CronJobs(ns).List))
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.BatchV1().CronJobs(ns).Watch
		},
	},
	"Job": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return fastPageFunc[batchv1.JobList](c, batchGroup, "jobs", "JobList", ns, pageFunc(c.BatchV1().Jobs(ns).List))
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext { return c.BatchV1().Jobs(ns).Watch },
	},
	"Pod": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return fastPageFunc[corev1.PodList](c, coreGroup, "pods", "PodList", ns, pageFunc(c.CoreV1().Pods(ns).List))
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext { return c.CoreV1().Pods(ns).Watch },
	},
	"Event": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return fastPageFunc[corev1.EventList](c, coreGroup, "events", "EventList", ns, pageFunc(c.CoreV1().Events(ns).List))
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext { return c.CoreV1().Events(ns).Watch },
	},
	"Service": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return fastPageFunc[corev1.ServiceList](c, coreGroup, "services", "ServiceList", ns, pageFunc(c.CoreV1().Services(ns).List))
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.CoreV1().Services(ns).Watch
		},
	},
	"PersistentVolumeClaim": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return fastPageFunc[corev1.PersistentVolumeClaimList](c, coreGroup, "persistentvolumeclaims", "PersistentVolumeClaimList", ns, pageFunc(c.CoreV1().PersistentVolumeClaims(ns).List))
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.CoreV1().PersistentVolumeClaims(ns).Watch
		},
	},
	"ResourceQuota": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return fastPageFunc[corev1.ResourceQuotaList](c, coreGroup, "resourcequotas", "ResourceQuotaList", ns, pageFunc(c.CoreV1().ResourceQuotas(ns).List))
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.CoreV1().ResourceQuotas(ns).Watch
		},
	},
	"EndpointSlice": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return fastPageFunc[discoveryv1.EndpointSliceList](c, discoveryGroup, "endpointslices", "EndpointSliceList", ns, pageFunc(c.DiscoveryV1().EndpointSlices(ns).List))
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.DiscoveryV1().EndpointSlices(ns).Watch
		},
	},
	"PodDisruptionBudget": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return fastPageFunc[policyv1.PodDisruptionBudgetList](c, policyGroup, "poddisruptionbudgets", "PodDisruptionBudgetList", ns, pageFunc(c.PolicyV1().PodDisruptionBudgets(ns).List))
		},
		watch: func(c kubernetes.Interface, ns string) cache.WatchFuncWithContext {
			return c.PolicyV1().PodDisruptionBudgets(ns).Watch
		},
	},
	"Node": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return fastPageFunc[corev1.NodeList](c, coreGroup, "nodes", "NodeList", ns, pageFunc(c.CoreV1().Nodes().List))
		},
		watch: func(c kubernetes.Interface, _ string) cache.WatchFuncWithContext { return c.CoreV1().Nodes().Watch },
	},
	"PersistentVolume": {
		list: func(c kubernetes.Interface, ns string) pager.ListPageFunc {
			return fastPageFunc[corev1.PersistentVolumeList](c, coreGroup, "persistentvolumes", "PersistentVolumeList", ns, pageFunc(c.CoreV1().PersistentVolumes().List))
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

// The REST clients of the groups the tool reads, for fastPageFunc.
func coreGroup(c *groupsClient) rest.Interface      { return c.core.RESTClient() }
func appsGroup(c *groupsClient) rest.Interface      { return c.apps.RESTClient() }
func batchGroup(c *groupsClient) rest.Interface     { return c.batch.RESTClient() }
func discoveryGroup(c *groupsClient) rest.Interface { return c.discovery.RESTClient() }
func policyGroup(c *groupsClient) rest.Interface    { return c.policy.RESTClient() }

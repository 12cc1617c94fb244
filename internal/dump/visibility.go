package dump

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// missingOwners records, as visibility, the controllers that own objects in the dump but are not
// in it themselves: `kubectl cluster-info dump` writes no StatefulSets, and `kubectl get pods`
// writes no owners at all, so a workload can be present only through its pods. Saying so keeps
// a diagnosis of those pods from reading as complete.
func missingOwners(s *snapshot.Snapshot) []snapshot.Visibility {
	have := map[snapshot.ObjectKey]bool{}
	mark := func(kind string, objs []metav1.Object) {
		for _, o := range objs {
			have[snapshot.ObjectKey{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()}] = true
		}
	}
	mark("Deployment", metas(s.Deployments))
	mark("StatefulSet", metas(s.StatefulSets))
	mark("DaemonSet", metas(s.DaemonSets))
	mark("ReplicaSet", metas(s.ReplicaSets))

	type group struct{ kind, namespace string }
	missing := map[group]map[string]bool{}
	check := func(objs []metav1.Object) {
		for _, o := range objs {
			ref := metav1.GetControllerOf(o)
			if ref == nil {
				continue
			}
			switch ref.Kind {
			case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet":
			default:
				continue
			}
			if have[snapshot.ObjectKey{Kind: ref.Kind, Namespace: o.GetNamespace(), Name: ref.Name}] {
				continue
			}
			g := group{ref.Kind, o.GetNamespace()}
			if missing[g] == nil {
				missing[g] = map[string]bool{}
			}
			missing[g][ref.Name] = true
		}
	}
	check(metas(s.Pods))
	check(metas(s.ReplicaSets))

	var out []snapshot.Visibility
	for g, names := range missing {
		list := make([]string, 0, len(names))
		for n := range names {
			list = append(list, n)
		}
		sort.Strings(list)
		out = append(out, snapshot.Visibility{
			Kind: g.kind, Namespace: g.namespace,
			Reason: fmt.Sprintf("not in the dump, though objects in it are owned by %s %s", g.kind, strings.Join(list, ", ")),
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

func metas[T metav1.Object](objs []T) []metav1.Object {
	out := make([]metav1.Object, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}

// missingPods records that a dump holds controllers but no pod list at all (`kubectl get deploy
// -o yaml` pasted into a ticket, pods pruned from a dump), so the engine takes the controllers'
// word for their copies instead of reading the missing pods as copies that do not exist. An
// empty PodList is the pods the dump was asked for: there were none.
func missingPods(s *snapshot.Snapshot, podList bool) (snapshot.Visibility, bool) {
	if podList || len(s.Deployments)+len(s.StatefulSets)+len(s.DaemonSets)+len(s.ReplicaSets) == 0 {
		return snapshot.Visibility{}, false
	}
	return snapshot.Visibility{Kind: "Pod", Reason: "not in the dump"}, true
}

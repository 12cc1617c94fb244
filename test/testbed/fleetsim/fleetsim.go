// Package fleetsim builds a large cluster for measurements by cloning the namespaces of
// snapshots that a real API server wrote: each copy renames the namespaces and the UIDs, so
// owner references, events and endpoint targets still point within the copy.
//
// Invariant: it only builds values in memory; benchmarks use it, the product does not.
package fleetsim

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Clone returns a snapshot holding copies of every namespaced object of the sources, as many
// rounds as it takes to reach at least pods pods; copy i of namespace ns is ns-i. Nodes and
// PersistentVolumes, cluster-scoped, are kept once by name. The reference time is the newest of the sources'.
func Clone(sources []*snapshot.Snapshot, pods int) *snapshot.Snapshot {
	per := 0
	out := &snapshot.Snapshot{Source: snapshot.SourceInfo{Type: snapshot.SourceDump}}
	nodes, volumes := map[string]bool{}, map[string]bool{}
	for _, s := range sources {
		per += len(s.Pods)
		for _, n := range s.Nodes {
			if !nodes[n.Name] {
				nodes[n.Name] = true
				out.Nodes = append(out.Nodes, n)
			}
		}
		for _, v := range s.PersistentVolumes {
			if !volumes[v.Name] {
				volumes[v.Name] = true
				out.PersistentVolumes = append(out.PersistentVolumes, v)
			}
		}
		if s.ReferenceTime.After(out.ReferenceTime) {
			out.ReferenceTime = s.ReferenceTime
		}
	}
	if per == 0 {
		return out
	}
	for i := 0; len(out.Pods) < pods; i++ {
		for _, s := range sources {
			c := renamer{suffix: fmt.Sprintf("-%04d", i)}
			cloneAll(&out.Deployments, s.Deployments, c)
			cloneAll(&out.StatefulSets, s.StatefulSets, c)
			cloneAll(&out.DaemonSets, s.DaemonSets, c)
			cloneAll(&out.ReplicaSets, s.ReplicaSets, c)
			cloneAll(&out.ControllerRevisions, s.ControllerRevisions, c)
			cloneAll(&out.Pods, s.Pods, c)
			cloneAll(&out.Services, s.Services, c)
			cloneAll(&out.PersistentVolumeClaims, s.PersistentVolumeClaims, c)
			cloneAll(&out.ResourceQuotas, s.ResourceQuotas, c)
			cloneAll(&out.PodDisruptionBudgets, s.PodDisruptionBudgets, c)
			for _, e := range s.Events {
				e = e.DeepCopy()
				c.meta(e)
				e.InvolvedObject.Namespace += c.suffix
				e.InvolvedObject.UID = c.uid(e.InvolvedObject.UID)
				out.Events = append(out.Events, e)
			}
			for _, es := range s.EndpointSlices {
				es = es.DeepCopy()
				c.meta(es)
				for j := range es.Endpoints {
					if r := es.Endpoints[j].TargetRef; r != nil {
						r.Namespace += c.suffix
						r.UID = c.uid(r.UID)
					}
				}
				out.EndpointSlices = append(out.EndpointSlices, es)
			}
			for _, l := range s.Logs {
				l.Namespace += c.suffix
				l.Lines = slices.Clone(l.Lines)
				out.Logs = append(out.Logs, l)
			}
		}
	}
	return out
}

type renamer struct{ suffix string }

func (c renamer) uid(u types.UID) types.UID {
	if u == "" {
		return ""
	}
	return u + types.UID(c.suffix)
}

func (c renamer) meta(o metav1.Object) {
	o.SetNamespace(o.GetNamespace() + c.suffix)
	o.SetUID(c.uid(o.GetUID()))
	refs := o.GetOwnerReferences()
	for i := range refs {
		refs[i].UID = c.uid(refs[i].UID)
	}
	o.SetOwnerReferences(refs)
}

// object is a namespaced API object pointer, such as *corev1.Pod.
type object[T any] interface {
	*T
	metav1.Object
	runtime.Object
}

func cloneAll[T any, P object[T]](dst *[]P, src []P, c renamer) {
	for _, o := range src {
		cp, ok := o.DeepCopyObject().(P)
		if !ok {
			continue
		}
		c.meta(cp)
		*dst = append(*dst, cp)
	}
}

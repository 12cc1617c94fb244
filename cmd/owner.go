package cmd

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// maxOwnerHops bounds the controller chain followed from a named object: a pod, its ReplicaSet,
// its Deployment is two; a cycle of owner references, which the API server does not forbid,
// ends here.
const maxOwnerHops = 8

// objectKey names an object: its kind, namespace and name.
type objectKey struct{ kind, namespace, name string }

// diagnosed indexes a report's diagnoses by the workload they are about.
type diagnosed map[objectKey]*diagnose.Diagnosis

func indexReport(r *diagnose.Report) diagnosed {
	m := make(diagnosed, len(r.Workloads))
	for i := range r.Workloads {
		d := &r.Workloads[i]
		m[objectKey{d.Kind, d.Namespace, d.Name}] = d
	}
	return m
}

// resolution is the diagnosed workload an object the user named stands for.
type resolution struct {
	// Named is the object as named, in the namespace it was found in.
	Named objectKey
	// Diagnosis is the workload's, nil when Err says why there is none.
	Diagnosis *diagnose.Diagnosis
	// Through are the controllers between the two (a pod's ReplicaSet), as kind/name.
	Through []string
	Err     error
}

// Note says which workload a named object stands for, "" when it is the workload itself:
// "pod/web-7d9-x is controlled by deployment/web (through replicaset/web-7d9)".
func (r resolution) Note() string {
	if r.Diagnosis == nil || (r.Diagnosis.Kind == r.Named.kind && r.Diagnosis.Name == r.Named.name) {
		return ""
	}
	note := fmt.Sprintf("%s is controlled by %s", refOf(r.Named.kind, r.Named.name), report.WorkloadRef(r.Diagnosis))
	if len(r.Through) > 0 {
		note += " (through " + strings.Join(r.Through, ", ") + ")"
	}
	return report.Clean(note)
}

// refOf writes kind/name as kubectl does: lower-case kind.
func refOf(kind, name string) string { return strings.ToLower(kind) + "/" + name }

// resolve finds what the object kind/name in namespace ("" for every namespace) stands for: its
// own diagnosis when it is a workload the report holds, else the diagnosis of the workload that
// controls it, found by following controller references through the snapshot (a pod to its
// ReplicaSet to its Deployment, a Job to its CronJob, a pod to its StatefulSet). It returns one
// resolution per namespace the object was found in; none when it was found nowhere.
func resolve(snap *snapshot.Snapshot, ws diagnosed, kind, name, namespace string) []resolution {
	var out []resolution
	found := map[string]bool{}
	for key, d := range ws {
		if key.kind == kind && key.name == name && (namespace == "" || key.namespace == namespace) {
			out = append(out, resolution{Named: key, Diagnosis: d})
			found[key.namespace] = true
		}
	}
	k := snapshot.KindNamed(kind)
	if k == nil {
		return out
	}
	k.Each(snap, func(o runtime.Object) {
		m, err := meta.Accessor(o)
		if err != nil || m.GetName() != name || (namespace != "" && m.GetNamespace() != namespace) || found[m.GetNamespace()] {
			return
		}
		found[m.GetNamespace()] = true
		out = append(out, controlledBy(snap, ws, kind, m))
	})
	return out
}

// controlledBy follows the controller references of obj, of kind, up to a workload the report
// holds.
func controlledBy(snap *snapshot.Snapshot, ws diagnosed, kind string, obj metav1.Object) resolution {
	named := objectKey{kind, obj.GetNamespace(), obj.GetName()}
	res := resolution{Named: named}
	from := refOf(named.kind, named.name)
	cur := obj
	for range maxOwnerHops {
		ref := metav1.GetControllerOf(cur)
		if ref == nil {
			if len(res.Through) == 0 {
				res.Err = fmt.Errorf("%s is controlled by no workload (it has no controller reference); only workloads are diagnosed", from)
			} else {
				res.Err = fmt.Errorf("%s is controlled by %s, which no workload controls", from, res.Through[len(res.Through)-1])
			}
			return res
		}
		owner := objectKey{ref.Kind, named.namespace, ref.Name}
		if d := ws[owner]; d != nil {
			res.Diagnosis = d
			return res
		}
		k := snapshot.KindNamed(ref.Kind)
		if k == nil || !k.Workload {
			res.Err = fmt.Errorf("%s is controlled by %s, which is not a workload kind this tool diagnoses", from, refOf(ref.Kind, ref.Name))
			return res
		}
		next := lookup(snap, k, named.namespace, ref.Name, ref.UID)
		if next == nil {
			res.Err = fmt.Errorf("%s is controlled by %s, which was not read (deleted, or out of the source's reach)", from, refOf(ref.Kind, ref.Name))
			return res
		}
		res.Through = append(res.Through, refOf(ref.Kind, ref.Name))
		cur = next
	}
	res.Err = fmt.Errorf("%s: its controller references go round in a loop through %s", from, strings.Join(res.Through, ", "))
	return res
}

// lookup finds one object of kind k by namespace and name, and by UID when the reference has one.
func lookup(snap *snapshot.Snapshot, k *snapshot.Kind, namespace, name string, uid types.UID) metav1.Object {
	var found metav1.Object
	k.Each(snap, func(o runtime.Object) {
		if found != nil {
			return
		}
		m, err := meta.Accessor(o)
		if err == nil && m.GetNamespace() == namespace && m.GetName() == name && (uid == "" || m.GetUID() == uid) {
			found = m
		}
	})
	return found
}

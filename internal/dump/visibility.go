package dump

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
	for i := range snapshot.Kinds {
		if k := &snapshot.Kinds[i]; k.Workload {
			mark(k.Kind, kindMetas(k, s))
		}
	}

	type group struct{ kind, namespace string }
	missing := map[group]map[string]bool{}
	check := func(objs []metav1.Object) {
		for _, o := range objs {
			ref := metav1.GetControllerOf(o)
			if ref == nil {
				continue
			}
			if k := snapshot.KindNamed(ref.Kind); k == nil || !k.Workload {
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
	check(metas(s.Jobs))

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

// kindMetas lists the metadata of the snapshot's objects of one kind.
func kindMetas(k *snapshot.Kind, s *snapshot.Snapshot) []metav1.Object {
	var out []metav1.Object
	k.Each(s, func(o runtime.Object) {
		if m, ok := o.(metav1.Object); ok {
			out = append(out, m)
		}
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
	if podList {
		return snapshot.Visibility{}, false
	}
	workloads := 0
	for i := range snapshot.Kinds {
		if k := &snapshot.Kinds[i]; k.Workload {
			workloads += k.Len(s)
		}
	}
	if workloads == 0 {
		return snapshot.Visibility{}, false
	}
	return snapshot.Visibility{Kind: "Pod", Reason: "not in the dump"}, true
}

// listedKinds are the kinds whose absence from a dump is a gap rather than none of them: a
// list of the kind, even an empty one, or one object of it says the dump holds them.
type listedKinds uint8

const (
	listedPods listedKinds = 1 << iota
	listedVolumes
)

// listedOf is the listedKinds bit of a kind, or 0.
func listedOf(gvk schema.GroupVersionKind) listedKinds {
	if gvk.Group != "" {
		return 0
	}
	switch gvk.Kind {
	case "Pod":
		return listedPods
	case "PersistentVolume":
		return listedVolumes
	}
	return 0
}

// missingVolumes records that a dump holds claims waiting for a volume but no list of
// PersistentVolumes (a dump written before the tool read them, `kubectl cluster-info dump`,
// which writes none), in the namespaces of those claims: which of a claim's fields no volume
// satisfies is then unknown, not "there are no volumes". An empty PersistentVolumeList is a
// cluster without volumes.
func missingVolumes(s *snapshot.Snapshot, listed bool) []snapshot.Visibility {
	if listed {
		return nil
	}
	var out []snapshot.Visibility
	seen := map[string]bool{}
	for _, c := range s.PersistentVolumeClaims {
		if c.Status.Phase != corev1.ClaimPending || c.Spec.VolumeName != "" || seen[c.Namespace] {
			continue
		}
		seen[c.Namespace] = true
		out = append(out, snapshot.Visibility{Kind: "PersistentVolume", Namespace: c.Namespace, Reason: "not in the dump"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace < out[j].Namespace })
	return out
}

// mixedMoments is how far apart two files' node heartbeats may be in one dump; nodes report at
// least every five minutes, so a dump taken at one moment holds heartbeats within that.
const mixedMoments = 15 * time.Minute

// duplicate is an object read twice with different content.
type duplicate struct {
	key               snapshot.ObjectKey
	first, second     string
	firstRV, secondRV string
	kept              string
}

// notes are what the reader saw that makes the dump less than one moment of one cluster:
// objects read twice with different content, and files whose nodes report different moments.
func (r *reader) notes() []snapshot.Visibility {
	var out []snapshot.Visibility
	for _, d := range r.duplicates {
		out = append(out, snapshot.Visibility{
			Kind: d.key.Kind, Namespace: d.key.Namespace,
			Reason: fmt.Sprintf("%s is in the dump twice with different content (resourceVersion %s in %s, %s in %s); the copy from %s is used, as the newer",
				d.key.Name, orNone(d.firstRV), d.first, orNone(d.secondRV), d.second, d.kept),
		})
	}
	if len(r.clocks) > 1 {
		var oldFile, newFile string
		var oldT, newT time.Time
		for f, t := range r.clocks {
			if oldT.IsZero() || t.Before(oldT) || (t.Equal(oldT) && f < oldFile) {
				oldFile, oldT = f, t
			}
			if t.After(newT) || (t.Equal(newT) && f < newFile) {
				newFile, newT = f, t
			}
		}
		if gap := newT.Sub(oldT); gap > mixedMoments {
			out = append(out, snapshot.Visibility{Reason: fmt.Sprintf(
				"the dump mixes moments: nodes in %s last reported at %s, in %s at %s, %s apart; ages count from the newer, so objects dumped with %s read up to %s older than they were",
				oldFile, oldT.Format(time.RFC3339), newFile, newT.Format(time.RFC3339), gap.Round(time.Second), oldFile, gap.Round(time.Second))})
		}
	}
	if v, ok := r.logsCut.note(); ok {
		out = append(out, v)
	}
	if v, ok := r.badNames.note(); ok {
		out = append(out, v)
	}
	return append(out, r.logNotes.notes()...)
}

// logsCut counts the container logs of which only the tail was kept, and names the first.
type logsCut struct {
	logs, lines int
	first       string
	firstLines  int
}

func (c *logsCut) add(l snapshot.ContainerLog, dropped int) {
	if c.logs == 0 {
		prev := ""
		if l.Previous {
			prev = " (previous)"
		}
		c.first, c.firstLines = fmt.Sprintf("container %s of pod %s/%s%s", l.Container, l.Namespace, l.Pod, prev), dropped
	}
	c.logs++
	c.lines += dropped
}

// note says which logs were cut; no log means no note.
func (c *logsCut) note() (snapshot.Visibility, bool) {
	bound := fmt.Sprintf("at most %s and %d lines", mib(maxLogTailBytes), maxLogTailLines)
	switch c.logs {
	case 0:
		return snapshot.Visibility{}, false
	case 1:
		return snapshot.Visibility{Kind: "pods/log", Reason: fmt.Sprintf(
			"the log of %s is longer than the tail read of each container (%s): its first %d lines were not read", c.first, bound, c.firstLines)}, true
	default:
		return snapshot.Visibility{Kind: "pods/log", Reason: fmt.Sprintf(
			"%d container logs are longer than the tail read of each container (%s): %d of their first lines were not read (%d of %s)", c.logs, bound, c.lines, c.firstLines, c.first)}, true
	}
}

func orNone(rv string) string {
	if rv == "" {
		return "none"
	}
	return rv
}

package diagnose

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// withStatusResources is s with every container status carrying what a v1.37 kubelet writes
// beside the state (convertToAPIContainerStatuses: allocatedResources and resources from the
// container's, its mounts with recursiveReadOnly, the user it runs as), on copies of the pods.
func withStatusResources(s *snapshot.Snapshot) (*snapshot.Snapshot, int) {
	next := cloneSnapshot(s)
	next.Pods = make([]*corev1.Pod, len(s.Pods))
	filled := 0
	for i, p := range s.Pods {
		p = p.DeepCopy()
		fill := func(specs []corev1.Container, css []corev1.ContainerStatus) {
			for j := range css {
				cs := &css[j]
				for _, c := range specs {
					if c.Name != cs.Name {
						continue
					}
					cs.AllocatedResources = corev1.ResourceList{}
					for n, q := range c.Resources.Requests {
						cs.AllocatedResources[n] = q
					}
					if len(cs.AllocatedResources) == 0 {
						cs.AllocatedResources[corev1.ResourceCPU] = resource.MustParse("50m")
					}
					cs.Resources = c.Resources.DeepCopy()
					for _, m := range c.VolumeMounts {
						cs.VolumeMounts = append(cs.VolumeMounts, corev1.VolumeMountStatus{
							Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly,
							RecursiveReadOnly: ptr(corev1.RecursiveReadOnlyDisabled),
						})
					}
					cs.User = &corev1.ContainerUser{Linux: &corev1.LinuxContainerUser{UID: 0, GID: 0, SupplementalGroups: []int64{0}}}
					filled++
				}
			}
		}
		fill(p.Spec.InitContainers, p.Status.InitContainerStatuses)
		fill(p.Spec.Containers, p.Status.ContainerStatuses)
		next.Pods[i] = p
	}
	return next, filled
}

// A watch stores pods without the container statuses' resources, mounts and user
// (snapshot.TrimWatched): nothing the engine reports reads them, over every scenario and fixture
// dump. A pod with them and the same pod trimmed are diagnosed alike, and the trim leaves
// nothing of them.
func TestTheFieldsAWatchTrimsAreNotRead(t *testing.T) {
	filled := 0
	for _, vd := range verdictDirs(t) {
		t.Run(vd.ID, func(t *testing.T) {
			s := loadDump(t, vd.Dir, loadExpected(t, vd.Dir))
			with, n := withStatusResources(s)
			filled += n
			want := Diagnose(with)
			trimmed, _ := withStatusResources(s)
			for _, p := range trimmed.Pods {
				snapshot.TrimWatched(p)
				for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
					if cs.AllocatedResources != nil || cs.Resources != nil || cs.VolumeMounts != nil || cs.User != nil {
						t.Fatalf("pod %s: container %s keeps what the trim drops", p.Name, cs.Name)
					}
				}
			}
			if got := Diagnose(trimmed); !reflect.DeepEqual(withListsWrittenOut(got), withListsWrittenOut(want)) {
				t.Fatal("the trimmed pods are diagnosed otherwise")
			}
		})
	}
	if filled < 20 {
		t.Fatalf("only %d container statuses filled", filled)
	}
}

// withListsWrittenOut is r with each workload's observations and copies written out as lists: a report
// keeps the objects its lists are written from, and two snapshots whose pods differ only in
// what the engine does not read are to be diagnosed alike, observations and all.
func withListsWrittenOut(r *Report) *Report {
	out := *r
	out.Workloads = slices.Clone(r.Workloads)
	for i := range out.Workloads {
		w := &out.Workloads[i]
		if w.Detail == nil {
			continue
		}
		d := *w.Detail
		d.observations = obsLog{kept: d.Observations()}
		d.copies = copyList{given: d.Copies()}
		w.Detail = &d
	}
	return &out
}

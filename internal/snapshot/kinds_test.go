package snapshot

import (
	"reflect"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestKindsCoverTheSnapshot holds the kind table to the Snapshot: every slice of objects has
// exactly one entry, so a kind added to one and not the other is not silently left unread,
// unwritten or unfiltered.
func TestKindsCoverTheSnapshot(t *testing.T) {
	st := reflect.TypeOf(Snapshot{})
	fields := map[reflect.Type]string{}
	for i := 0; i < st.NumField(); i++ {
		f := st.Field(i)
		if f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Pointer && f.Type.Elem().Elem().Kind() == reflect.Struct {
			fields[f.Type.Elem()] = f.Name
		}
	}
	seen := map[string]bool{}
	files := map[string]bool{}
	for i := range Kinds {
		k := &Kinds[i]
		obj := k.New()
		name, ok := fields[reflect.TypeOf(obj)]
		if !ok {
			t.Errorf("kind %s holds %T, which no Snapshot field holds", k.Kind, obj)
			continue
		}
		if seen[name] {
			t.Errorf("Snapshot.%s has two kind entries", name)
		}
		seen[name] = true
		if k.GVK.Kind != k.Kind || k.Resource == "" || k.File == "" {
			t.Errorf("kind %s: incomplete entry %+v", k.Kind, k)
		}
		if files[k.File] {
			t.Errorf("kind %s: dump file %s is another kind's", k.Kind, k.File)
		}
		files[k.File] = true
		if KindFor(k.GVK) != k || KindNamed(k.Kind) != k {
			t.Errorf("kind %s is not found by its GVK or name", k.Kind)
		}
		if k.Follows != "" && KindNamed(k.Follows) == nil {
			t.Errorf("kind %s follows %s, which is not a kind", k.Kind, k.Follows)
		}
	}
	for _, name := range fields {
		if !seen[name] {
			t.Errorf("Snapshot.%s has no kind entry", name)
		}
	}
}

// TestKindOperations puts, replaces, counts and filters through the table's typed operations.
func TestKindOperations(t *testing.T) {
	s := &Snapshot{}
	k := KindNamed("CronJob")
	a := &batchv1.CronJob{ObjectMeta: om("a", "nightly")}
	b := &batchv1.CronJob{ObjectMeta: om("b", "hourly")}
	if i, ok := k.Put(s, a, -1); !ok || i != 0 {
		t.Fatalf("Put = %d, %v", i, ok)
	}
	if i, _ := k.Put(s, b, -1); i != 1 {
		t.Fatalf("second Put = %d", i)
	}
	if _, ok := k.Put(s, &batchv1.Job{ObjectMeta: om("a", "x")}, -1); ok {
		t.Error("a Job was put as a CronJob")
	}
	newer := a.DeepCopy()
	newer.Spec.Schedule = "0 3 * * *"
	if i, _ := k.Put(s, newer, 0); i != 0 || s.CronJobs[0] != newer {
		t.Error("Put at an index did not replace the element")
	}
	if k.Len(s) != 2 || s.Len() != 2 {
		t.Errorf("Len = %d, snapshot Len = %d, want 2", k.Len(s), s.Len())
	}
	items, ok := k.Items(s, func(o metav1.Object) bool { return o.GetNamespace() == "b" }).([]batchv1.CronJob)
	if !ok || len(items) != 1 || items[0].Name != "hourly" || items[0].Kind != "" {
		t.Errorf("Items = %+v", items)
	}
	if got := names(s.FilterNamespaces([]string{"a"}).CronJobs); !slices.Equal(got, []string{"a/nightly"}) {
		t.Errorf("FilterNamespaces kept %v", got)
	}
}

// TestFilterWorkloadsCronJobsAndTheirJobs: a Job a CronJob controls follows it; one made
// without is a workload selected on its own labels.
func TestFilterWorkloadsCronJobsAndTheirJobs(t *testing.T) {
	s := &Snapshot{}
	for _, name := range []string{"nightly", "hourly"} {
		cj := &batchv1.CronJob{ObjectMeta: om("a", name)}
		cj.Labels = map[string]string{"tier": name}
		s.CronJobs = append(s.CronJobs, cj)
		j := &batchv1.Job{ObjectMeta: om("a", name+"-29396100")}
		j.Labels = map[string]string{"batch.kubernetes.io/job-name": j.Name}
		j.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: name, UID: cj.UID, Controller: ptr.To(true)}}
		s.Jobs = append(s.Jobs, j)
	}
	bare := &batchv1.Job{ObjectMeta: om("a", "migrate")}
	bare.Labels = map[string]string{"tier": "nightly"}
	s.Jobs = append(s.Jobs, bare)
	sel, err := ParseSelector("tier=nightly", "")
	if err != nil {
		t.Fatal(err)
	}
	got := s.FilterWorkloads(sel)
	if n := names(got.CronJobs); !slices.Equal(n, []string{"a/nightly"}) {
		t.Errorf("cronjobs = %v, want a/nightly", n)
	}
	if n := names(got.Jobs); !slices.Equal(n, []string{"a/nightly-29396100", "a/migrate"}) {
		t.Errorf("jobs = %v, want the nightly CronJob's and the bare one the label selects", n)
	}
}

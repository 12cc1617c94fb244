package diagnose

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// TestReadinessGapWrittenAsFieldPath holds the readiness gap's path and message, written
// directly, to what field.Path.String and fmt.Sprintf write: under the shared template path,
// under a path of the same text made apart (not the shared one), and under a CronJob's.
func TestReadinessGapWrittenAsFieldPath(t *testing.T) {
	for _, tp := range []*field.Path{specTemplate, field.NewPath("spec", "template"), field.NewPath("spec", "jobTemplate", "spec", "template")} {
		w := stWorkload(nil)
		w.TemplatePath = tp
		cs := &w.Template.Spec.Containers
		(*cs)[0].ReadinessProbe = nil
		// Twelve containers: the gap of a two-digit index too.
		for i := 1; i < 12; i++ {
			*cs = append(*cs, corev1.Container{Name: fmt.Sprintf("side-%d", i)})
		}
		w.Snap.Services = []*corev1.Service{stService("api", map[string]string{"app": "api"}, intstr.FromString("http"))}
		stAttachServices(w)
		var want []SignalGap
		for i, c := range *cs {
			if c.ReadinessProbe != nil {
				continue
			}
			want = append(want, SignalGap{
				Object: "Deployment/api",
				Path:   tp.Child("spec").Child("containers").Index(i).Child("readinessProbe").String(),
				Message: fmt.Sprintf("container %s serves Service %s but has no readiness probe: it receives traffic as soon as it starts, ready or not",
					c.Name, "api"),
			})
		}
		r := newGapRanker(w)
		r.readinessBehindService()
		if len(r.gaps) != len(want) || len(want) < 12 {
			t.Fatalf("%s: %d gaps, want %d (at least 12)", tp, len(r.gaps), len(want))
		}
		for i := range want {
			if r.gaps[i] != want[i] {
				t.Errorf("%s: gap %d is %+v, want %+v", tp, i, r.gaps[i], want[i])
			}
		}
	}
}

// TestSortStableAsSliceStable: sortStable orders like sort.SliceStable, ties kept in their
// order, on lists with many ties and on lists of distinct keys, short and long.
func TestSortStableAsSliceStable(t *testing.T) {
	type item struct{ key, at int }
	rng := rand.New(rand.NewPCG(4, 12))
	for _, n := range []int{0, 1, 2, 5, 13, 40, 300} {
		for _, keys := range []int{2, 7, 1000} {
			in := make([]item, n)
			for i := range in {
				in[i] = item{key: rng.IntN(keys), at: i}
			}
			want := append([]item(nil), in...)
			sort.SliceStable(want, func(i, j int) bool { return want[i].key < want[j].key })
			got := append([]item(nil), in...)
			sortStable(got, func(a, b item) bool { return a.key < b.key })
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("n=%d keys=%d: at %d got %v, want %v", n, keys, i, got[i], want[i])
				}
			}
		}
	}
}

// TestEvidenceBuilderAsMap holds the builder's items, a list scanned and then a map, to what a
// map of items and a list of keys as added held before: a few items and many (past
// smallUIDs), keys looked up and put again, an item replaced by put.
func TestEvidenceBuilderAsMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 4))
	for _, distinct := range []int{3, smallUIDs, 3 * smallUIDs} {
		b := newEvidence()
		items := map[evidenceKey]*Evidence{}
		var order []evidenceKey
		for n := 0; n < 8*distinct; n++ {
			k := evidenceKey{SourceLog, "LogLine", strconv.Itoa(rng.IntN(distinct))}
			if rng.IntN(5) == 0 {
				e := &Evidence{Kind: k.kind, Message: "put " + strconv.Itoa(n), Source: k.src, Objects: []string{}}
				b.put(k, e)
				items[k] = e
				order = append(order, k)
				continue
			}
			got := b.add(k.src, k.kind, k.key, "added "+strconv.Itoa(n), "Pod/p"+strconv.Itoa(n%7), 1, nil)
			if items[k] == nil {
				items[k] = got
				order = append(order, k)
			} else if got != items[k] {
				t.Fatalf("%d distinct: add of %v returned another item", distinct, k)
			}
		}
		if len(b.order) != len(order) {
			t.Fatalf("%d distinct: %d listed, want %d", distinct, len(b.order), len(order))
		}
		for i, j := range b.order {
			if b.keys[j] != order[i] || b.vals[j] != items[order[i]] {
				t.Fatalf("%d distinct: item %d is %v, want %v", distinct, i, b.keys[j], order[i])
			}
		}
		if distinct > smallUIDs && b.index == nil {
			t.Errorf("%d distinct: no index", distinct)
		}
	}
}

// TestServiceCandidatesByFirstKeys holds the candidates found by asking copies for the keys
// Services are filed under to those found by walking every label of the template and the
// copies: Services filed under several keys, selectors of one and of three pairs, copies
// with labels their template lacks (a revision's hash, a hand-added label), values that
// differ from the template's, and a namespace with no selector at all.
func TestServiceCandidatesByFirstKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 100))
	keys := []string{"app", "tier", "pod-template-hash", "team", "zone"}
	vals := []string{"a", "b", "c"}
	for round := 0; round < 200; round++ {
		ns := "ns" + strconv.Itoa(round%3)
		var svcs []*corev1.Service
		for i := range rng.IntN(12) {
			sel := map[string]string{}
			if round%3 != 2 {
				for range 1 + rng.IntN(3) {
					sel[keys[rng.IntN(len(keys))]] = vals[rng.IntN(len(vals))]
				}
			}
			svc := &corev1.Service{Spec: corev1.ServiceSpec{Selector: sel}}
			svc.Namespace, svc.Name = ns, "svc-"+strconv.Itoa(i)
			if rng.IntN(4) == 0 {
				svc.Labels = map[string]string{"app.kubernetes.io/name": "web"}
			}
			svcs = append(svcs, svc)
		}
		labels := func() map[string]string {
			m := map[string]string{}
			for range rng.IntN(4) {
				m[keys[rng.IntN(len(keys))]] = vals[rng.IntN(len(vals))]
			}
			return m
		}
		w := &workload{Namespace: ns, Name: "svc-" + strconv.Itoa(rng.IntN(14)), Template: &corev1.PodTemplateSpec{}}
		w.Template.Labels = labels()
		if rng.IntN(3) == 0 {
			w.Template.Labels["app.kubernetes.io/name"] = "web"
		}
		for range rng.IntN(6) {
			p := &corev1.Pod{}
			p.Labels = labels()
			for k, v := range w.Template.Labels {
				if rng.IntN(5) != 0 {
					p.Labels[k] = v
				}
			}
			w.Pods = append(w.Pods, p)
		}
		ix := serviceIndexOf(svcs)
		byKeys := ix.candidates(w)
		// More keys than the copies are asked for: the labels are walked.
		ix.in(ns).firstKeys = make([]string, smallUIDs+1)
		walked := ix.candidates(w)
		if len(byKeys) != len(walked) {
			t.Fatalf("round %d: %d candidates by keys, %d by walking the labels", round, len(byKeys), len(walked))
		}
		for i := range walked {
			if byKeys[i] != walked[i] {
				t.Fatalf("round %d: candidate %d is %s by keys, %s by walking", round, i, byKeys[i].Name, walked[i].Name)
			}
		}
	}
}

// TestDiagnoseOnePassAsTwo holds Diagnose, which reads and diagnoses each workload in one go on
// two workers, to reading every workload first and then diagnosing them on one worker, whole
// reports compared: every scenario (bare ReplicaSets, StatefulSets, DaemonSets, Jobs and
// CronJobs among them), the mixed-log cluster, and a healthy and a broken synthetic cluster.
func TestDiagnoseOnePassAsTwo(t *testing.T) {
	cases := map[string]func() *snapshot.Snapshot{
		"mixed logs":     mixedLogCluster,
		"healthy 300x10": func() *snapshot.Snapshot { return syntheticHealthyClusterOf(300, 40, 10) },
		"synthetic 300":  func() *snapshot.Snapshot { return syntheticCluster(300, 300) },
	}
	for _, v := range verdictDirs(t) {
		cases[v.ID] = func() *snapshot.Snapshot { return loadDump(t, v.Dir, loadExpected(t, v.Dir)) }
	}
	twoPass := func(s *snapshot.Snapshot) *Report {
		s.Index()
		r := newReport(s)
		r.Workloads = diagnoseAll(s, collectWorkloads(s), nil, 1)
		for i := range r.Workloads {
			r.Summary[r.Workloads[i].Shape]++
		}
		sortWorkloads(r)
		groupSharedDependencies(r)
		return r
	}
	bare := 0
	for name, build := range cases {
		s := build()
		got, want := Diagnose(s), twoPass(build())
		if len(got.Workloads) == 0 {
			t.Fatalf("%s: no workload", name)
		}
		for i := range want.Workloads {
			if want.Workloads[i].Kind == "ReplicaSet" {
				bare++
			}
		}
		if !reflect.DeepEqual(got, want) {
			for i := range got.Workloads {
				if !reflect.DeepEqual(got.Workloads[i], want.Workloads[i]) {
					t.Errorf("%s: %s/%s differs", name, got.Workloads[i].Kind, got.Workloads[i].Name)
					break
				}
			}
			t.Errorf("%s: the one-pass report differs from the two-pass one", name)
		}
	}
	if bare == 0 {
		t.Error("no case has a ReplicaSet diagnosed on its own")
	}
}

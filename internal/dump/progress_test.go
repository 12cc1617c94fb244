package dump

import (
	"context"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// readLog is what a read's hooks were told, in order.
type readLog struct {
	reports []Progress
	// handed are the workload snapshots handed over, and how many reports preceded each.
	handed []*snapshot.Snapshot
	before []int
}

func (l *readLog) options() Options {
	return Options{
		Progress: func(p Progress) {
			p.Counts = maps.Clone(p.Counts)
			l.reports = append(l.reports, p)
		},
		Workloads: func(s *snapshot.Snapshot) {
			l.handed = append(l.handed, s)
			l.before = append(l.before, len(l.reports))
		},
	}
}

// lowerThrottles makes every check a report and every move from workloads a hand-over, so a
// small dump shows the order a large one has.
func lowerThrottles(t *testing.T) {
	t.Helper()
	every, wl := progressEvery, workloadsEvery
	progressEvery, workloadsEvery = 0, 0
	t.Cleanup(func() { progressEvery, workloadsEvery = every, wl })
}

// checkFinalCounts compares the last report with the snapshot read.
func checkFinalCounts(t *testing.T, l *readLog, snap *snapshot.Snapshot, files int, bytes int64) {
	t.Helper()
	if len(l.reports) == 0 {
		t.Fatal("no progress reported")
	}
	last := l.reports[len(l.reports)-1]
	for i := range snapshot.Kinds {
		k := &snapshot.Kinds[i]
		if got, want := last.Counts[k.Kind], k.Len(snap); got != want {
			t.Errorf("last report counts %d %s, the snapshot holds %d", got, k.Kind, want)
		}
	}
	if last.Objects != snap.Len() || last.Files != files || last.Bytes != bytes {
		t.Errorf("last report: %d objects, %d files, %d bytes; want %d, %d, %d", last.Objects, last.Files, last.Bytes, snap.Len(), files, bytes)
	}
	for i := 1; i < len(l.reports); i++ {
		if l.reports[i].Objects < l.reports[i-1].Objects {
			t.Fatalf("report %d counts %d objects, fewer than the %d before it", i, l.reports[i].Objects, l.reports[i-1].Objects)
		}
	}
}

// checkWorkloadsOnly checks that a hand-over holds the workload kinds alone.
func checkWorkloadsOnly(t *testing.T, s *snapshot.Snapshot) {
	t.Helper()
	for i := range snapshot.Kinds {
		k := &snapshot.Kinds[i]
		if !k.Workload && k.Len(s) > 0 {
			t.Errorf("the workloads handed over hold %d %s", k.Len(s), k.Kind)
		}
	}
	if s.Source.Type != snapshot.SourceDump || s.ReferenceTime.IsZero() || len(s.Namespaces) == 0 {
		t.Errorf("the workloads handed over lack their source, time or namespaces: %+v %v %v", s.Source, s.ReferenceTime, s.Namespaces)
	}
}

func TestProgressReadsTheWorkloadListsOfADirectoryBeforeItsPods(t *testing.T) {
	lowerThrottles(t)
	want := scaleSnapshot(t, 300, 100, 3)
	dir := filepath.Join(t.TempDir(), "dump")
	if err := Write(dir, want, false); err != nil {
		t.Fatal(err)
	}
	files, bytes := readableFiles(t, dir)
	plain, err := Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}

	var l readLog
	got, err := ReadContext(context.Background(), dir, nil, l.options())
	if err != nil {
		t.Fatal(err)
	}
	if d := differences(plain, got); len(d) > 0 {
		t.Fatalf("read with hooks differs from a read without: %v", d)
	}
	checkFinalCounts(t, &l, got, files, bytes)

	// Before the pods, then again as each namespace's ReplicaSets are read after its pods.
	if len(l.handed) != 4 {
		t.Fatalf("workloads handed over %d times, want before the pods and after each of the 3 namespaces' ReplicaSets", len(l.handed))
	}
	for i := 1; i < 4; i++ {
		h := l.handed[i]
		if len(h.ReplicaSets) != 100*i || len(h.Deployments) != 300 {
			t.Errorf("hand-over %d holds %d ReplicaSets and %d Deployments, want %d and 300", i, len(h.ReplicaSets), len(h.Deployments), 100*i)
		}
		if p := l.reports[l.before[i]-1]; p.Counts["Pod"] != i*len(want.Pods)/3 {
			t.Errorf("hand-over %d came after %d pods, want after the %d of its namespace and those before", i, p.Counts["Pod"], i*len(want.Pods)/3)
		}
	}
	early := l.handed[0]
	checkWorkloadsOnly(t, early)
	// Every namespace's Deployments, before the first pod of any; the ReplicaSets, a
	// Deployment's revisions, come in walk order after the pods.
	if len(early.Deployments) != 300 || len(early.ReplicaSets) != 0 {
		t.Errorf("handed over %d Deployments and %d ReplicaSets, want all 300 Deployments and no ReplicaSet", len(early.Deployments), len(early.ReplicaSets))
	}
	for _, p := range l.reports[:l.before[0]] {
		if p.Counts["Pod"] > 0 || p.Counts["Event"] > 0 || p.Counts["ReplicaSet"] > 0 {
			t.Fatalf("a report before the hand-over counts %d pods, %d events and %d ReplicaSets", p.Counts["Pod"], p.Counts["Event"], p.Counts["ReplicaSet"])
		}
	}
	during := false
	for _, p := range l.reports[l.before[0]:] {
		during = during || (p.Counts["Pod"] > 0 && p.Counts["Pod"] < len(want.Pods))
	}
	if !during {
		t.Error("no report while the pods were being read")
	}
}

func TestProgressHandsTheWorkloadsOfAStreamOverWhenItsWorkloadListsEnd(t *testing.T) {
	lowerThrottles(t)
	want := scaleSnapshot(t, 300, 100, 0)
	dir := filepath.Join(t.TempDir(), "dump")
	if err := Write(dir, want, false); err != nil {
		t.Fatal(err)
	}
	// One file of three namespaces, each as kubectl get pods,deploy,rs,events writes it:
	// pods first, then the workloads, then their events.
	stream := filepath.Join(t.TempDir(), "stream.json")
	out, err := os.Create(stream)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"team-000", "team-001", "team-002"} {
		for _, f := range []string{"pods.json", "deployments.json", "replicasets.json", "events.json", "services.json"} {
			in, err := os.Open(filepath.Join(dir, ns, f))
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.Copy(out, in)
			_ = in.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(stream)
	if err != nil {
		t.Fatal(err)
	}

	var l readLog
	got, err := ReadContext(context.Background(), stream, nil, l.options())
	if err != nil {
		t.Fatal(err)
	}
	checkFinalCounts(t, &l, got, 1, info.Size())
	if len(l.handed) != 3 {
		t.Fatalf("workloads handed over %d times, want once per namespace", len(l.handed))
	}
	for i, early := range l.handed {
		checkWorkloadsOnly(t, early)
		if n := len(early.Deployments); n != 100*(i+1) {
			t.Errorf("hand-over %d holds %d Deployments, want the %d read so far", i, n, 100*(i+1))
		}
		// Handed over at the first event after the workloads, with the counts as they were
		// then: the namespace's first event read, the later namespaces' pods still to come.
		last := l.reports[l.before[i]-1]
		wantEvents, wantPods := i*len(want.Events)/3+1, (i+1)*len(want.Pods)/3
		if last.Kind != "Event" || last.Counts["Event"] != wantEvents || last.Counts["Pod"] != wantPods {
			t.Errorf("hand-over %d came after %d events and %d pods (reading %s), want %d and %d, reading Event", i,
				last.Counts["Event"], last.Counts["Pod"], last.Kind, wantEvents, wantPods)
		}
	}
}

func TestProgressSnapshotWithProgressNamesTheKindReadLast(t *testing.T) {
	lowerThrottles(t)
	dir := filepath.Join(t.TempDir(), "dump")
	if err := Write(dir, scaleSnapshot(t, 20, 10, 0), false); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	last := ""
	var early *snapshot.Snapshot
	snap, err := Source{Path: dir}.SnapshotWithRows(context.Background(), func(what string, n int) {
		counts[what], last = n, what
	}, func(s *snapshot.Snapshot) { early = s })
	if err != nil {
		t.Fatal(err)
	}
	if early == nil || len(early.Deployments) != 20 {
		t.Fatalf("rows were not handed the 20 Deployments: %v", early)
	}
	for i := range snapshot.Kinds {
		k := &snapshot.Kinds[i]
		if n := k.Len(snap); counts[k.Resource] != n {
			t.Errorf("progress counted %d %s, the snapshot holds %d", counts[k.Resource], k.Resource, n)
		}
	}
	// The walk reads services.json last in each namespace, after events and pods.
	if last != "services" {
		t.Errorf("the last report names %q, want the kind read last, services", last)
	}
}

// readableFiles counts the files a directory read opens and their bytes.
func readableFiles(t *testing.T, dir string) (int, int64) {
	t.Helper()
	files, err := dumpFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var bytes int64
	for _, f := range files {
		if !readExtensions[strings.ToLower(filepath.Ext(f))] {
			continue
		}
		info, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		n++
		bytes += info.Size()
	}
	return n, bytes
}

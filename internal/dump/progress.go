package dump

import (
	"context"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Progress is how far a read has got, as Options.Progress is told it.
type Progress struct {
	// Kind is the kind of the object read last ("Pod"); empty before the first.
	Kind string
	// Counts are the objects read so far per kind, by Kind name; the map is the caller's.
	Counts map[string]int
	// Objects, Files and Bytes are what has been read in all: objects filed (an object read
	// twice counts once), files opened and bytes taken from them.
	Objects int
	Files   int
	Bytes   int64
}

// progressEvery is how often a read reports its progress at most: often enough for a
// progress line to move, rarely enough to cost nothing beside the decoding. Tests lower it.
var progressEvery = 100 * time.Millisecond

// progressCheck is how many objects are filed between two looks at the clock.
const progressCheck = 64

// workloadsEvery is how often a read that meets workloads again after other kinds (a stream of
// several namespaces) hands them over again at most; each hand-over copies every workload read.
// Tests lower it.
var workloadsEvery = 500 * time.Millisecond

// progress reports a read's progress and hands its workloads over. It is used from the read's
// own goroutine alone, so it counts without locks; a nil *progress does nothing.
type progress struct {
	opts Options
	now  func() time.Time
	// last is when progress was reported last, handed when the workloads were.
	last, handed time.Time
	filed        int
	// reported is the objects filed at the last report.
	reported int
	// inWorkloads is true while the objects filed are of workload kinds; the move from them
	// to another kind is when the workloads read so far are handed over.
	inWorkloads bool
	// pending is true when workloads were read that are not handed over yet.
	pending bool
	kind    string
}

func newProgress(opts Options) *progress {
	if opts.Progress == nil && opts.Workloads == nil {
		return nil
	}
	return &progress{opts: opts, now: time.Now}
}

// object notes one object of kind filed into r's snapshot.
func (p *progress) object(r *reader, kind string) {
	if p == nil {
		return
	}
	p.kind = kind
	workload := workloadKinds[kind]
	if workload != p.inWorkloads {
		p.inWorkloads = workload
		if !workload {
			p.handOver(r, false)
		}
	}
	if workload {
		p.pending = true
	}
	p.filed++
	if p.filed%progressCheck == 0 {
		if now := p.now(); now.Sub(p.last) >= progressEvery {
			p.report(r)
		}
	}
}

// file notes a file about to be opened. A list named for its kind is that kind's read from now
// on, and what was read before is reported: a read that waits for the file (a pipe, a slow
// disk) says what it waits for.
func (p *progress) file(r *reader, name string) {
	if p == nil {
		return
	}
	kind := p.kind
	if k, ok := fileKinds[filepath.Base(name)]; ok {
		kind = k
	}
	if kind != p.kind || r.objects != p.reported || p.now().Sub(p.last) >= progressEvery {
		p.kind = kind
		p.report(r)
	}
}

// done reports the whole read and hands over workloads not handed over yet; the caller then
// gets the snapshot itself.
func (p *progress) done(r *reader) {
	if p == nil {
		return
	}
	p.handOver(r, true)
	p.report(r)
}

func (p *progress) report(r *reader) {
	p.last, p.reported = p.now(), r.objects
	if p.opts.Progress == nil {
		return
	}
	counts := map[string]int{}
	for i := range snapshot.Kinds {
		k := &snapshot.Kinds[i]
		if n := k.Len(r.snap); n > 0 {
			counts[k.Kind] = n
		}
	}
	p.opts.Progress(Progress{Kind: p.kind, Counts: counts, Objects: r.objects, Files: r.files, Bytes: r.read})
}

// handOver gives Options.Workloads a snapshot of the workloads read so far, unless none was
// read since the last hand-over or that was a moment ago. At the end it hands them over only
// if it never did: the snapshot itself follows at once.
func (p *progress) handOver(r *reader, final bool) {
	if p.opts.Workloads == nil || !p.pending {
		return
	}
	now := p.now()
	if !final && !p.handed.IsZero() && now.Sub(p.handed) < workloadsEvery {
		return
	}
	if final && !p.handed.IsZero() {
		// The snapshot itself follows at once; one more copy would only delay it.
		return
	}
	p.pending, p.handed = false, now
	early := &snapshot.Snapshot{Source: snapshot.SourceInfo{Type: snapshot.SourceDump}}
	for i := range snapshot.Kinds {
		k := &snapshot.Kinds[i]
		if !k.Workload {
			continue
		}
		var objs []runtime.Object
		k.Each(r.snap, func(o runtime.Object) { objs = append(objs, o) })
		k.Add(early, objs)
	}
	for ns := range r.namespaces {
		early.Namespaces = append(early.Namespaces, ns)
	}
	sort.Strings(early.Namespaces)
	early.ReferenceTime = newestTime(early)
	if r.opts.At != nil {
		early.ReferenceTime = r.opts.At.UTC()
	}
	// The counts go first, so a console shows how far the read is beside the rows.
	p.report(r)
	p.opts.Workloads(early)
}

// earlyKind reports whether a kind's list is read first from a directory: the workloads a row
// stands for without its copies. ReplicaSets are not: they are a Deployment's revisions, up
// to ten per Deployment with whole pod templates, and a row only when no Deployment owns them;
// read first, they would delay the rows and stay in memory while the pods are decoded (34 MB
// more at the peak of a 20,000-pod dump). They are handed over again once read.
func earlyKind(k *snapshot.Kind) bool { return k.Workload && k.Kind != "ReplicaSet" }

// workloadKinds are the kinds a diagnosis is about: a read moving on from them to another
// kind hands the workloads over.
var workloadKinds = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range snapshot.Kinds {
		if k.Workload {
			m[k.Kind] = true
		}
	}
	return m
}()

// fileKinds are the kinds of the lists a dump directory names for their kind.
var fileKinds = func() map[string]string {
	m := map[string]string{}
	for _, k := range snapshot.Kinds {
		if k.File != "" {
			m[k.File] = k.Kind
		}
	}
	return m
}()

// workloadFiles are the file names the early kinds' lists have in the layouts of
// kubectl-diagnose dump and kubectl cluster-info dump --output-directory.
var workloadFiles = func() map[string]bool {
	m := map[string]bool{}
	for i := range snapshot.Kinds {
		if k := &snapshot.Kinds[i]; earlyKind(k) && k.File != "" {
			m[k.File] = true
		}
	}
	return m
}()

// workloadsFirst orders a directory's files so the workloads' lists are read before pods,
// events and logs, and each group keeps the walk's order: a console can list the workloads
// while the rest is read. Each kind's objects come from the same files in the same order as
// before, so the snapshot is the same.
func workloadsFirst(files []string) []string {
	out := make([]string, 0, len(files))
	for _, f := range files {
		if workloadFiles[filepath.Base(f)] {
			out = append(out, f)
		}
	}
	for _, f := range files {
		if !workloadFiles[filepath.Base(f)] {
			out = append(out, f)
		}
	}
	return out
}

// SnapshotWithProgress reads the dump as Snapshot does, telling progress the plural of the
// kind read last and its count (as kubectl names it: "pods", 12400) along with the counts of
// the other kinds that moved since the last report.
func (s Source) SnapshotWithProgress(ctx context.Context, progress func(what string, n int)) (*snapshot.Snapshot, error) {
	return s.SnapshotWithRows(ctx, progress, nil)
}

// SnapshotWithRows reads the dump as SnapshotWithProgress does and hands rows, when set, the
// workloads alone as soon as they are read (see Options.Workloads).
func (s Source) SnapshotWithRows(ctx context.Context, progress func(what string, n int), rows func(*snapshot.Snapshot)) (*snapshot.Snapshot, error) {
	if progress != nil {
		s.Options.Progress = pluralProgress(progress)
	}
	s.Options.Workloads = rows
	return s.Snapshot(ctx)
}

// pluralProgress turns Progress reports into the (plural, count) reports a progress line takes.
func pluralProgress(progress func(what string, n int)) func(Progress) {
	seen := map[string]int{}
	return func(p Progress) {
		kinds := make([]string, 0, len(p.Counts))
		for k := range p.Counts {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		// The kind read last goes last, so it is the one the line names; a kind whose list
		// is opened and not read yet is named with 0.
		if i := slices.Index(kinds, p.Kind); i >= 0 {
			kinds = append(slices.Delete(kinds, i, i+1), p.Kind)
		} else if p.Kind != "" {
			kinds = append(kinds, p.Kind)
		}
		for _, k := range kinds {
			n := p.Counts[k]
			if seen[k] == n && k != p.Kind {
				continue
			}
			seen[k] = n
			progress(plural(k), n)
		}
	}
}

func plural(kind string) string {
	if k := snapshot.KindNamed(kind); k != nil {
		return k.Resource
	}
	return kind
}

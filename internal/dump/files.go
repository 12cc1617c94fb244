package dump

import (
	"context"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// A read is split in two. Parsers read files, several at once, each file into the steps a
// read of it makes (its objects in the order met, handed to the decode pool, then its logs),
// with nothing shared between files; the merger, on the read's own goroutine, files those
// steps into the snapshot one file after the other in the directory's order. Everything the
// order decides is the merger's: which copy of an object is kept and which duplicates are
// noted, each file's node clock, which error is reported (the first in file order, as a read
// of one file after the other meets it), where --max-dump-size stops the read, progress and
// the workloads handed over early. TestParallelReadIsSequentialRead holds a read of several
// files at once to the same read with one parser.

// parser reads one file after another for the merger; it holds what the read of one file
// changes and nothing the merger owns.
type parser struct {
	ctx    context.Context
	opts   Options
	pool   *decodePool
	budget *budget
	out    *fileRead
	// head, when set, is the apiVersion and kind of the next value, read as it was split.
	head *typeMeta
	// deferred, when set, collects list items without apiVersion or kind, read once the
	// list's own kind is known.
	deferred *[]pendingItem
	// done is the stream of the last file read whole, whose buffers the next file reuses.
	done *stream
}

// fileRead is one file of a read: what its parser has met so far, taken by the merger in
// batches, and, once ended, how its read ended.
type fileRead struct {
	// name is the file as errors and notes name it.
	name string
	// open opens the file; an error it returns is reported as it is.
	open func() (io.Reader, func(), error)
	// wrap places an error of the file's read in the whole read's.
	wrap func(error) error
	// progress is true for a file whose opening Options.Progress is told of.
	progress bool
	// dir, when inDir, is the pod whose directory of the dump holds the file, a logs.txt:
	// only that pod's blocks are read from it.
	dir   podDir
	inDir bool

	mu    sync.Mutex
	jobs  []*decodeJob
	ended bool
	wake  chan struct{}
	// unmerged counts the steps passed on and not yet filed; past maxUnmerged the parser
	// waits for room, so a file of many copies of one object costs a bounded heap.
	unmerged atomic.Int64
	room     chan struct{}

	// Set by the parser before ended.
	err error
	// errRead is the bytes of the file read when err was met; read, all of them.
	errRead, read int64
	logs          []snapshot.ContainerLog
	logsCut       []cutLog
	skipped       map[string]int
	// listed holds the kinds of which a list (even an empty one) was met.
	listed listedKinds
}

func newFileRead(name string, open func() (io.Reader, func(), error), wrap func(error) error) *fileRead {
	return &fileRead{name: name, open: open, wrap: wrap, wake: make(chan struct{}, 1), room: make(chan struct{}, 1), skipped: map[string]int{}}
}

// maxUnmerged bounds the objects of one file decoded ahead of the merger.
const maxUnmerged = 256

// push passes one step on to the merger, once it has room for it.
func (f *fileRead) push(ctx context.Context, j *decodeJob) error {
	for f.unmerged.Load() >= maxUnmerged {
		select {
		case <-f.room:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.unmerged.Add(1)
	f.mu.Lock()
	f.jobs = append(f.jobs, j)
	f.mu.Unlock()
	f.signal()
	return nil
}

// merged notes one step filed.
func (f *fileRead) merged() {
	if f.unmerged.Add(-1) < maxUnmerged {
		select {
		case f.room <- struct{}{}:
		default:
		}
	}
}

func (f *fileRead) signal() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// end closes the file's steps with how its read ended.
func (f *fileRead) end(err error, read int64) {
	f.mu.Lock()
	f.err, f.errRead, f.read, f.ended = err, read, read, true
	f.mu.Unlock()
	f.signal()
}

// next waits for the steps met since the last call and hands them over in place of buf, whose
// contents the caller is done with; ended says the parser has met its last.
func (f *fileRead) next(buf []*decodeJob) ([]*decodeJob, bool) {
	for {
		f.mu.Lock()
		if len(f.jobs) > 0 || f.ended {
			jobs, ended := f.jobs, f.ended
			f.jobs = buf[:0]
			f.mu.Unlock()
			return jobs, ended
		}
		f.mu.Unlock()
		<-f.wake
	}
}

// push passes one step on, noting how far the file has been read.
func (p *parser) push(j *decodeJob) error {
	j.read = p.budget.read
	return p.out.push(p.ctx, j)
}

// run reads f, the files before it having read earlier bytes so far.
func (p *parser) run(f *fileRead, earlier func() int64, published *atomic.Int64) {
	p.out = f
	p.budget = p.opts.budget()
	p.budget.earlier, p.budget.published = earlier, published
	src, closeSrc, err := f.open()
	if err != nil {
		f.end(err, 0)
		return
	}
	err = p.file(f.name, src)
	if closeSrc != nil {
		closeSrc()
	}
	if err != nil {
		err = f.wrap(err)
	}
	f.end(err, p.budget.read)
}

// file reads one file: JSON when it starts with '{' or '[' (a stream of values, which is what
// kubectl cluster-info dump writes to stdout), YAML otherwise, with log blocks anywhere.
func (p *parser) file(name string, src io.Reader) error {
	s := newStream(p.ctx, src, name, p.budget)
	s.reuse(p.done)
	p.done = nil
	first, err := s.firstByte()
	if err != nil {
		return err
	}
	if first == '{' || first == '[' {
		err = p.jsonStream(s)
	} else {
		err = p.yamlStream(s)
	}
	if err != nil {
		return err
	}
	p.done = s
	p.out.logs, p.out.logsCut = s.logs, s.logsCut
	return nil
}

// parsers is how many files are read at once: one per processor, as the decode pool has
// workers, so the split of one file and the decode of another fill both.
func parsers() int { return runtime.GOMAXPROCS(0) }

// readFiles reads files with parsers at once and merges them in order; it returns the first
// error in that order. At most ahead files are read and not yet merged, so the objects
// decoded ahead of the merger stay a few files' worth.
func (r *reader) readFiles(files []*fileRead, workers int) error {
	ctx, cancel := context.WithCancel(r.ctx)
	var wg sync.WaitGroup
	defer func() {
		// An error leaves parsers reading ahead: they stop at their next chunk, which from a
		// pipe may be a while, so the read returns without them and the pool closes after.
		cancel()
		go func() {
			wg.Wait()
			r.pool.close()
		}()
	}()
	workers = max(1, min(workers, len(files)))
	counts := newFileCounts(len(files))
	slots := make(chan struct{}, 2*workers)
	var next atomic.Int64
	for range workers {
		wg.Go(func() {
			p := &parser{ctx: ctx, opts: r.opts, pool: r.pool}
			for {
				select {
				case slots <- struct{}{}:
				case <-ctx.Done():
					return
				}
				i := int(next.Add(1) - 1)
				if i >= len(files) {
					return
				}
				earlier := func() int64 { return counts.before(i) }
				if i == 0 {
					earlier = nil
				}
				p.run(files[i], earlier, &counts.read[i])
			}
		})
	}
	var start int64
	for k, f := range files {
		n, err := r.merge(f, start)
		if err != nil {
			return err
		}
		start += n
		counts.merged(k)
		<-slots
	}
	return nil
}

// merge files the steps of f's read as they come, the files before it having read start
// bytes, and returns the bytes f read.
func (r *reader) merge(f *fileRead, start int64) (int64, error) {
	if f.progress {
		r.prog.file(r, f.name)
	}
	r.files++
	r.name = f.name
	var buf []*decodeJob
	for {
		jobs, ended := f.next(buf)
		for _, j := range jobs {
			if start+j.read > r.budget.maxDump {
				return 0, f.wrap(overDump(r.budget.maxDump, f.name))
			}
			r.read = start + j.read
			if err := r.fileJob(j); err != nil {
				return 0, f.wrap(err)
			}
			f.merged()
		}
		clear(jobs)
		buf = jobs
		if ended {
			break
		}
	}
	if f.err != nil {
		if start+f.errRead > r.budget.maxDump {
			return 0, f.wrap(overDump(r.budget.maxDump, f.name))
		}
		return 0, f.err
	}
	if start+f.read > r.budget.maxDump {
		return 0, f.wrap(overDump(r.budget.maxDump, f.name))
	}
	r.read = start + f.read
	for k, n := range f.skipped {
		r.skipped[k] += n
	}
	r.listed |= f.listed
	cut := f.logsCut
	for i, l := range f.logs {
		dropped := 0
		if len(cut) > 0 && cut[0].log == i {
			dropped, cut = cut[0].lines, cut[1:]
		}
		// A block in another pod's logs.txt may be one a container forged by printing marker
		// lines: it is noted, and the pod's own block, wherever it is met, takes its place.
		owned := !f.inDir || l.Namespace == f.dir.namespace && l.Pod == f.dir.pod
		if !owned {
			r.logNotes.addForeign(f.name, &l, f.dir)
		}
		k := logKey{l.Namespace, l.Pod, l.Container, l.Previous}
		if seen, ok := r.logSeen[k]; ok {
			switch {
			case owned && !seen.owned:
				r.snap.Logs[seen.at] = l
				r.logSeen[k] = logFrom{file: f.name, owned: true, at: seen.at}
			case owned:
				r.logNotes.addTwice(&l, seen.file, f.name)
			}
			continue
		}
		r.logSeen[k] = logFrom{file: f.name, owned: owned, at: len(r.snap.Logs)}
		r.namespaces[l.Namespace] = true
		r.snap.Logs = append(r.snap.Logs, l)
		if dropped > 0 {
			r.logsCut.add(l, dropped)
		}
	}
	return f.read, nil
}

// fileCounts are the bytes each file of a read has read so far, published by its parser, and
// what the files before a file have read together, which --max-dump-size is checked against.
// The merger keeps the sum of the files it has merged (prefix[k] is what files 0..k-1 read,
// written before it publishes k in upTo), so a parser adds only the files after those: at most
// the 2*workers files read ahead of the merger. Summing every file before it made a read of a
// directory quadratic in its files.
type fileCounts struct {
	read   []atomic.Int64
	prefix []int64
	upTo   atomic.Int64
}

func newFileCounts(n int) *fileCounts {
	return &fileCounts{read: make([]atomic.Int64, n), prefix: make([]int64, n+1)}
}

// before is what the files before file i have read so far.
func (c *fileCounts) before(i int) int64 {
	m := min(int(c.upTo.Load()), i)
	n := c.prefix[m]
	for k := m; k < i; k++ {
		n += c.read[k].Load()
	}
	return n
}

// merged notes that file k, whose parser is done, is merged.
func (c *fileCounts) merged(k int) {
	c.prefix[k+1] = c.prefix[k] + c.read[k].Load()
	c.upTo.Store(int64(k + 1))
}

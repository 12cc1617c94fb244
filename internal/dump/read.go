package dump

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Stdin is the path that makes Read read standard input.
const Stdin = "-"

// Default limits of a read. No object the API server stores is near DefaultMaxObjectSize
// (etcd refuses requests over 1.5 MiB); DefaultMaxDumpSize is far above a dump of a large
// cluster and far below what would exhaust a laptop.
const (
	DefaultMaxObjectSize = 64 << 20
	DefaultMaxDumpSize   = 4 << 30
)

// readExtensions are the files a directory walk reads: what kubectl writes (.json, .yaml, the
// logs.txt of cluster-info dump) and saved log files.
var readExtensions = map[string]bool{".json": true, ".yaml": true, ".yml": true, ".txt": true, ".log": true}

// Options tune a read; the zero value reads with the defaults.
type Options struct {
	// MaxObjectSize bounds one object (one list item, one YAML document that is not a list), in
	// bytes; 0 means DefaultMaxObjectSize.
	MaxObjectSize int64
	// MaxDumpSize bounds the bytes read, all files together; 0 means DefaultMaxDumpSize.
	MaxDumpSize int64
	// Namespace is given to namespaced objects without metadata.namespace, as kubectl gives
	// its -n; empty means "default".
	Namespace string
	// Namespaces, when set, are the only namespaces the caller will use: a directory in the
	// layout of kubectl cluster-info dump --output-directory then has only their directories
	// read (with the files beside them, such as nodes.json), when it has one for each of them.
	// The reference time is then the newest timestamp of what was read.
	Namespaces []string
	// At, when set, is the reference time instead of the newest timestamp of the dump.
	At *time.Time
	// Progress, when set, is told how far the read has got: as it opens each file of a
	// directory, at most every 100 ms while it reads and at its end, from the read's
	// goroutine. It must not block.
	Progress func(Progress)
	// Workloads, when set, is handed the workloads read so far (a snapshot of the workload
	// kinds alone, which the caller may keep) as soon as the read moves on from them to other
	// kinds, from the read's goroutine; a directory's workload lists are read first. It must
	// not block.
	Workloads func(*snapshot.Snapshot)
}

func (o Options) budget() *budget {
	b := &budget{maxObject: o.MaxObjectSize, maxDump: o.MaxDumpSize}
	if b.maxObject <= 0 {
		b.maxObject = DefaultMaxObjectSize
	}
	if b.maxDump <= 0 {
		b.maxDump = DefaultMaxDumpSize
	}
	return b
}

// Source reads a dump on every call to Snapshot. With Path "-" it reads Stdin, which only the
// first call can consume.
type Source struct {
	Path    string
	Stdin   io.Reader
	Options Options
}

type result struct {
	snap *snapshot.Snapshot
	err  error
}

// Snapshot reads the dump. It returns as soon as ctx ends, even while a read from a pipe
// blocks; the abandoned read stops at its next chunk, or with the process.
func (s Source) Snapshot(ctx context.Context) (*snapshot.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	done := make(chan result, 1)
	go func() {
		snap, err := ReadContext(ctx, s.Path, s.Stdin, s.Options)
		done <- result{snap, err}
	}()
	select {
	case r := <-done:
		return r.snap, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("read dump: %w", ctx.Err())
	}
}

// Read reads a dump from a file, from every file of a directory tree with a .json, .yaml, .yml,
// .txt or .log name, or from stdin when path is "-", with the default options.
func Read(path string, stdin io.Reader) (*snapshot.Snapshot, error) {
	return ReadContext(context.Background(), path, stdin, Options{})
}

// ReadContext is Read with options; it stops with ctx's error when ctx ends.
func ReadContext(ctx context.Context, path string, stdin io.Reader, opts Options) (*snapshot.Snapshot, error) {
	return readContext(ctx, path, stdin, opts, parsers())
}

// readContext is ReadContext with workers files of a directory read at once.
func readContext(ctx context.Context, path string, stdin io.Reader, opts Options, workers int) (*snapshot.Snapshot, error) {
	r := newReader(ctx, opts)
	if path == Stdin {
		if stdin == nil {
			r.pool.close()
			return nil, errors.New("read dump from stdin: no standard input")
		}
		f := newFileRead("stdin", func() (io.Reader, func(), error) { return stdin, nil, nil },
			func(err error) error { return fmt.Errorf("read dump from stdin: %w", err) })
		if err := r.readFiles([]*fileRead{f}, 1); err != nil {
			return nil, err
		}
		return r.finish("stdin", path)
	}
	info, err := os.Stat(path)
	if err != nil {
		r.pool.close()
		return nil, fmt.Errorf("read dump: %w", err)
	}
	if !info.IsDir() {
		r.expect(info.Size())
		if err := r.readFiles([]*fileRead{namedFile(path)}, 1); err != nil {
			return nil, err
		}
		return r.finish(fmt.Sprintf("%q", path), path)
	}
	others := otherNamespaces(path, opts.Namespaces)
	var files []string
	var size int64
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("read dump %q: %w", p, err)
		}
		hidden := p != path && strings.HasPrefix(d.Name(), ".")
		if d.IsDir() {
			if hidden || others[p] {
				return filepath.SkipDir
			}
			return nil
		}
		if hidden || !readExtensions[strings.ToLower(filepath.Ext(p))] {
			return nil
		}
		files = append(files, p)
		if ext := strings.ToLower(filepath.Ext(p)); ext != ".txt" && ext != ".log" {
			if info, err := d.Info(); err == nil {
				size += info.Size()
			}
		}
		return nil
	})
	if err != nil {
		r.pool.close()
		return nil, err
	}
	r.expect(size)
	reads := make([]*fileRead, 0, len(files))
	for _, p := range workloadsFirst(files) {
		reads = append(reads, namedFile(p))
	}
	if len(reads) == 0 {
		r.pool.close()
	} else if err := r.readFiles(reads, workers); err != nil {
		return nil, err
	}
	return r.finish(fmt.Sprintf("%q", path), path)
}

// namedFile is a file of the file system to read, named by its path.
func namedFile(path string) *fileRead {
	f := newFileRead(path, func() (io.Reader, func(), error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, fmt.Errorf("read dump: %w", err)
		}
		return f, func() { _ = f.Close() }, nil // read-only: a close error loses nothing
	}, func(err error) error { return fmt.Errorf("read dump %q: %w", path, err) })
	f.progress = true
	return f
}

// ReadBytes reads one in-memory file; name is used in errors and as the snapshot's source path.
func ReadBytes(name string, data []byte) (*snapshot.Snapshot, error) {
	r := newReader(context.Background(), Options{})
	f := newFileRead(name, func() (io.Reader, func(), error) { return bytes.NewReader(data), nil, nil },
		func(err error) error { return fmt.Errorf("read dump %q: %w", name, err) })
	if err := r.readFiles([]*fileRead{f}, 1); err != nil {
		return nil, err
	}
	return r.finish(fmt.Sprintf("%q", name), name)
}

type logKey struct {
	namespace, pod, container string
	previous                  bool
}

// reader is the merger of a read: it files what the parsers read into the snapshot, one file
// after the other (see files.go).
type reader struct {
	ctx        context.Context
	opts       Options
	budget     *budget
	snap       *snapshot.Snapshot
	seen       map[snapshot.ObjectKey]*seenObject
	uids       map[string]snapshot.ObjectKey
	logSeen    map[logKey]bool
	skipped    map[string]int
	namespaces map[string]bool
	objects    int
	files      int
	// read is the bytes read of the files merged and of the file being merged, up to the
	// object filed last.
	read int64
	// podList is true once a PodList (even an empty one) or a pod was read: the dump then
	// shows the pods it was asked for, and none of them is a fact, not a gap.
	podList bool
	// name is the file being merged, as the snapshot's notes name it.
	name string
	// duplicates are objects met twice with different content.
	duplicates []duplicate
	// clocks are the newest node heartbeat of each file, to tell dumps of different moments.
	clocks map[string]time.Time
	// pool decodes objects in parallel; nil on one processor.
	pool *decodePool
	// logsCut are the container logs longer than the tail kept of each.
	logsCut logsCut
	// prog reports progress; nil without Options.Progress and Options.Workloads.
	prog *progress
}

func newReader(ctx context.Context, opts Options) *reader {
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	return &reader{
		ctx:        ctx,
		opts:       opts,
		budget:     opts.budget(),
		snap:       &snapshot.Snapshot{},
		seen:       map[snapshot.ObjectKey]*seenObject{},
		uids:       map[string]snapshot.ObjectKey{},
		logSeen:    map[logKey]bool{},
		skipped:    map[string]int{},
		namespaces: map[string]bool{},
		clocks:     map[string]time.Time{},
		pool:       newDecodePool(),
		prog:       newProgress(opts),
	}
}

// expectBytes is about the smallest an object of a dump is, indented as kubectl writes it
// (an event about 1.5 kB, a pod 10 kB): expect sizes the merger's maps for at most one object
// in that many bytes.
const expectBytes = 4 << 10

// expect sizes the maps of objects met for a dump of about size bytes of objects, so that the
// merger, one goroutine that every object passes, does not grow them through every doubling
// (they were most of its time). Beyond 2^18 objects (a few tens of MB of maps made up front,
// for a dump of a GB) or --max-dump-size, they grow as before.
func (r *reader) expect(size int64) {
	if r.budget.maxDump > 0 {
		size = min(size, r.budget.maxDump)
	}
	n := int(min(size/expectBytes, 1<<18))
	if n < 64 {
		return
	}
	r.seen = make(map[snapshot.ObjectKey]*seenObject, n)
	r.uids = make(map[string]snapshot.ObjectKey, n)
}

// finish completes the snapshot; a dump without a single object is an error, not an empty
// cluster, because every kubectl dump holds at least the objects it was asked for.
func (r *reader) finish(name, path string) (*snapshot.Snapshot, error) {
	if r.objects == 0 {
		detail := ""
		if n := sum(r.skipped); n > 0 {
			detail = fmt.Sprintf(" (%d objects of kinds it does not read were skipped)", n)
		}
		switch {
		case r.files == 0:
			return nil, fmt.Errorf("read dump %s: no .json, .yaml, .yml, .txt or .log files found", name)
		case len(r.snap.Logs) > 0:
			return nil, fmt.Errorf("read dump %s: only container logs found, no Kubernetes objects%s", name, detail)
		default:
			return nil, fmt.Errorf("read dump %s: no Kubernetes objects found%s", name, detail)
		}
	}
	s := r.snap
	for ns := range r.namespaces {
		s.Namespaces = append(s.Namespaces, ns)
	}
	sort.Strings(s.Namespaces)
	s.Source = snapshot.SourceInfo{Type: snapshot.SourceDump, Path: path}
	if len(r.skipped) > 0 {
		s.Source.Skipped = r.skipped
	}
	s.ReferenceTime = newestTime(s)
	s.Visibility = missingOwners(s)
	if v, ok := missingPods(s, r.podList); ok {
		s.Visibility = append(s.Visibility, v)
	}
	s.Visibility = append(s.Visibility, r.notes()...)
	r.prog.done(r)
	if r.opts.At != nil {
		s.ReferenceTime = r.opts.At.UTC()
		if v, ok := atTooEarly(s, s.ReferenceTime); ok {
			s.Visibility = append(s.Visibility, v)
		}
	}
	return s, nil
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

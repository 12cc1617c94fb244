package dump

import (
	"bytes"
	"compress/gzip"
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
// logs.txt of cluster-info dump) and saved log files, gzipped or not.
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
	// WaitForPipes reads the named pipes of a directory, waiting for their writers, for a
	// caller that shows what the read waits for (Progress names the pipe's kind) and can stop
	// it (the console). Without it a named pipe found in a directory is skipped with a
	// warning: nothing may ever write to it, and a command that prints nothing until its read
	// ends would wait forever, saying nothing. A pipe named as the dump itself is always read.
	WaitForPipes bool
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
//
// Only tests and examples call Read (those of this package and of a dozen others that load a
// fixture); the commands call ReadContext with their options and context.
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
		f := newFileRead("stdin", func() (io.Reader, func(), error) {
			src, err := gunzipped(stdin)
			return src, nil, err
		},
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
		if hidden {
			return nil
		}
		ext := fileExt(p)
		if !readExtensions[ext] {
			r.skippedFiles.add(p, "not a .json, .yaml, .yml, .txt or .log file, nor one gzipped")
			return nil
		}
		// A named pipe would hold the read until something writes to it, a device never end:
		// only regular files, and links to them, are read from a directory (and named pipes,
		// with Options.WaitForPipes).
		if why := notRegular(p, d, opts.WaitForPipes); why != "" {
			r.skippedFiles.add(p, why)
			return nil
		}
		files = append(files, p)
		if ext != ".txt" && ext != ".log" {
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
	walked := make(map[string]bool, len(files))
	for _, p := range files {
		walked[p] = true
	}
	r.manifestNotes = checkManifest(path, walked, others)
	r.expect(size)
	reads := make([]*fileRead, 0, len(files))
	for _, p := range workloadsFirst(files) {
		f := namedFile(p)
		if rel, err := filepath.Rel(path, p); err == nil {
			f.dir, f.inDir = podDirOf(rel)
		}
		reads = append(reads, f)
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
		closeFile := func() { _ = f.Close() } // read-only: a close error loses nothing
		src, err := gunzipped(f)
		if err != nil {
			closeFile()
			return nil, nil, err
		}
		return src, closeFile, nil
	}, func(err error) error { return fmt.Errorf("read dump %q: %w", path, err) })
	f.progress = true
	return f
}

// fileExt is the extension a directory's file is read by, in lower case: that of the name
// without .gz for a gzipped file ("pods.json.gz" is ".json").
func fileExt(p string) string {
	ext := strings.ToLower(filepath.Ext(p))
	if ext == ".gz" {
		ext = strings.ToLower(filepath.Ext(strings.TrimSuffix(p, filepath.Ext(p))))
	}
	return ext
}

// notRegular says why the directory entry d at p is not read: a named pipe (unless pipes are
// waited for), a socket, a device, or a link to one of those; "" for a regular file or a link
// to one.
func notRegular(p string, d fs.DirEntry, pipes bool) string {
	mode := d.Type()
	if mode&fs.ModeSymlink != 0 {
		info, err := os.Stat(p)
		if err != nil {
			// Opening it fails the read, naming the file, as an unreadable file does.
			return ""
		}
		mode = info.Mode().Type()
	}
	switch {
	case mode.IsRegular():
		return ""
	case mode&fs.ModeNamedPipe != 0 && pipes:
		return ""
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe, not a regular file; nothing may ever write to it"
	case mode&fs.ModeSocket != 0:
		return "a socket, not a regular file"
	case mode&fs.ModeDevice != 0:
		return "a device, not a regular file"
	case mode.IsDir():
		return "a link to a directory, which is not followed"
	}
	return "not a regular file"
}

// gzipMagic starts every gzip stream (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// gunzipped returns what src holds, decompressed when it is gzip, whatever its name: a dump is
// recognised by its content. The bytes counted against --max-dump-size are the decompressed
// ones, which bounds a small file that expands without end.
func gunzipped(src io.Reader) (io.Reader, error) {
	head := make([]byte, len(gzipMagic))
	n, err := io.ReadFull(src, head)
	whole := io.MultiReader(bytes.NewReader(head[:n]), src)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return whole, nil
	case err != nil:
		return nil, err
	case !bytes.Equal(head, gzipMagic):
		return whole, nil
	}
	// What the gzip reader takes to find its header is kept: a file that only begins like gzip
	// is read as it is, and fails where its bytes are not a dump, as any other file does.
	taken := &headerCapture{}
	zr, err := gzip.NewReader(io.TeeReader(whole, taken))
	if err != nil {
		return io.MultiReader(&taken.buf, whole), nil
	}
	taken.done()
	return zr, nil
}

// headerCapture keeps what passes through it until done, then nothing more.
type headerCapture struct {
	buf  bytes.Buffer
	over bool
}

func (c *headerCapture) Write(p []byte) (int, error) {
	if !c.over {
		c.buf.Write(p)
	}
	return len(p), nil
}

func (c *headerCapture) done() { c.over, c.buf = true, bytes.Buffer{} }

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

// logFrom is the block a container's log was read from: its file, whether the file is the
// pod's own (or names no pod), and the log's index in the snapshot.
type logFrom struct {
	file  string
	owned bool
	at    int
}

// reader is the merger of a read: it files what the parsers read into the snapshot, one file
// after the other (see files.go).
type reader struct {
	ctx    context.Context
	opts   Options
	budget *budget
	snap   *snapshot.Snapshot
	seen   map[snapshot.ObjectKey]*seenObject
	uids   map[string]snapshot.ObjectKey
	// logSeen is where each container's log was read from.
	logSeen  map[logKey]logFrom
	logNotes logNotes
	// badNames are the objects not read for names the API server refuses.
	badNames badNames
	// skippedFiles are the files of a directory not read.
	skippedFiles skippedFiles
	// manifestNotes are what the dump's manifest says of it: cut short, files missing.
	manifestNotes []snapshot.Visibility
	skipped       map[string]int
	namespaces    map[string]bool
	objects       int
	files         int
	// read is the bytes read of the files merged and of the file being merged, up to the
	// object filed last.
	read int64
	// listed holds the kinds of which a list (even an empty one) or an object was read: the
	// dump then shows the objects it was asked for, and none of them is a fact, not a gap.
	listed listedKinds
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
		logSeen:    map[logKey]logFrom{},
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
	ref, outliers := referenceTime(s)
	s.ReferenceTime = ref
	s.Visibility = missingOwners(s)
	if v, ok := missingPods(s, r.listed&listedPods != 0); ok {
		s.Visibility = append(s.Visibility, v)
	}
	s.Visibility = append(s.Visibility, missingVolumes(s, r.listed&listedVolumes != 0)...)
	s.Visibility = append(s.Visibility, r.notes()...)
	s.Visibility = append(s.Visibility, r.manifestNotes...)
	if v, ok := r.skippedFiles.note(); ok {
		s.Visibility = append(s.Visibility, v)
	}
	r.prog.done(r)
	if r.opts.At != nil {
		s.ReferenceTime = r.opts.At.UTC()
		if v, ok := atTooEarly(s, s.ReferenceTime); ok {
			s.Visibility = append(s.Visibility, v)
		}
	} else if v, ok := outliers.note(ref); ok {
		s.Visibility = append(s.Visibility, v)
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

package dump

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Stdin is the path that makes Read read standard input.
const Stdin = "-"

// readExtensions are the files a directory walk reads: what kubectl writes (.json, .yaml, the
// logs.txt of cluster-info dump) and saved log files.
var readExtensions = map[string]bool{".json": true, ".yaml": true, ".yml": true, ".txt": true, ".log": true}

// Source reads a dump on every call to Snapshot. With Path "-" it reads Stdin, which only the
// first call can consume.
type Source struct {
	Path  string
	Stdin io.Reader
}

// Snapshot reads the dump.
func (s Source) Snapshot(ctx context.Context) (*snapshot.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return Read(s.Path, s.Stdin)
}

// Read reads a dump from a file, from every file of a directory tree with a .json, .yaml, .yml,
// .txt or .log name, or from stdin when path is "-".
func Read(path string, stdin io.Reader) (*snapshot.Snapshot, error) {
	r := newReader()
	if path == Stdin {
		if stdin == nil {
			return nil, errors.New("read dump from stdin: no standard input")
		}
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("read dump from stdin: %w", err)
		}
		if err := r.file(data); err != nil {
			return nil, fmt.Errorf("read dump from stdin: %w", err)
		}
		return r.finish("stdin", path)
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read dump: %w", err)
	}
	if !info.IsDir() {
		if err := r.readFile(path); err != nil {
			return nil, err
		}
		return r.finish(fmt.Sprintf("%q", path), path)
	}
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("read dump %q: %w", p, err)
		}
		hidden := p != path && strings.HasPrefix(d.Name(), ".")
		if d.IsDir() {
			if hidden {
				return filepath.SkipDir
			}
			return nil
		}
		if hidden || !readExtensions[strings.ToLower(filepath.Ext(p))] {
			return nil
		}
		return r.readFile(p)
	})
	if err != nil {
		return nil, err
	}
	return r.finish(fmt.Sprintf("%q", path), path)
}

// ReadBytes reads one in-memory file; name is used in errors and as the snapshot's source path.
func ReadBytes(name string, data []byte) (*snapshot.Snapshot, error) {
	r := newReader()
	if err := r.file(data); err != nil {
		return nil, fmt.Errorf("read dump %q: %w", name, err)
	}
	return r.finish(fmt.Sprintf("%q", name), name)
}

type logKey struct {
	namespace, pod, container string
	previous                  bool
}

type reader struct {
	snap       *snapshot.Snapshot
	seen       map[snapshot.ObjectKey]bool
	logSeen    map[logKey]bool
	skipped    map[string]int
	namespaces map[string]bool
	objects    int
	files      int
	// podList is true once a PodList (even an empty one) or a pod was read: the dump then
	// shows the pods it was asked for, and none of them is a fact, not a gap.
	podList bool
}

func newReader() *reader {
	return &reader{
		snap:       &snapshot.Snapshot{},
		seen:       map[snapshot.ObjectKey]bool{},
		logSeen:    map[logKey]bool{},
		skipped:    map[string]int{},
		namespaces: map[string]bool{},
	}
}

func (r *reader) readFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read dump: %w", err)
	}
	if err := r.file(data); err != nil {
		return fmt.Errorf("read dump %q: %w", path, err)
	}
	return nil
}

// file reads one file's content: its log blocks, then the JSON or YAML around them.
func (r *reader) file(data []byte) error {
	r.files++
	logs, text, err := extractLogs(data)
	if err != nil {
		return err
	}
	docs, err := splitDocuments(text)
	if err != nil {
		return err
	}
	for _, d := range docs {
		if err := r.value(d.data, d.at, emptyGVK, 0); err != nil {
			return err
		}
	}
	for _, l := range logs {
		k := logKey{l.Namespace, l.Pod, l.Container, l.Previous}
		if r.logSeen[k] {
			continue
		}
		r.logSeen[k] = true
		r.namespaces[l.Namespace] = true
		r.snap.Logs = append(r.snap.Logs, l)
	}
	return nil
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
	return s, nil
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

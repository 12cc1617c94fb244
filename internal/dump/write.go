package dump

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Permissions of what Write creates: a dump holds pod specs, env values and logs, so only the
// user who wrote it may read it.
const (
	dirMode  os.FileMode = 0o700
	fileMode os.FileMode = 0o600
)

// Write writes s into dir in the layout of `kubectl cluster-info dump --output-directory`:
// nodes.json and persistentvolumes.json at the top and, per namespace, one *List JSON file per kind of snapshot.Kinds
// (events.json, deployments.json, pods.json, ... as cluster-info dump names them, and
// statefulsets.json, controllerrevisions.json and the others it does not write), an empty
// replication-controllers.json as cluster-info dump writes it, and each pod's log tails in
// <ns>/<pod>/logs.txt. Read reads it back to the same objects; the reference time
// is derived again on reading and visibility is not written. dir may exist only if it is empty,
// unless force is set; then the files of the dump it holds are removed first, and others kept.
//
// A dump is written whole or read as cut short: a manifest marked unfinished is written first
// and replaced by the list of files last, and each file is written under a temporary name and
// renamed, so a file is there whole or not at all. Nothing is written outside dir or through a
// link: every file is opened under an os.Root of dir, and a rename replaces a link planted under
// a file's name instead of writing to what it points at.
func Write(dir string, s *snapshot.Snapshot, force bool) error {
	if err := prepareDir(dir, force); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("write dump: %w", err)
	}
	defer func() { _ = root.Close() }() // a directory handle; nothing to lose on close
	w := writer{dir: dir, root: root}
	if force {
		w.clearOld()
	}
	w.manifest(false)
	all := func(metav1.Object) bool { return true }
	for i := range snapshot.Kinds {
		k := &snapshot.Kinds[i]
		if !k.Cluster {
			continue
		}
		// As in a namespace: a kind the source could not read (in any namespace it looked at,
		// for a cluster-scoped kind) is left out, not written as none.
		if k.KeepUnread && k.Len(s) == 0 && notReadAnywhere(s, k.Kind) {
			continue
		}
		w.kind(k.File, k, s, all)
	}
	for _, ns := range namespacesOf(s) {
		w.namespace(s, ns)
	}
	w.metrics(s)
	w.manifest(true)
	return w.err
}

// prepareDir creates dir, or accepts an existing one that is empty or, with force, any directory.
func prepareDir(dir string, force bool) error {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, dirMode); err != nil {
			return fmt.Errorf("write dump: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("write dump: %w", err)
	case !info.IsDir():
		return fmt.Errorf("write dump %q: not a directory", dir)
	}
	if force {
		return nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("write dump: %w", err)
	}
	defer func() { _ = f.Close() }() // opened for reading; nothing to lose on close
	if _, err := f.Readdirnames(1); !errors.Is(err, io.EOF) {
		if err != nil {
			return fmt.Errorf("write dump: %w", err)
		}
		return fmt.Errorf("write dump %q: directory is not empty; use --force to overwrite", dir)
	}
	return nil
}

// namespacesOf lists the namespaces the snapshot read and any its objects or logs are in.
func namespacesOf(s *snapshot.Snapshot) []string {
	set := map[string]bool{}
	for _, ns := range s.Namespaces {
		set[ns] = true
	}
	s.Each(func(o runtime.Object) {
		if m, err := meta.Accessor(o); err == nil {
			set[m.GetNamespace()] = true
		}
	})
	for _, l := range s.Logs {
		set[l.Namespace] = true
	}
	delete(set, "")
	out := make([]string, 0, len(set))
	for ns := range set {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

// writer keeps the first error, so the layout reads as a list of files.
type writer struct {
	dir  string
	root *os.Root
	// files are the files written so far, for the manifest.
	files []manifestEntry
	err   error
}

func (w *writer) namespace(s *snapshot.Snapshot, ns string) {
	if err := safeName(ns); err != nil {
		w.fail(fmt.Errorf("write dump: namespace %q: %w", ns, err))
		return
	}
	in := func(m metav1.Object) bool { return m.GetNamespace() == ns }
	// kubectl cluster-info dump writes this list; the tool does not model the kind.
	w.list(path.Join(ns, "replication-controllers.json"), "ReplicationControllerList", "v1", &corev1.ReplicationControllerList{})
	for i := range snapshot.Kinds {
		k := &snapshot.Kinds[i]
		if k.Cluster {
			continue
		}
		// Objects the source could not read are left out rather than written as an empty
		// list, which would read back as a namespace without them.
		items := k.Items(s, in)
		if k.KeepUnread && reflect.ValueOf(items).Len() == 0 && notRead(s, k.Kind, ns) {
			continue
		}
		w.list(path.Join(ns, k.File), k.GVK.Kind+"List", k.GVK.GroupVersion().String(), &itemList{Items: items})
	}
	w.logs(s, ns)
}

// notRead reports whether the snapshot says it could not read the kind in the namespace.
func notRead(s *snapshot.Snapshot, kind, ns string) bool {
	for _, v := range s.Visibility {
		if v.Kind == kind && (v.Namespace == "" || v.Namespace == ns) {
			return true
		}
	}
	return false
}

// notReadAnywhere reports whether the snapshot says it could not read the kind somewhere.
func notReadAnywhere(s *snapshot.Snapshot, kind string) bool {
	for _, v := range s.Visibility {
		if v.Kind == kind {
			return true
		}
	}
	return false
}

// logs writes one logs.txt per pod, blocks in the order the snapshot holds them.
func (w *writer) logs(s *snapshot.Snapshot, ns string) {
	var pods []string
	byPod := map[string][]*snapshot.ContainerLog{}
	for i := range s.Logs {
		l := &s.Logs[i]
		if l.Namespace != ns {
			continue
		}
		if _, ok := byPod[l.Pod]; !ok {
			pods = append(pods, l.Pod)
		}
		byPod[l.Pod] = append(byPod[l.Pod], l)
	}
	for _, pod := range pods {
		if err := safeName(pod); err != nil {
			w.fail(fmt.Errorf("write dump: pod %q in namespace %q: %w", pod, ns, err))
			return
		}
		var b strings.Builder
		for _, l := range byPod[pod] {
			if strings.ContainsAny(l.Container, " \t\r\n") {
				w.fail(fmt.Errorf("write dump: pod %q in namespace %q: container name %q has white space", pod, ns, l.Container))
				return
			}
			_ = writeLog(&b, l) // a strings.Builder does not fail
		}
		w.file(path.Join(ns, pod, "logs.txt"), []byte(b.String()))
	}
}

// list writes a typed list the way kubectl's JSON printer does: four-space indent and a final
// newline, items without their own apiVersion and kind, as the API server returns them. The
// items are encoded one at a time straight into the file, so a namespace of many pods costs one
// pod's text in memory, not the list's; the bytes are json.MarshalIndent's of the whole list
// (TestWriteListAsMarshalIndent).
func (w *writer) list(name, kind, apiVersion string, list runtime.Object) {
	if w.err != nil {
		return
	}
	list.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind))
	w.stream(name, func(out io.Writer) error { return writeList(out, list) })
}

// writeList writes list, a pointer to a Kubernetes list type, as json.MarshalIndent with a
// four-space indent does, and a newline.
func writeList(out io.Writer, list runtime.Object) error {
	v := reflect.ValueOf(list).Elem()
	items := v.FieldByName("Items")
	// itemList holds its items as any: without this the whole list was marshalled in one piece
	// (1.3 GB above the snapshot to write a 20,000-pod namespace), as if it had no items field.
	if items.IsValid() && items.Kind() == reflect.Interface {
		items = items.Elem()
	}
	if !items.IsValid() || items.Kind() != reflect.Slice || items.Len() == 0 {
		data, err := json.MarshalIndent(list, "", "    ")
		if err != nil {
			return err
		}
		_, err = out.Write(append(data, '\n'))
		return err
	}
	// The list without its items ends in `"items": null` and its closing brace: items is
	// the last field of every list type.
	all := reflect.New(v.Type()).Elem()
	all.Set(v)
	all.FieldByName("Items").SetZero()
	head, err := json.MarshalIndent(all.Addr().Interface(), "", "    ")
	if err != nil {
		return err
	}
	head, ok := bytes.CutSuffix(head, []byte("null\n}"))
	if !ok {
		return fmt.Errorf("%T: items is not the last field", list)
	}
	if _, err := out.Write(append(head, "[\n"...)); err != nil {
		return err
	}
	const indent = "        "
	// One encoder into one buffer for the whole list: it writes what MarshalIndent does, and a
	// newline, reusing its buffers, where MarshalIndent made two copies of every item's text.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent(indent, "    ")
	for i := range items.Len() {
		buf.Reset()
		if err := enc.Encode(items.Index(i).Addr().Interface()); err != nil {
			return err
		}
		sep := ",\n" + indent
		if i == 0 {
			sep = indent
		}
		if _, err := io.WriteString(out, sep); err != nil {
			return err
		}
		if _, err := out.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))); err != nil {
			return err
		}
	}
	_, err = io.WriteString(out, "\n    ]\n}\n")
	return err
}

func (w *writer) file(name string, data []byte) {
	w.stream(name, func(out io.Writer) error {
		_, err := out.Write(data)
		return err
	})
}

// stream writes the file name (slash-separated) through a buffer with write, under a
// temporary name renamed to name once it is whole.
func (w *writer) stream(name string, write func(io.Writer) error) {
	if w.err != nil {
		return
	}
	if n, err := w.put(name, write); err != nil {
		w.fail(fmt.Errorf("write dump %q: %w", filepath.Join(w.dir, name), err))
	} else {
		w.files = append(w.files, manifestEntry{Name: name, Bytes: n})
	}
}

// put writes the file name under the root and returns its size.
func (w *writer) put(name string, write func(io.Writer) error) (int64, error) {
	if d := path.Dir(name); d != "." {
		if err := w.root.MkdirAll(d, dirMode); err != nil {
			return 0, err
		}
	}
	// O_EXCL: the temporary name is new, never a file or a link that was there.
	tmp := path.Join(path.Dir(name), fmt.Sprintf(".%s.%d-%d.tmp", path.Base(name), os.Getpid(), tmpSeq.Add(1)))
	f, err := w.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return 0, err
	}
	c := &countingWriter{w: f}
	b := bufio.NewWriterSize(c, 256<<10)
	if err = write(b); err == nil {
		err = b.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.root.Rename(tmp, name)
	}
	if err != nil {
		_ = w.root.Remove(tmp) // the write already failed; a leftover temporary file is hidden
		return 0, err
	}
	return c.n, nil
}

// tmpSeq tells apart the temporary files of one process.
var tmpSeq atomic.Int64

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// manifest writes the manifest: unfinished before the first file, with every file after the
// last. After a failure it stays unfinished.
func (w *writer) manifest(complete bool) {
	if w.err != nil {
		return
	}
	var files []manifestEntry
	if complete {
		files = w.files
	}
	data, err := json.MarshalIndent(newManifest(complete, files), "", "    ")
	if err != nil {
		w.fail(fmt.Errorf("write dump manifest: %w", err))
		return
	}
	if _, err := w.put(manifestFile, func(out io.Writer) error {
		_, err := out.Write(append(data, '\n'))
		return err
	}); err != nil {
		w.fail(fmt.Errorf("write dump %q: %w", filepath.Join(w.dir, manifestFile), err))
	}
}

// clearOld removes the files of the dump dir holds, so that --force does not leave an older
// dump's files to be read with the new one: those its manifest lists, or without one, those
// of the layout Write and kubectl cluster-info dump write. Other files are kept; a read notes
// them, as the new manifest does not list them.
func (w *writer) clearOld() {
	var names []string
	if data, err := w.root.ReadFile(manifestFile); err == nil {
		var m manifest
		if json.Unmarshal(data, &m) == nil {
			for _, f := range m.Files {
				names = append(names, f.Name)
			}
		}
	}
	_ = fs.WalkDir(w.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil // an unreadable corner of the old dump is left as it is
		}
		if dumpLayout(p) {
			names = append(names, p)
		}
		return nil
	})
	for _, name := range names {
		if !filepath.IsLocal(filepath.FromSlash(name)) {
			continue
		}
		if err := w.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			w.fail(fmt.Errorf("write dump: remove the earlier dump's %q: %w", filepath.Join(w.dir, name), err))
			return
		}
	}
}

// dumpLayout reports whether the slash-separated path p names a file of the layout Write and
// kubectl cluster-info dump write.
func dumpLayout(p string) bool {
	parts := strings.Split(p, "/")
	switch len(parts) {
	case 1:
		if parts[0] == MetricsFile {
			return true
		}
		for i := range snapshot.Kinds {
			if snapshot.Kinds[i].Cluster && snapshot.Kinds[i].File == parts[0] {
				return true
			}
		}
	case 2:
		if parts[1] == "replication-controllers.json" {
			return true
		}
		for i := range snapshot.Kinds {
			if !snapshot.Kinds[i].Cluster && snapshot.Kinds[i].File == parts[1] {
				return true
			}
		}
	case 3:
		return parts[2] == "logs.txt"
	}
	return false
}

func (w *writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// kind writes the objects of one kind that keep accepts as its typed list.
func (w *writer) kind(name string, k *snapshot.Kind, s *snapshot.Snapshot, keep func(metav1.Object) bool) {
	w.list(name, k.GVK.Kind+"List", k.GVK.GroupVersion().String(), &itemList{Items: k.Items(s, keep)})
}

// itemList marshals as the typed list of its items' kind does (corev1.PodList, ...): kind,
// apiVersion, empty list metadata, then items, null when there are none.
type itemList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           any `json:"items"`
}

func (l *itemList) DeepCopyObject() runtime.Object {
	c := *l
	return &c
}

// safeName rejects a namespace or pod name that would put a file outside the dump directory;
// the API server never produces one, but a hand-made dump can.
func safeName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return errors.New("not a valid name for a directory of the dump")
	}
	return nil
}

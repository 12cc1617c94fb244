package dump

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
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
// nodes.json at the top and, per namespace, events, replication-controllers, services,
// daemonsets, deployments, replicasets and pods as *List JSON, plus statefulsets,
// controllerrevisions, endpointslices, persistentvolumeclaims and resourcequotas, and each pod's
// log tails in <ns>/<pod>/logs.txt. Read reads it back to the same objects; the reference time
// is derived again on reading and visibility is not written. dir may exist only if it is empty,
// unless force is set.
func Write(dir string, s *snapshot.Snapshot, force bool) error {
	if err := prepareDir(dir, force); err != nil {
		return err
	}
	w := writer{dir: dir}
	all := func(metav1.Object) bool { return true }
	w.list("nodes.json", "NodeList", "v1", &corev1.NodeList{Items: values(s.Nodes, all)})
	for _, ns := range namespacesOf(s) {
		w.namespace(s, ns)
	}
	w.metrics(s)
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
	metas := []metav1.Object{}
	for _, o := range s.Deployments {
		metas = append(metas, o)
	}
	for _, o := range s.StatefulSets {
		metas = append(metas, o)
	}
	for _, o := range s.DaemonSets {
		metas = append(metas, o)
	}
	for _, o := range s.ReplicaSets {
		metas = append(metas, o)
	}
	for _, o := range s.ControllerRevisions {
		metas = append(metas, o)
	}
	for _, o := range s.Pods {
		metas = append(metas, o)
	}
	for _, o := range s.Events {
		metas = append(metas, o)
	}
	for _, o := range s.Services {
		metas = append(metas, o)
	}
	for _, o := range s.PersistentVolumeClaims {
		metas = append(metas, o)
	}
	for _, o := range s.ResourceQuotas {
		metas = append(metas, o)
	}
	for _, o := range s.EndpointSlices {
		metas = append(metas, o)
	}
	for _, m := range metas {
		set[m.GetNamespace()] = true
	}
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
	dir string
	err error
}

func (w *writer) namespace(s *snapshot.Snapshot, ns string) {
	if err := safeName(ns); err != nil {
		w.fail(fmt.Errorf("write dump: namespace %q: %w", ns, err))
		return
	}
	in := func(m metav1.Object) bool { return m.GetNamespace() == ns }
	w.list(filepath.Join(ns, "events.json"), "EventList", "v1", &corev1.EventList{Items: values(s.Events, in)})
	w.list(filepath.Join(ns, "replication-controllers.json"), "ReplicationControllerList", "v1", &corev1.ReplicationControllerList{})
	w.list(filepath.Join(ns, "services.json"), "ServiceList", "v1", &corev1.ServiceList{Items: values(s.Services, in)})
	w.list(filepath.Join(ns, "daemonsets.json"), "DaemonSetList", "apps/v1", &appsv1.DaemonSetList{Items: values(s.DaemonSets, in)})
	w.list(filepath.Join(ns, "deployments.json"), "DeploymentList", "apps/v1", &appsv1.DeploymentList{Items: values(s.Deployments, in)})
	w.list(filepath.Join(ns, "replicasets.json"), "ReplicaSetList", "apps/v1", &appsv1.ReplicaSetList{Items: values(s.ReplicaSets, in)})
	// Pods the source could not read are left out rather than written as an empty list, which
	// would read back as a namespace without copies.
	if pods := values(s.Pods, in); len(pods) > 0 || !podsNotRead(s, ns) {
		w.list(filepath.Join(ns, "pods.json"), "PodList", "v1", &corev1.PodList{Items: pods})
	}
	w.list(filepath.Join(ns, "statefulsets.json"), "StatefulSetList", "apps/v1", &appsv1.StatefulSetList{Items: values(s.StatefulSets, in)})
	w.list(filepath.Join(ns, "controllerrevisions.json"), "ControllerRevisionList", "apps/v1", &appsv1.ControllerRevisionList{Items: values(s.ControllerRevisions, in)})
	w.list(filepath.Join(ns, "endpointslices.json"), "EndpointSliceList", "discovery.k8s.io/v1", &discoveryv1.EndpointSliceList{Items: values(s.EndpointSlices, in)})
	w.list(filepath.Join(ns, "persistentvolumeclaims.json"), "PersistentVolumeClaimList", "v1", &corev1.PersistentVolumeClaimList{Items: values(s.PersistentVolumeClaims, in)})
	w.list(filepath.Join(ns, "resourcequotas.json"), "ResourceQuotaList", "v1", &corev1.ResourceQuotaList{Items: values(s.ResourceQuotas, in)})
	w.logs(s, ns)
}

// podsNotRead reports whether the snapshot says it could not read the namespace's pods.
func podsNotRead(s *snapshot.Snapshot, ns string) bool {
	for _, v := range s.Visibility {
		if v.Kind == "Pod" && (v.Namespace == "" || v.Namespace == ns) {
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
			w.fail(fmt.Errorf("write dump: pod %s/%s: %w", ns, pod, err))
			return
		}
		var b strings.Builder
		for _, l := range byPod[pod] {
			if strings.ContainsAny(l.Container, " \t\r\n") {
				w.fail(fmt.Errorf("write dump: pod %s/%s: container name %q has white space", ns, pod, l.Container))
				return
			}
			_ = writeLog(&b, l) // a strings.Builder does not fail
		}
		w.file(filepath.Join(ns, pod, "logs.txt"), []byte(b.String()))
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
	for i := range items.Len() {
		data, err := json.MarshalIndent(items.Index(i).Addr().Interface(), indent, "    ")
		if err != nil {
			return err
		}
		sep := ",\n" + indent
		if i == 0 {
			sep = indent
		}
		if _, err := io.WriteString(out, sep); err != nil {
			return err
		}
		if _, err := out.Write(data); err != nil {
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

// stream creates the file name and writes it through a buffer with write.
func (w *writer) stream(name string, write func(io.Writer) error) {
	if w.err != nil {
		return
	}
	p := filepath.Join(w.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), dirMode); err != nil {
		w.fail(fmt.Errorf("write dump: %w", err))
		return
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fileMode)
	if err != nil {
		w.fail(fmt.Errorf("write dump: %w", err))
		return
	}
	// A file left by an earlier dump keeps its mode through O_TRUNC; --force must not keep it readable.
	err = f.Chmod(fileMode)
	if err == nil {
		b := bufio.NewWriterSize(f, 256<<10)
		if err = write(b); err == nil {
			err = b.Flush()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		w.fail(fmt.Errorf("write dump %q: %w", p, err))
	}
}

func (w *writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// values copies the objects of one namespace out of their pointers, with apiVersion and kind
// cleared as in a list the API server returns; the snapshot's objects are not touched.
func values[T any, P interface {
	*T
	metav1.Object
	runtime.Object
}](objs []P, keep func(metav1.Object) bool,
) []T {
	var out []T
	for _, o := range objs {
		if !keep(o) {
			continue
		}
		c := *o
		P(&c).GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
		out = append(out, c)
	}
	return out
}

// safeName rejects a namespace or pod name that would put a file outside the dump directory;
// the API server never produces one, but a hand-made dump can.
func safeName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return errors.New("not a valid name for a directory of the dump")
	}
	return nil
}

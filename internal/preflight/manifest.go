package preflight

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/boundedyaml"
)

// Stdin is the -f value that reads standard input.
const Stdin = "-"

// maxFileSize bounds one manifest file: far above any chart's output, far below what would
// exhaust memory.
const maxFileSize = 64 << 20

// manifestExtensions are the files a directory walk reads.
var manifestExtensions = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// Workload is one Deployment, StatefulSet or DaemonSet of the manifests.
type Workload struct {
	Kind, Namespace, Name string
	// Object is the *appsv1.Deployment, *appsv1.StatefulSet or *appsv1.DaemonSet.
	Object any
	// Template is the object's pod template.
	Template *corev1.PodTemplateSpec
	// Origin places the object in its file: "deploy.yaml:12" (the document's first line).
	Origin string
}

// Manifests is what the files hold that preflight reads: the workloads to check, and the
// objects applied beside them that change what the checks compare against.
type Manifests struct {
	Workloads []*Workload
	// Services, ServiceAccounts and Namespaces in the same stream are taken as applied with
	// the workloads: they replace (or add to) the cluster's.
	Services        []*corev1.Service
	ServiceAccounts []*corev1.ServiceAccount
	Namespaces      []*corev1.Namespace
	// ConfigMaps and Secrets in the stream, by metadata only: their data is never decoded.
	ConfigMaps, Secrets []Ref
	// Skipped counts the objects of other kinds, by kind.
	Skipped map[string]int
}

// InputError is a manifest that cannot be read; it names the file and the position.
type InputError struct {
	File string
	// Line is 1-based; 0 when the fault is the file as a whole.
	Line int
	Msg  string
}

func (e *InputError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Read reads the manifests of every path: a file, a directory (its *.yaml, *.yml and *.json
// files, recursively) or "-" for stdin. Objects without metadata.namespace get namespace.
func Read(paths []string, stdin io.Reader, namespace string) (*Manifests, error) {
	m := &Manifests{Skipped: map[string]int{}}
	for _, p := range paths {
		if err := m.readPath(p, stdin, namespace); err != nil {
			return nil, err
		}
	}
	if len(m.Workloads) == 0 {
		return nil, fmt.Errorf("no Deployment, StatefulSet or DaemonSet in %s", strings.Join(paths, ", "))
	}
	return m, nil
}

func (m *Manifests) readPath(p string, stdin io.Reader, namespace string) error {
	if p == Stdin {
		if stdin == nil {
			return errors.New("read manifests from stdin: no standard input")
		}
		return m.readFile("stdin", stdin, namespace)
	}
	info, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("read manifests: %w", err)
	}
	if !info.IsDir() {
		return m.openFile(p, namespace)
	}
	var files []string
	err = filepath.WalkDir(p, func(f string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("read manifests %q: %w", f, err)
		}
		hidden := f != p && strings.HasPrefix(d.Name(), ".")
		switch {
		case d.IsDir() && hidden:
			return filepath.SkipDir
		case !d.IsDir() && !hidden && manifestExtensions[strings.ToLower(filepath.Ext(f))]:
			files = append(files, f)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, f := range files {
		if err := m.openFile(f, namespace); err != nil {
			return err
		}
	}
	return nil
}

func (m *Manifests) openFile(name, namespace string) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("read manifests: %w", err)
	}
	defer func() { _ = f.Close() }() // read only
	return m.readFile(name, f, namespace)
}

func (m *Manifests) readFile(name string, r io.Reader, namespace string) error {
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return fmt.Errorf("read manifests %s: %w", name, err)
	}
	if len(data) > maxFileSize {
		return &InputError{File: name, Msg: fmt.Sprintf("larger than %d MiB", maxFileSize>>20)}
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return &InputError{File: name, Msg: "binary data, not YAML or JSON"}
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		return m.readJSON(name, data, namespace)
	}
	for _, doc := range splitYAML(data) {
		// A document's aliases may not expand it past what a file may hold.
		js, err := boundedyaml.ToJSON(doc.text, maxFileSize)
		var tl *boundedyaml.TooLargeError
		if errors.As(err, &tl) {
			return &InputError{File: name, Line: doc.line + tl.Line - 1, Msg: fmt.Sprintf(
				"aliases expand the document past %d MiB (each repeats its anchor's whole value)", maxFileSize>>20)}
		}
		if err != nil {
			return yamlError(name, doc.line, err)
		}
		if err := m.add(name, doc.line, js, namespace); err != nil {
			return err
		}
	}
	return nil
}

// readJSON reads a stream of JSON values: objects, Lists, or arrays of objects.
func (m *Manifests) readJSON(name string, data []byte, namespace string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		start := dec.InputOffset()
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			off := start
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				off = syn.Offset
			}
			return &InputError{File: name, Line: lineAt(data, off), Msg: "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")}
		}
		line := lineAt(data, start+int64(len(data[start:])-len(bytes.TrimLeft(data[start:], " \t\r\n"))))
		var items []json.RawMessage
		if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '[' {
			if err := json.Unmarshal(raw, &items); err != nil {
				return &InputError{File: name, Line: line, Msg: "invalid JSON array: " + err.Error()}
			}
		} else {
			items = []json.RawMessage{raw}
		}
		for _, it := range items {
			if err := m.add(name, line, it, namespace); err != nil {
				return err
			}
		}
	}
}

// yamlLine finds the line number go-yaml puts in its messages.
var yamlLine = regexp.MustCompile(`line (\d+)`)

// yamlError places a YAML syntax error in the file: go-yaml counts lines from the document's
// start.
func yamlError(name string, docLine int, err error) error {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	line := docLine
	if sm := yamlLine.FindStringSubmatchIndex(msg); sm != nil {
		n, _ := strconv.Atoi(msg[sm[2]:sm[3]])
		line = docLine + n - 1
		msg = strings.TrimSpace(strings.TrimPrefix(msg[:sm[0]]+msg[sm[1]:], "yaml: "))
		msg = strings.TrimPrefix(msg, ": ")
	}
	return &InputError{File: name, Line: line, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

// yamlDoc is one document of a YAML stream and the line it starts on.
type yamlDoc struct {
	text []byte
	line int
}

// splitYAML cuts a stream at its "---" lines.
func splitYAML(data []byte) []yamlDoc {
	var docs []yamlDoc
	start, startLine := 0, 1
	line := 1
	for i := 0; i <= len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		next := len(data) + 1
		if end >= 0 {
			next = i + end + 1
		}
		l := data[i:min(next, len(data))]
		if isSeparator(l) {
			docs = append(docs, yamlDoc{text: data[start:i], line: startLine})
			start, startLine = min(next, len(data)), line+1
		}
		i = next
		line++
	}
	docs = append(docs, yamlDoc{text: data[start:], line: startLine})
	return docs
}

// isSeparator is a "---" line, with an optional comment or document content after it.
func isSeparator(l []byte) bool {
	l = bytes.TrimRight(l, "\r\n")
	if !bytes.HasPrefix(l, []byte("---")) {
		return false
	}
	rest := l[3:]
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t'
}

func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// typeMeta is what an object says it is.
type typeMeta struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
}

// add decodes one object (or the items of a List) into the manifests.
func (m *Manifests) add(file string, line int, js []byte, namespace string) error {
	if t := bytes.TrimSpace(js); len(t) == 0 || string(t) == "null" {
		return nil // an empty document, such as a template that rendered nothing
	}
	var tm typeMeta
	if err := json.Unmarshal(js, &tm); err != nil {
		return &InputError{File: file, Line: line, Msg: "not a Kubernetes object: " + err.Error()}
	}
	origin := fmt.Sprintf("%s:%d", file, line)
	if strings.HasSuffix(tm.Kind, "List") && tm.Items != nil {
		for _, it := range tm.Items {
			if err := m.add(file, line, it, namespace); err != nil {
				return err
			}
		}
		return nil
	}
	if tm.Kind == "" || tm.APIVersion == "" {
		return &InputError{File: file, Line: line, Msg: "object without apiVersion and kind"}
	}
	decode := func(into any) error {
		if err := json.Unmarshal(js, into); err != nil {
			return &InputError{File: file, Line: line, Msg: fmt.Sprintf("invalid %s: %s", tm.Kind, err)}
		}
		return nil
	}
	ns := func(s *string) {
		if *s == "" {
			*s = namespace
		}
	}
	switch {
	case tm.APIVersion == "apps/v1" && tm.Kind == "Deployment":
		var d appsv1.Deployment
		if err := decode(&d); err != nil {
			return err
		}
		ns(&d.Namespace)
		m.Workloads = append(m.Workloads, &Workload{Kind: tm.Kind, Namespace: d.Namespace, Name: d.Name, Object: &d, Template: &d.Spec.Template, Origin: origin})
	case tm.APIVersion == "apps/v1" && tm.Kind == "StatefulSet":
		var s appsv1.StatefulSet
		if err := decode(&s); err != nil {
			return err
		}
		ns(&s.Namespace)
		m.Workloads = append(m.Workloads, &Workload{Kind: tm.Kind, Namespace: s.Namespace, Name: s.Name, Object: &s, Template: &s.Spec.Template, Origin: origin})
	case tm.APIVersion == "apps/v1" && tm.Kind == "DaemonSet":
		var d appsv1.DaemonSet
		if err := decode(&d); err != nil {
			return err
		}
		ns(&d.Namespace)
		m.Workloads = append(m.Workloads, &Workload{Kind: tm.Kind, Namespace: d.Namespace, Name: d.Name, Object: &d, Template: &d.Spec.Template, Origin: origin})
	case tm.APIVersion == "v1" && tm.Kind == "Service":
		var s corev1.Service
		if err := decode(&s); err != nil {
			return err
		}
		ns(&s.Namespace)
		m.Services = append(m.Services, &s)
	case tm.APIVersion == "v1" && tm.Kind == "ServiceAccount":
		var s corev1.ServiceAccount
		if err := decode(&s); err != nil {
			return err
		}
		ns(&s.Namespace)
		m.ServiceAccounts = append(m.ServiceAccounts, &s)
	case tm.APIVersion == "v1" && tm.Kind == "Namespace":
		var n corev1.Namespace
		if err := decode(&n); err != nil {
			return err
		}
		m.Namespaces = append(m.Namespaces, &n)
	case tm.APIVersion == "v1" && (tm.Kind == "ConfigMap" || tm.Kind == "Secret"):
		var meta struct {
			Metadata struct{ Name, Namespace string } `json:"metadata"`
		}
		if err := decode(&meta); err != nil {
			return err
		}
		ns(&meta.Metadata.Namespace)
		ref := Ref{Namespace: meta.Metadata.Namespace, Name: meta.Metadata.Name}
		if tm.Kind == "Secret" {
			m.Secrets = append(m.Secrets, ref)
		} else {
			m.ConfigMaps = append(m.ConfigMaps, ref)
		}
	default:
		m.Skipped[tm.Kind]++
	}
	return nil
}

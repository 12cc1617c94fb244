package redact

import (
	"encoding/json"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Credential says whether an env var's value is a credential by its name (CredentialName), and
// the value is not one a weak name leaves shown (a setting, an address).
func Credential(name, value string) bool { return hidden(classify(name), value) }

// argCredential says whether args[i] is a credential: the value of a credential flag given
// as the next argument (--password hunter2).
func argCredential(args []string, i int) bool {
	if i == 0 || strings.HasPrefix(args[i], "-") {
		return false
	}
	flag := args[i-1]
	if !strings.HasPrefix(flag, "-") || strings.ContainsRune(flag, '=') {
		return false
	}
	return hidden(classify(strings.TrimLeft(flag, "-")), args[i])
}

// workload is what the pass knows of one workload: its current pod spec, for reading a path's
// env var or argument, whether any of its fields is a credential by its name (else no path
// needs reading), and the credentials its specs (current and older revisions) hold, to look for
// in free text.
type workload struct {
	spec   *corev1.PodSpec
	fields bool
	known  []string
}

// collect adds to set the credentials spec holds (the values of credential env vars and flags,
// and the passwords of URLs and credential pairs inside any env value or argument) and says
// whether spec has a field that is a credential by its name.
func collect(set knownSet, spec *corev1.PodSpec) (fields bool) {
	if spec == nil {
		return false
	}
	add := func(v string) {
		if distinctive(v) {
			set.add(v)
		}
	}
	fromText := func(s string) {
		for _, sp := range findSpans(s, nil) {
			add(s[sp.start:sp.end])
		}
	}
	each := func(cs []corev1.Container) {
		for i := range cs {
			c := &cs[i]
			for _, e := range c.Env {
				if Credential(e.Name, e.Value) {
					fields = true
					add(e.Value)
				} else if e.Value != "" {
					fromText(e.Value)
				}
			}
			for _, args := range [][]string{c.Command, c.Args} {
				for j, a := range args {
					if argCredential(args, j) {
						fields = true
						add(a)
					} else {
						fromText(a)
					}
				}
			}
		}
	}
	each(spec.InitContainers)
	each(spec.Containers)
	return fields
}

// knownSet is a set of credentials, its map made when the first is added: most workloads
// have none.
type knownSet struct{ m *map[string]bool }

func (k knownSet) add(v string) {
	if *k.m == nil {
		*k.m = map[string]bool{}
	}
	(*k.m)[v] = true
}

// sortedKnown lists a set longest first, so that a value inside another is replaced after it.
func sortedKnown(set knownSet) []string {
	if *set.m == nil {
		return nil
	}
	out := make([]string, 0, len(*set.m))
	for v := range *set.m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i] < out[j]
	})
	return out
}

// objectKey names a workload.
type objectKey struct{ kind, namespace, name string }

// object is a workload's object as the pass reads it: its current revision, whose template is
// the object's own, is named so that its copy is not read twice (a Deployment's revision
// annotation, a StatefulSet's update revision; a DaemonSet's is its newest).
type object struct {
	uid     types.UID
	spec    *corev1.PodSpec
	current string
}

// workloads finds the workloads of a snapshot, a kind's index built when a workload of the
// kind is first asked for, once per pass.
type workloads struct {
	s       *snapshot.Snapshot
	objects map[string]map[objectKey]object
}

// revisionAnnotation is the Deployment controller's revision number on a Deployment and its
// ReplicaSets.
const revisionAnnotation = "deployment.kubernetes.io/revision"

func (ws *workloads) find(kind, namespace, name string) *workload {
	if ws.s == nil {
		return &workload{}
	}
	o, ok := ws.of(kind)[objectKey{kind, namespace, name}]
	if !ok {
		return &workload{}
	}
	var m map[string]bool
	set := knownSet{&m}
	fields := collect(set, o.spec)
	// Its older revisions: the previous values a diff or a suspect quotes, and what copies of
	// an older revision still run with.
	switch kind {
	case "Deployment":
		for _, rs := range ws.s.ReplicaSetsOwnedBy(o.uid) {
			if o.current == "" || rs.Annotations[revisionAnnotation] != o.current {
				collect(set, &rs.Spec.Template.Spec)
			}
		}
	case "StatefulSet", "DaemonSet":
		crs := ws.s.ControllerRevisionsOwnedBy(o.uid) // oldest first
		for i, cr := range crs {
			if cr.Name == o.current || kind == "DaemonSet" && i == len(crs)-1 {
				continue
			}
			collect(set, revisionSpec(cr))
		}
	case "CronJob":
		for _, j := range ws.s.JobsOwnedBy(o.uid) {
			collect(set, &j.Spec.Template.Spec)
		}
	}
	return &workload{spec: o.spec, fields: fields, known: sortedKnown(set)}
}

// currentRevision names the revision of a Deployment or StatefulSet whose template the object
// holds, as find tells it among the older ones; "" for the other kinds.
func currentRevision(o runtime.Object) string {
	switch o := o.(type) {
	case *appsv1.Deployment:
		return o.Annotations[revisionAnnotation]
	case *appsv1.StatefulSet:
		return o.Status.UpdateRevision
	}
	return ""
}

// of returns the index of one kind's objects.
func (ws *workloads) of(kind string) map[objectKey]object {
	if m, ok := ws.objects[kind]; ok {
		return m
	}
	var m map[objectKey]object
	if sk, wk := snapshot.KindNamed(kind), kinds.Named(kind); sk != nil && wk != nil {
		m = make(map[objectKey]object, sk.Len(ws.s))
		sk.Each(ws.s, func(o runtime.Object) {
			mo := o.(metav1.Object)
			m[objectKey{kind, mo.GetNamespace(), mo.GetName()}] = object{mo.GetUID(), &wk.Template(o).Spec, currentRevision(o)}
		})
	}
	if ws.objects == nil {
		ws.objects = map[string]map[objectKey]object{}
	}
	ws.objects[kind] = m
	return m
}

// revisionSpec decodes what the pass reads of the pod spec a ControllerRevision holds (the
// StatefulSet and DaemonSet controllers store {"spec":{"template":{...}}}): the containers'
// env, command and args. Decoding the whole template cost more than the rest of the pass.
func revisionSpec(cr *appsv1.ControllerRevision) *corev1.PodSpec {
	raw := cr.Data.Raw
	if raw == nil && cr.Data.Object != nil {
		var err error
		if raw, err = json.Marshal(cr.Data.Object); err != nil {
			return nil
		}
	}
	type container struct {
		Env     []corev1.EnvVar `json:"env"`
		Command []string        `json:"command"`
		Args    []string        `json:"args"`
	}
	var data struct {
		Spec struct {
			Template struct {
				Spec struct {
					InitContainers []container `json:"initContainers"`
					Containers     []container `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if raw == nil || json.Unmarshal(raw, &data) != nil {
		return nil
	}
	spec := &corev1.PodSpec{}
	for _, c := range data.Spec.Template.Spec.InitContainers {
		spec.InitContainers = append(spec.InitContainers, corev1.Container{Env: c.Env, Command: c.Command, Args: c.Args})
	}
	for _, c := range data.Spec.Template.Spec.Containers {
		spec.Containers = append(spec.Containers, corev1.Container{Env: c.Env, Command: c.Command, Args: c.Args})
	}
	return spec
}

// atPath says whether the template field a path names holds a credential by its name: an env
// var's value (env[i].value, with the var named in spec) or the argument after a credential flag
// (args[i], command[i]). The path is a suspect's or a change's steps:
// ...containers[0].env[3].value.
func atPath(spec *corev1.PodSpec, path []fieldpath.Segment, value string) bool {
	if spec == nil || len(path) == 0 {
		return false
	}
	cs, rest := containerOf(spec, path)
	if cs == nil || len(rest) == 0 {
		return false
	}
	idx, ok := rest[0].Index()
	if !ok {
		return false
	}
	name, tail := rest[0].Name, rest[1:]
	switch {
	case name == "env" && (len(tail) == 0 || len(tail) == 1 && tail[0] == fieldpath.Segment{Name: "value"}):
		if idx < len(cs.Env) {
			return Credential(cs.Env[idx].Name, value) || len(tail) == 0 && Credential(cs.Env[idx].Name, cs.Env[idx].Value)
		}
	case name == "args" && len(tail) == 0:
		return idx < len(cs.Args) && argCredential(cs.Args, idx)
	case name == "command" && len(tail) == 0:
		return idx < len(cs.Command) && argCredential(cs.Command, idx)
	}
	return false
}

// containerOf finds the container a path goes through (the last containers[i] or
// initContainers[i] step), and the steps after it.
func containerOf(spec *corev1.PodSpec, path []fieldpath.Segment) (*corev1.Container, []fieldpath.Segment) {
	for i := len(path) - 1; i >= 0; i-- {
		var list []corev1.Container
		switch path[i].Name {
		case "containers":
			list = spec.Containers
		case "initContainers":
			list = spec.InitContainers
		default:
			continue
		}
		idx, ok := path[i].Index()
		if !ok || idx >= len(list) {
			return nil, nil
		}
		return &list[idx], path[i+1:]
	}
	return nil, nil
}

package metamorph

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Workload names a workload of a snapshot.
type Workload struct {
	Kind, Namespace, Name string
}

func (w Workload) String() string { return w.Kind + " " + w.Namespace + "/" + w.Name }

// meta returns the workload's object metadata, or nil when the snapshot does not hold it.
func (w Workload) meta(s *snapshot.Snapshot) *metav1.ObjectMeta {
	find := func(m *metav1.ObjectMeta) *metav1.ObjectMeta {
		if m.Namespace == w.Namespace && m.Name == w.Name {
			return m
		}
		return nil
	}
	switch w.Kind {
	case "Deployment":
		for _, o := range s.Deployments {
			if m := find(&o.ObjectMeta); m != nil {
				return m
			}
		}
	case "StatefulSet":
		for _, o := range s.StatefulSets {
			if m := find(&o.ObjectMeta); m != nil {
				return m
			}
		}
	case "DaemonSet":
		for _, o := range s.DaemonSets {
			if m := find(&o.ObjectMeta); m != nil {
				return m
			}
		}
	case "ReplicaSet":
		for _, o := range s.ReplicaSets {
			if m := find(&o.ObjectMeta); m != nil {
				return m
			}
		}
	case "Job":
		for _, o := range s.Jobs {
			if m := find(&o.ObjectMeta); m != nil {
				return m
			}
		}
	case "CronJob":
		for _, o := range s.CronJobs {
			if m := find(&o.ObjectMeta); m != nil {
				return m
			}
		}
	}
	return nil
}

func (w Workload) deployment(s *snapshot.Snapshot) *appsv1.Deployment {
	for _, d := range s.Deployments {
		if w.Kind == "Deployment" && d.Namespace == w.Namespace && d.Name == w.Name {
			return d
		}
	}
	return nil
}

func ownedBy(m metav1.Object, uid types.UID) bool {
	for _, o := range m.GetOwnerReferences() {
		if o.UID == uid {
			return true
		}
	}
	return false
}

// ReplicaSets returns a Deployment's ReplicaSets, oldest revision first.
func (w Workload) ReplicaSets(s *snapshot.Snapshot) []*appsv1.ReplicaSet {
	d := w.deployment(s)
	if d == nil {
		return nil
	}
	var out []*appsv1.ReplicaSet
	for _, rs := range s.ReplicaSets {
		if rs.Namespace == d.Namespace && ownedBy(rs, d.UID) {
			out = append(out, rs)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return revisionOf(out[i]) < revisionOf(out[j]) })
	return out
}

func revisionOf(rs *appsv1.ReplicaSet) int {
	n, _ := strconv.Atoi(rs.Annotations["deployment.kubernetes.io/revision"])
	return n
}

// Pods returns the workload's copies: its own pods, its ReplicaSets' or its Jobs'.
func (w Workload) Pods(s *snapshot.Snapshot) []*corev1.Pod {
	m := w.meta(s)
	if m == nil {
		return nil
	}
	owners := map[types.UID]bool{m.UID: true}
	for _, rs := range s.ReplicaSets {
		if ownedBy(rs, m.UID) {
			owners[rs.UID] = true
		}
	}
	for _, j := range s.Jobs {
		if ownedBy(j, m.UID) {
			owners[j.UID] = true
		}
	}
	var out []*corev1.Pod
	for _, p := range s.Pods {
		if p.Namespace != w.Namespace {
			continue
		}
		for _, o := range p.OwnerReferences {
			if owners[o.UID] {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// ChangedFields lists the template fields the workload's newest revision changed from the one
// before it, as field paths from the workload's own root (spec.template...), or nil when the
// snapshot holds a single revision or cannot tell. Deployments' revisions are their
// ReplicaSets, StatefulSets' and DaemonSets' their ControllerRevisions, CronJobs' their Jobs.
func ChangedFields(s *snapshot.Snapshot, w Workload) []string {
	var prefix string
	var old, cur any
	switch w.Kind {
	case "Deployment":
		rss := w.ReplicaSets(s)
		if len(rss) < 2 {
			return nil
		}
		strip := func(t corev1.PodTemplateSpec) corev1.PodTemplateSpec {
			t = *t.DeepCopy()
			delete(t.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
			return t
		}
		prefix, old, cur = "spec.template", strip(rss[len(rss)-2].Spec.Template), strip(rss[len(rss)-1].Spec.Template)
	case "StatefulSet", "DaemonSet":
		m := w.meta(s)
		if m == nil {
			return nil
		}
		var crs []*appsv1.ControllerRevision
		for _, cr := range s.ControllerRevisions {
			if cr.Namespace == w.Namespace && ownedBy(cr, m.UID) {
				crs = append(crs, cr)
			}
		}
		if len(crs) < 2 {
			return nil
		}
		sort.Slice(crs, func(i, j int) bool { return crs[i].Revision < crs[j].Revision })
		tmpl := func(cr *appsv1.ControllerRevision) any {
			var v struct {
				Spec struct {
					Template any `json:"template"`
				} `json:"spec"`
			}
			_ = json.Unmarshal(cr.Data.Raw, &v) // an unreadable revision compares as empty
			return v.Spec.Template
		}
		prefix, old, cur = "spec.template", tmpl(crs[len(crs)-2]), tmpl(crs[len(crs)-1])
	case "CronJob":
		m := w.meta(s)
		if m == nil {
			return nil
		}
		var jobs []corev1.PodTemplateSpec
		var times []metav1.Time
		for _, j := range s.Jobs {
			if j.Namespace == w.Namespace && ownedBy(j, m.UID) {
				t := *j.Spec.Template.DeepCopy()
				// The Job controller labels each Job's pods with the Job's name and UID.
				t.Labels = nil
				jobs, times = append(jobs, t), append(times, j.CreationTimestamp)
			}
		}
		if len(jobs) < 2 {
			return nil
		}
		idx := make([]int, len(jobs))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return times[idx[a]].Before(&times[idx[b]]) })
		prefix, old, cur = "spec.jobTemplate.spec.template", jobs[idx[len(idx)-2]], jobs[idx[len(idx)-1]]
	default:
		return nil
	}
	var out []string
	diffJSON(prefix, toJSON(old), toJSON(cur), &out)
	slices.Sort(out)
	return out
}

func toJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	_ = json.Unmarshal(b, &out) // marshalled just above
	return out
}

// diffJSON appends the paths at which a and b differ: a changed leaf, or an element or key
// that one has and the other not.
func diffJSON(path string, a, b any, out *[]string) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			*out = append(*out, path)
			return
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		for k := range keys {
			if k == "$patch" || k == "creationTimestamp" {
				continue
			}
			diffJSON(childPath(path, k), av[k], bv[k], out)
		}
	case []any:
		bv, ok := b.([]any)
		if !ok {
			*out = append(*out, path)
			return
		}
		for i := 0; i < max(len(av), len(bv)); i++ {
			var x, y any
			if i < len(av) {
				x = av[i]
			}
			if i < len(bv) {
				y = bv[i]
			}
			diffJSON(path+"["+strconv.Itoa(i)+"]", x, y, out)
		}
	default:
		if toString(a) != toString(b) {
			*out = append(*out, path)
		}
	}
}

func toString(v any) string {
	b, _ := json.Marshal(v) // JSON values marshal
	return string(b)
}

// childPath writes a key as field.Path does: .name for a field, [key] for a map key that is
// not one.
func childPath(path, k string) string {
	if k != "" && strings.IndexFunc(k, func(r rune) bool {
		return r != '_' && (r < '0' || r > '9') && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z')
	}) < 0 {
		return path + "." + k
	}
	return path + "[" + k + "]"
}

// Related reports whether two field paths name the same field or one holds the other, with
// map keys read as fields (requests[cpu] and requests.cpu are one field).
func Related(a, b string) bool {
	a, b = keysAsFields(a), keysAsFields(b)
	return a == b || strings.HasPrefix(a, b+".") || strings.HasPrefix(a, b+"[") ||
		strings.HasPrefix(b, a+".") || strings.HasPrefix(b, a+"[")
}

// keysAsFields writes every non-numeric [key] as .key.
func keysAsFields(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] != '[' {
			b.WriteByte(p[i])
			continue
		}
		j := strings.IndexByte(p[i:], ']')
		if j < 0 {
			b.WriteString(p[i:])
			break
		}
		key := p[i+1 : i+j]
		if _, err := strconv.Atoi(key); err == nil {
			b.WriteString(p[i : i+j+1])
		} else {
			b.WriteString("." + key)
		}
		i += j
	}
	return b.String()
}

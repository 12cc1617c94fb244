package report

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// LabelFunc returns a workload's labels, nil when unknown. The table printer writes them for
// --show-labels and -L.
type LabelFunc func(kind, namespace, name string) map[string]string

// LabelsOf resolves the labels of the workloads of the snapshot a report was made of.
func LabelsOf(s *snapshot.Snapshot) LabelFunc {
	type key struct{ kind, namespace, name string }
	m := map[key]map[string]string{}
	for i := range snapshot.Kinds {
		k := &snapshot.Kinds[i]
		if !k.Workload {
			continue
		}
		k.Each(s, func(o runtime.Object) {
			if a, err := meta.Accessor(o); err == nil {
				m[key{k.Kind, a.GetNamespace(), a.GetName()}] = a.GetLabels()
			}
		})
	}
	return func(kind, namespace, name string) map[string]string { return m[key{kind, namespace, name}] }
}

// labelHeaders are the table's label columns, as kubectl get names them: a column per -L key,
// titled with its last path segment in capitals, then LABELS for --show-labels.
func (o Options) labelHeaders() []string {
	var out []string
	for _, k := range o.LabelColumns {
		parts := strings.Split(k, "/")
		out = append(out, strings.ToUpper(parts[len(parts)-1]))
	}
	if o.ShowLabels {
		out = append(out, "LABELS")
	}
	return out
}

// labelCells are a workload's cells of the label columns, as kubectl get writes them: the value
// of each -L key (empty when unset), then every label as k=v,... or <none>.
func (o Options) labelCells(labelsOf LabelFunc, d *diagnose.Diagnosis) []string {
	if len(o.LabelColumns) == 0 && !o.ShowLabels {
		return nil
	}
	var ls map[string]string
	if labelsOf != nil {
		ls = labelsOf(d.Kind, d.Namespace, d.Name)
	}
	out := make([]string, 0, len(o.LabelColumns)+1)
	for _, k := range o.LabelColumns {
		out = append(out, ls[k])
	}
	if o.ShowLabels {
		out = append(out, labels.FormatLabels(ls))
	}
	return out
}

package metamorph

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Clone deep-copies every object, log tail and metric series of s, kind by kind over
// snapshot.Kinds, so a kind added there is copied too. The copy has no index: the engine builds
// one from the changed objects.
func Clone(s *snapshot.Snapshot) *snapshot.Snapshot {
	c := &snapshot.Snapshot{
		ReferenceTime: s.ReferenceTime,
		Namespaces:    slices.Clone(s.Namespaces),
		Source:        s.Source,
		Visibility:    slices.Clone(s.Visibility),
	}
	if s.Source.Skipped != nil {
		c.Source.Skipped = make(map[string]int, len(s.Source.Skipped))
		for k, v := range s.Source.Skipped {
			c.Source.Skipped[k] = v
		}
	}
	for i := range snapshot.Kinds {
		k := &snapshot.Kinds[i]
		var objs []runtime.Object
		k.Each(s, func(o runtime.Object) { objs = append(objs, o.DeepCopyObject()) })
		k.Add(c, objs)
	}
	for _, l := range s.Logs {
		l.Lines = slices.Clone(l.Lines)
		c.Logs = append(c.Logs, l)
	}
	if s.Metrics != nil {
		m := *s.Metrics
		m.Series = slices.Clone(m.Series)
		for i := range m.Series {
			m.Series[i].Result = slices.Clone(m.Series[i].Result)
			m.Series[i].Samples = slices.Clone(m.Series[i].Samples)
		}
		c.Metrics = &m
	}
	return c
}

package live

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// WorkloadNames lists the names of one kind's objects (Kind as in the kinds table, e.g.
// "Deployment") in the source's namespaces, sorted, for shell completion. It reads one page from
// the watch cache: a suggestion needs neither every name of a huge namespace nor a consistent read.
func (s *Source) WorkloadNames(ctx context.Context, kindName string) ([]string, error) {
	var k *kind
	for i := range kinds {
		if kinds[i].Kind == kindName {
			k = &kinds[i]
		}
	}
	if k == nil {
		return nil, fmt.Errorf("unknown kind %q", kindName)
	}
	namespaces := s.namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	var names []string
	for _, ns := range namespaces {
		list, err := k.list(s.client, ns)(ctx, k.listOptions(s.opts.Selector, metav1.ListOptions{ResourceVersion: "0", Limit: 500}))
		if err != nil {
			return nil, s.fatal(err)
		}
		if err := meta.EachListItem(list, func(o runtime.Object) error {
			if m, err := meta.Accessor(o); err == nil {
				names = append(names, m.GetName())
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	sort.Strings(names)
	return names, nil
}

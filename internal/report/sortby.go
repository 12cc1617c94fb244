package report

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/util/jsonpath"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// CheckSortBy accepts a --sort-by: one of SortKeys, or a JSONPath into a workload of -o json's
// document, written as kubectl's --sort-by takes it ('{.counts.serving}' or '.counts.serving').
func CheckSortBy(key string) error {
	if key == "" || contains(SortKeys, key) {
		return nil
	}
	if !strings.HasPrefix(key, ".") && !strings.HasPrefix(key, "{") {
		return fmt.Errorf("unknown --sort-by %q; use one of %s, or a JSONPath such as '{.counts.serving}'", key, strings.Join(SortKeys, ", "))
	}
	_, err := sortPath(key)
	return err
}

func sortPath(key string) (*jsonpath.JSONPath, error) {
	expr, err := relaxedJSONPath(key)
	if err != nil {
		return nil, fmt.Errorf("--sort-by: %w", err)
	}
	jp := jsonpath.New("sort-by").AllowMissingKeys(true)
	if err := jp.Parse(expr); err != nil {
		return nil, fmt.Errorf("--sort-by %s: %w", key, err)
	}
	return jp, nil
}

// sortByJSONPath orders ds by the value the path finds in each workload of -o json's document,
// as kubectl's --sort-by orders a list: ascending, numbers as numbers, strings that are both
// quantities as quantities, a workload without the field (or with null) first; ties keep the
// order of ds. A
// path found in no workload is an error, as kubectl's is.
func sortByJSONPath(ds []*diagnose.Diagnosis, key string) ([]*diagnose.Diagnosis, error) {
	jp, err := sortPath(key)
	if err != nil {
		return nil, err
	}
	values := make(map[*diagnose.Diagnosis]any, len(ds))
	found := false
	for _, d := range ds {
		obj, err := toUnstructured(normalizeDiagnosis(*d))
		if err != nil {
			return nil, err
		}
		results, err := jp.FindResults(obj)
		if err != nil || len(results) == 0 || len(results[0]) == 0 {
			continue
		}
		v := results[0][0]
		if v.Kind() == reflect.Interface && !v.IsNil() {
			v = v.Elem()
		}
		values[d] = v.Interface()
		found = true
	}
	if !found && len(ds) > 0 {
		return nil, fmt.Errorf("--sort-by: couldn't find any field with path %q in the workloads", key)
	}
	var sortErr error
	sort.SliceStable(ds, func(i, j int) bool {
		// A null (a workload without copies has no youngestCopySeconds) orders as a missing field.
		a, b := values[ds[i]], values[ds[j]]
		if a == nil || b == nil {
			return a == nil && b != nil
		}
		less, err := jsonLess(a, b)
		if err != nil && sortErr == nil {
			sortErr = fmt.Errorf("--sort-by %s: %w", key, err)
		}
		return less
	})
	return ds, sortErr
}

// jsonLess orders two values of a decoded JSON document as kubectl's sorter orders them.
func jsonLess(a, b any) (bool, error) {
	switch x := a.(type) {
	case float64:
		if y, ok := b.(float64); ok {
			return x < y, nil
		}
	case int64:
		if y, ok := b.(int64); ok {
			return x < y, nil
		}
	case string:
		if y, ok := b.(string); ok {
			qx, errx := resource.ParseQuantity(x)
			qy, erry := resource.ParseQuantity(y)
			if errx == nil && erry == nil {
				return qx.Cmp(qy) < 0, nil
			}
			return x < y, nil
		}
	}
	return false, fmt.Errorf("cannot order %T against %T; pick a field holding numbers or strings", a, b)
}
